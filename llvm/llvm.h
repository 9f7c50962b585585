/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal interfaces of libjitperf-llvm.  The C++ side (listener.cpp,
 * instrument.cpp) talks to LLVM; everything that reads the loaded object
 * (ELF sections and symbols, DWARF lines, .eh_frame) is C
 * and knows nothing of LLVM: it gets the object's bytes and the run-time
 * address of each of its sections.  Internal names start with jpl_.
 */
#ifndef JITPERF_LLVM_PRIVATE_H
#define JITPERF_LLVM_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "jitperf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define JPL_HIDDEN __attribute__((visibility("hidden")))

/*
 * llvm/arena.c: what reading one object allocates, given back at once by
 * jpl_arena_free.  The first block is the caller's (space, len: its stack);
 * jpl_alloc returns 16-byte aligned memory, NULL when malloc fails for a
 * block more; jpl_realloc grows the newest allocation in place when it can.
 * A zeroed arena, and one given back, allocate from malloc'ed blocks.
 */
struct jpl_arena {
	unsigned char *p, *end;         /* the room left in the current block */
	void          *last;            /* the newest allocation */
	struct block  *blocks;          /* the malloc'ed ones */
};

JPL_HIDDEN void  jpl_arena_init(struct jpl_arena *a, void *space, size_t len);
JPL_HIDDEN void *jpl_alloc(struct jpl_arena *a, size_t n);
JPL_HIDDEN void *jpl_realloc(struct jpl_arena *a, void *old, size_t old_n, size_t n);
JPL_HIDDEN void  jpl_arena_free(struct jpl_arena *a);

/* A function symbol of a loaded object, ready for jitperf_code_load_ex. */
struct jpl_func {
	const char          *name;          /* in the object's string table */
	uint64_t             addr;          /* run-time address */
	uint64_t             len;
	struct jitperf_line *lines;         /* absolute addresses, inside the code */
	size_t               nlines;
	unsigned char       *eh_frame;      /* by the convention of jitperf.h, or NULL */
	size_t               eh_frame_len;
};

struct jpl_lines;

struct jpl_object {
	/* in: a relocatable ELF object as the JIT compiled it */
	const unsigned char *image;
	size_t               size;
	const uint64_t      *sec_addr;      /* run-time address by ELF section index, 0 = not loaded */
	size_t               nsec;
	int                  want_lines;    /* read DWARF lines */
	int                  want_unwind;   /* cut each function's .eh_frame out */
	struct jpl_arena    *arena;         /* where everything out is allocated */
	/* out */
	struct jpl_func     *funcs;
	size_t               nfuncs;
	uint64_t             eh_frame_addr; /* the loaded .eh_frame (0: none), in any case */
	size_t               eh_frame_len;
};

/*
 * llvm/object.c: fill o->funcs with every defined, sized function symbol of
 * the object, with source lines and .eh_frame where asked for and present.
 * Errors: -ENOEXEC (not a 64-bit little-endian relocatable ELF object),
 * -ENOMEM.  Missing or unreadable DWARF or .eh_frame is not an error: the
 * functions come without lines or unwind info.  What o->funcs holds lives
 * in o->arena.
 */
JPL_HIDDEN int jpl_object_read(struct jpl_object *o);

/*
 * llvm/reloc.c: the RELA relocations of the image's non-loaded (debug)
 * section target applied to out, a copy of its bytes (or the bytes
 * themselves), with the run-time section addresses, so that DWARF readers
 * see final addresses and offsets: jpl_relocated applies those of every
 * RELA section of target, jpl_relocate those of RELA section rela (none
 * when it is not a readable RELA section of a non-loaded section).  Both
 * return the number applied or -ENOEXEC (unknown machine).
 */
JPL_HIDDEN int jpl_relocated(const unsigned char *img, size_t size, unsigned target,
			     unsigned char *out, const uint64_t *sec_addr, size_t nsec);
JPL_HIDDEN int jpl_relocate(const unsigned char *img, size_t size, unsigned rela,
			    unsigned char *out, const uint64_t *sec_addr, size_t nsec);

/* The DWARF sections the line tables are read from (NULL: absent). */
struct jpl_dwarf_sections {
	const unsigned char *info, *abbrev, *line, *str, *line_str, *str_offsets;
	size_t               info_len, abbrev_len, line_len, str_len, line_str_len,
			     str_offsets_len;
};

