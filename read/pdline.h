/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Source lines and inline chains of the ELF objects a perf.data maps, read
 * with libdw from the object's DWARF (its separate debug file when there is
 * one, or the image itself, as perf inject's jitted-PID-N.so whose line
 * table comes from the jitdump's debug records).  Addresses are map-relative
 * as in read/pdsym.h (file offsets), placed through the image's program
 * headers (or its sections, which is all a jitted-*.so has).
 */
#ifndef JITPERF_PDLINE_H
#define JITPERF_PDLINE_H

#include <stddef.h>
#include <stdint.h>

struct pd_lines;

/*
 * The DWARF of debugfile (or of runtime when debugfile has none), addresses
 * placed through runtime.  NULL if neither has DWARF or on ENOMEM.
 */
struct pd_lines *pd_lines_open(const char *debugfile, const char *runtime);
void pd_lines_free(struct pd_lines *l);

/*
 * The source line of the code at addr: its file's base name and line, as
 * perf's srcline prints them ("file.c:12").  0, or -ENOENT if no line
 * table covers addr.
 */
int pd_lines_find(struct pd_lines *l, uint64_t addr, const char **file, int *line);

/* One function of an inline chain. */
struct pd_inl {
	const char *name;     /* the function (C++ names demangled without parameters) */
	const char *file;     /* base name; "??" if unknown */
	int         line;     /* where it is at addr: the call site of the inner one */
};

/*
 * The functions at addr, innermost (inlined into the next) first, up to the
 * function that holds the code, as addr2line -i prints them.  Returns how
 * many (at most max), 0 if the DWARF knows no function there, -ENOMEM.  The
 * strings last until the next call.
 */
int pd_lines_inline(struct pd_lines *l, uint64_t addr, struct pd_inl *out, int max);

#endif /* JITPERF_PDLINE_H */
