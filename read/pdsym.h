/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Symbol tables as perf builds them for the objects a perf.data maps:
 * ELF files (libelf; the symbols of a separate debug file when there is
 * one, demangled), perf maps (/tmp/perf-PID.map) and /proc/kallsyms.
 * Addresses are what perf calls map-relative: file offsets for ELF
 * objects, absolute addresses for perf maps and the kernel.  perf's rules
 * for aliases (one symbol per address, chosen as perf chooses) and for
 * symbols without a size (they end where the next one begins) are kept,
 * and where symbols overlap a lookup walks perf's tree (pdsymtree.c), so
 * a lookup names what perf script names.
 */
#ifndef JITPERF_PDSYM_H
#define JITPERF_PDSYM_H

#include <stddef.h>
#include <stdint.h>

struct pd_sym {
	uint64_t    start, end;    /* [start, end) */
	const char *name;
	uint8_t     bind;          /* STB_* */
	uint8_t     type;          /* STT_* */
	uint32_t    seq;           /* the order it was added in */
};

struct pd_strpool;
struct pd_symtree;
struct pd_gone;
struct pd_elf;

struct pd_symtab {
	struct pd_sym     *syms;   /* sorted by start once finished */
	size_t             n, cap;
	struct pd_strpool *pool;
	struct pd_elf     *elf;    /* an ELF file's table: its names are in it */
	uint32_t           added;  /* symbols added: the next one's seq */
	/*
	 * Where symbols overlap, perf's tree decides which one an address
	 * gets (read/pdsymtree.c): what the alias rule took out (in order,
	 * after the first erase_at were added) to replay it, then the tree
	 * and each of its nodes' (seqs') index in syms.  The tree is built by
	 * the first lookup that lands where symbols overlap (reach: how far
	 * the symbols before each one reach); other lookups find what it
	 * would find without it.
	 */
	struct pd_gone    *gone;
	size_t             ngone, gonecap;
	uint32_t           erase_at;
	struct pd_symtree *tree;
	uint32_t          *pos;
	uint64_t          *reach;  /* NULL: no tree to build */
};

void pd_symtab_free(struct pd_symtab *t);
/* Add one symbol (the name is copied); 0 or -ENOMEM. */
int pd_symtab_add(struct pd_symtab *t, uint64_t start, uint64_t size, int bind, int type,
		  const char *name, size_t namelen);
/* Sort, end symbols without a size, keep one symbol per address. */
void pd_symtab_finish(struct pd_symtab *t, int kallsyms);
/* The symbol holding addr, as perf's lookup finds it; NULL if none.  Not thread-safe. */
const struct pd_sym *pd_symtab_find(const struct pd_symtab *t, uint64_t addr);

/*
 * ELF: the symbols of symfile (.symtab, else .dynsym), placed at file
 * offsets through the program headers of runtime (the file that was
 * mapped; may be the same).  0, -ENOENT if there is no such file,
 * -EINVAL if it is not an ELF file with symbols.
 */
int pd_symtab_load_elf(struct pd_symtab *t, const char *symfile, const char *runtime);
/*
 * An ELF file opened once (pd_elf_open: NULL with errno, EINVAL if it is
 * not ELF) for its build id (its size, <= max, or 0 if it has none),
 * whether it has a .symtab (1) or only .dynsym (0), and its symbols.
 */
struct pd_elf *pd_elf_open(const char *path);
void pd_elf_close(struct pd_elf *f);
int pd_elf_file_build_id(struct pd_elf *f, uint8_t *id, size_t max);
int pd_elf_file_has_symtab(struct pd_elf *f);
/*
 * pd_symtab_load_elf of files open already: t keeps sym (the names point
 * into it; pd_symtab_free closes it, failed or not); rt (NULL: sym) stays
 * the caller's.
 */
int pd_symtab_load_elf_file(struct pd_symtab *t, struct pd_elf *sym, struct pd_elf *rt);
/* ELF in memory (the running process's vdso) */
int pd_symtab_load_elf_mem(struct pd_symtab *t, const void *image, size_t size);
/*
 * Open path for reading if it is a regular file, as perf reads them: a
 * perf.data names any path it likes, and a FIFO or a terminal would block
 * the reader.  A descriptor, or -1 with errno (EINVAL: not a regular file).
 */
int pd_open_regular(const char *path);
/* Build id of an ELF image: its size (<= max), 0 if it has none, -errno. */
int pd_elf_build_id_mem(const void *image, size_t size, uint8_t *id, size_t max);

/*
 * A perf map's "START SIZE name" lines, read and kept as perf keeps them
 * (read/perfmap_read.h): where entries overlap, a lookup names what perf's
 * tree names.  0, or -errno (-EINVAL: not a regular file).
 */
int pd_symtab_load_perfmap(struct pd_symtab *t, const char *path);

/*
 * /proc/kallsyms (or perf's saved copy): text and data symbols; a module's
 * symbols keep their "\t[module]" suffix, which pd_kallsyms_module() splits.
 */
int pd_symtab_load_kallsyms(struct pd_symtab *t, const char *path);
/*
 * The same, but only the symbols that name the naddrs addresses at addrs
 * (sorted, distinct) by perf's rules: a lookup of one of those addresses
 * finds what it finds in the whole table, others may not.  No address:
 * nothing is read.
 */
int pd_symtab_load_kallsyms_for(struct pd_symtab *t, const char *path, const uint64_t *addrs,
				size_t naddrs);
/* the module of a kallsyms symbol ("ext4" for "foo\t[ext4]"), NULL for the core kernel */
const char *pd_kallsyms_module(const char *name, size_t *len);
/* the symbol's name without its module */
size_t pd_kallsyms_namelen(const char *name);

/*
 * C++ demangling as perf does it (no parameters, no return type); NULL if
 * name is not mangled.  Free the result.
 */
char *pd_demangle(const char *name);

#endif /* JITPERF_PDSYM_H */
