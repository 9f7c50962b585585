/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A known inline frame for srcline.test: spin() runs step(), which the
 * compiler must inline into it, so samples land in code that DWARF says is
 * step's (the line marked STEP), inlined at the line marked CALL.
 */
#include <stdlib.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long step(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;   /* STEP */
	return x;
}

unsigned long spin(unsigned long n);   /* external: a symbol perf and DWARF name */

__attribute__((noinline)) unsigned long spin(unsigned long n)
{
	unsigned long x = n;

	for (unsigned long i = 0; i < n; i++)
		x ^= step(x + i);                                        /* CALL */
	return x;
}

int main(int argc, char **argv)
{
	sink = spin(argc > 1 ? strtoul(argv[1], NULL, 0) : 100000);
	return 0;
}
