/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader of perf maps, /tmp/perf-<pid>.map as any JIT writes them
 * (libjitperf, V8's --perf-basic-prof, the JVM's DumpPerfMapAtExit and
 * perf-map-agent, CPython's -X perf, .NET, ...): one "START SIZE name"
 * line per function, START and SIZE in hex with or without "0x".  A line
 * is read as perf 6.1 reads it: one separator after each number, the name
 * is the rest of the line; lines perf would skip are skipped and counted.
 *
 * Where entries overlap (stubs inside a region registered after them, code
 * written over old code), an address is named as perf 6.1 names it, and
 * that depends on the order of the lines, not only on the addresses: perf
 * inserts the entries in file order into a red-black tree keyed by start
 * (an equal start goes right), keeps them as they are (no fixup of ends or
 * duplicates), and looks an address up by walking down from the root,
 * stopping at the first entry whose [START, START + SIZE) holds it (an
 * entry of size 0 holds START alone).  pm_find() replays that tree
 * (read/pdsymtree.c); pm_pieces() gives its answer for every address.
 */
#ifndef JITPERF_PERFMAP_READ_H
#define JITPERF_PERFMAP_READ_H

#include <stddef.h>
#include <stdint.h>

struct pm_sym {
	uint64_t    start, size;
	const char *name;
	size_t      line;           /* 1-based line of the map */
};

struct pd_symtree;

struct pm_map {
	struct pm_sym     *syms;    /* sorted by start, then by line */
	size_t             nsyms;
	size_t             skipped; /* lines perf would skip (no size, no name) */
	char              *names;   /* the names, one arena */
	struct pd_symtree *tree;    /* perf's tree; its nodes index syms */
};

/* What perf names in [start, end): one symbol, the same at every address. */
struct pm_piece {
	uint64_t             start, end;
	const struct pm_sym *sym;
};

/*
 * Read a perf map, if path is a regular file (never blocking on a FIFO).
 * Lines end at a newline only; a NUL inside a line ends its name but not
 * the line.  A last line without its newline loses its last byte, which
 * perf takes for the newline.  0, or a negative errno (-EINVAL: not a
 * regular file) with one line in errbuf naming the file.  O(n log n) time,
 * O(n) memory for n lines.
 */
int pm_read(const char *path, struct pm_map **out, char *errbuf, size_t errlen);
void pm_free(struct pm_map *m);

/*
 * The symbol perf 6.1 names at addr, NULL where perf names none
 * ("[unknown]").  Where no entries overlap, the one entry holding addr;
 * where they do, the first met on perf's walk down its tree: a region
 * registered after the stubs inside it may keep them their addresses, or
 * take some of them, depending on the tree's shape.  O(log n);
 * thread-safe (m is only read).
 */
const struct pm_sym *pm_find(const struct pm_map *m, uint64_t addr);

/*
 * The address space as perf names it: *pieces (malloc'ed, *n of them, at
 * most m->nsyms) in address order, not overlapping, each the largest run
 * of addresses pm_find() gives one symbol for.  A symbol is in one piece
 * at most, which may begin after its start and end before its end (the
 * part of it perf names).  Addresses perf names nothing at are in no
 * piece; so is the last address, 2^64 - 1, which no end can name.  0, or
 * -ENOMEM.  O(n) time and memory; thread-safe.
 */
int pm_pieces(const struct pm_map *m, struct pm_piece **pieces, size_t *n);

#endif /* JITPERF_PERFMAP_READ_H */
