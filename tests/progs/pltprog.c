/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Samples in a program's PLT entries: each of four libc functions that
 * return at once (none a compiler builtin) is called through its PLT
 * entry for a while in turn, so samples land on every entry, the first
 * included, where perf 6.1 names the address after _init (the symbol
 * without a size before .plt, stretched over it before the entries were
 * added).  perfdata.test holds jitperf's names to perf script's.
 *
 *   pltprog [MILLISECONDS]     (of each function, default 300)
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 300;

	for (int w = 0; w < 4; w++) {
		struct timespec t0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (elapsed_ms(&t0) < ms)
			for (int i = 0; i < 100000; i++)
				switch (w) {
				case 0: sink += (unsigned long)__errno_location(); break;
				case 1: sink += (unsigned long)__ctype_b_loc(); break;
				case 2: sink += (unsigned long)__ctype_tolower_loc(); break;
				default: sink += (unsigned long)__ctype_toupper_loc(); break;
				}
	}
	return 0;
}
