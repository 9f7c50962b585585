/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Frame names by stackcollapse-perf.pl's rules (read/stackframe.c). */
#ifndef JITPERF_STACKFRAME_H
#define JITPERF_STACKFRAME_H

#include <stddef.h>

/* what a frame line says besides the symbol */
struct sf_ctx {
	unsigned    flags;      /* PS_ADDRS, PS_KERNEL, PS_JIT */
	int         java;       /* the process name is exactly "java" */
	const char *pc, *mod;   /* address and module (dso) of the line */
	size_t      pcn, modn;
};

/* room sf_tidy() needs for a piece of fn bytes */
#define SF_MAX(fn, c) ((fn) + (c)->modn + (c)->pcn + 16)

/*
 * Write the frame name for the piece f[0..fn) of a symbol (one of its
 * "->"-separated parts; inlined = not the first) to d, which must not
 * overlap f and has SF_MAX bytes.  Returns its length.
 */
size_t sf_tidy(char *d, const char *f, size_t fn, const struct sf_ctx *c, int inlined);

#endif