/*
 * llvm/object.c: the DWARF sections of an ELF image, as they are in it (all
 * NULL when it is not an ELF object jpl_object_read reads).
 */
JPL_HIDDEN void jpl_dwarf_sections_of(const unsigned char *img, size_t size,
				      struct jpl_dwarf_sections *s);

struct jpl_line_row {
	uint64_t    addr;
	const char *file;               /* in the arena of jpl_line_rows */
	uint32_t    line;
	uint32_t    discrim;
	int         end_sequence;
};

struct jpl_line_rows {
	struct jpl_line_row *v;
	size_t               n, cap;
	struct jpl_arena    *arena;     /* the rows, and the file names they point to */
};

/*
 * llvm/debugline.c: every row of every line table of the compilation units
 * of s (relocated), in the order of the tables.  File names are absolute
 * when the unit's compilation directory is.  Errors: -ENODATA (no
 * .debug_info or .debug_line), -EINVAL (a unit or table that cannot be
 * read: its rows are left out, those of the others are in *r), -ENOMEM.
 * The rows and file names are allocated in a, in every case.
 */
JPL_HIDDEN int jpl_debugline_read(struct jpl_line_rows *r, const struct jpl_dwarf_sections *s,
				  struct jpl_arena *a);

/*
 * llvm/lines.c: the DWARF line tables of relocated debug sections, read by
 * llvm/debugline.c.  jpl_lines_open keeps what it needs (rows and file
 * names): the sections may go once it returns; -ENODATA without line
 * tables.  jpl_lines_of gives the rows of the code [lo, hi) the way
 * LLVM's DWARFContext::getLineInfoForAddressRange picks them, clipped to
 * the code, plus the last row again at hi - 1 (perf ends the line table
 * at the last row's address).  Everything, *rows too, is allocated in a.
 */
JPL_HIDDEN int jpl_lines_open(struct jpl_lines **out, const struct jpl_dwarf_sections *s,
			      struct jpl_arena *a);
JPL_HIDDEN int jpl_lines_of(struct jpl_lines *l, uint64_t lo, uint64_t hi,
			    struct jitperf_line **rows, size_t *n);

/*
 * llvm/unwind.c: each function's .eh_frame, cut out of the loaded
 * .eh_frame section, eh_len bytes at eh (the loaded copy, or a copy of
 * it), relocated at its run-time address addr.  jpl_unwind_open indexes its FDEs (-EINVAL when the section
 * cannot be walked); jpl_unwind_of re-encodes those of the code [lo, hi)
 * by the convention of jitperf.h: a CIE with augmentation "zR"
 * (pcrel|sdata4) and the FDE, laid out as if loaded at lo + align8(hi - lo).
 * Personality and LSDA pointers are left out (perf only unwinds).  The
 * index and *out are allocated in a; 0 with *out NULL when no FDE covers
 * the code.
 */
struct jpl_fdes;
JPL_HIDDEN int jpl_unwind_open(struct jpl_fdes **out, const unsigned char *eh, size_t eh_len,
			       uint64_t addr, struct jpl_arena *a);
JPL_HIDDEN int jpl_unwind_of(struct jpl_fdes *t, uint64_t lo, uint64_t hi,
			     unsigned char **out, size_t *out_len);

/*
 * llvm/keys.c: object key -> the code indices its functions got.
 * jpl_keys_take removes the key and returns how many indices it had, in
 * *index (malloc'ed, the caller frees it; NULL and 0 for an unknown key).
 */
struct jpl_keys;
JPL_HIDDEN int    jpl_keys_add(struct jpl_keys **t, uint64_t key, const uint64_t *index, size_t n);
JPL_HIDDEN size_t jpl_keys_take(struct jpl_keys *t, uint64_t key, uint64_t **index);
JPL_HIDDEN void   jpl_keys_free(struct jpl_keys *t);

/* Debug message on stderr, only when JITPERF_DEBUG is set. */
/* cold: the paths that report an error are laid out away from the ones that work */
JPL_HIDDEN void jpl_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2), cold));

#ifdef __cplusplus
}
#endif
#endif /* JITPERF_LLVM_PRIVATE_H */
