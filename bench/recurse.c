/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Benchmark subject for bench/uftrace-compare.sh, built with
 * -finstrument-functions: naive recursive fib(N), whose calls are all
 * reported to __cyg_profile_func_enter/exit.  Prints fib(N) and the
 * number of calls made (fib(32): 7049155 calls, main included).
 */
#include <stdio.h>
#include <stdlib.h>

static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 32;
	unsigned long a = 1, b = 1;    /* calls(n) = 1 + calls(n-1) + calls(n-2) */

	if (n < 1 || n > 45) {
		fprintf(stderr, "usage: recurse N (1-45)\n");
		return 2;
	}
	for (int i = 2; i <= n; i++) {
		unsigned long c = 1 + a + b;

		a = b;
		b = c;
	}
	printf("fib(%d)=%ld calls=%lu\n", n, fib(n), b + 1);
	return 0;
}
