/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * manyjit N SECONDS [up|down|shuffle]: a JIT that registers N small
 * functions with libjitperf (each its own bytes, 64 bytes apart) and runs
 * them round robin for SECONDS, then prints its own end (CLOCK_REALTIME,
 * ns) on stdout, for bench/inject.sh to tell the program's run from the
 * work a recorder does after it.  The functions mj_f0, mj_f1, ... are
 * registered in that order at increasing addresses (up, the default), at
 * decreasing ones (down), or at the places of a random permutation, the
 * same on every run (shuffle: bench/inject-order.sh).  Exits 77 on other
 * architectures.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "jitperf.h"

typedef unsigned (*loop_fn)(unsigned);

/* mov $i,%ecx; mov %edi,%eax; 1: dec %eax; jnz 1b; ret */
static const unsigned char loop_code[] = { 0xb9, 0, 0, 0, 0, 0x89, 0xf8, 0xff, 0xc8, 0x75,
					   0xfc, 0xc3 };

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	jitperf *jp = jitperf_default();
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 20000;
	double secs = argc > 2 ? atof(argv[2]) : 2.0, end;
	const char *order = argc > 3 ? argv[3] : "up";
	size_t slot = 64, len = (size_t)n * slot;
	unsigned char *mem;
	unsigned *place;
	unsigned long long calls = 0;
	uint32_t x = 2463534242u;       /* xorshift32 */

#ifndef __x86_64__
	return 77;
#endif
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	place = malloc((n ? n : 1) * sizeof(*place));
	if (mem == MAP_FAILED || !place || !n)
		return 1;
	for (unsigned i = 0; i < n; i++)
		place[i] = strcmp(order, "down") ? i : n - 1 - i;
	if (!strcmp(order, "shuffle")) {
		for (unsigned i = n - 1; i > 0; i--) {
			unsigned j, t;

			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			j = x % (i + 1);
			t = place[i], place[i] = place[j], place[j] = t;
		}
	} else if (strcmp(order, "up") && strcmp(order, "down")) {
		fprintf(stderr, "manyjit: order is up, down or shuffle, not '%s'\n", order);
		return 2;
	}
	for (unsigned i = 0; i < n; i++) {
		memcpy(mem + (size_t)place[i] * slot, loop_code, sizeof(loop_code));
		memcpy(mem + (size_t)place[i] * slot + 1, &i, 4);
	}
	if (mprotect(mem, len, PROT_READ | PROT_EXEC))
		return 1;
	for (unsigned i = 0; i < n && jp; i++) {
		char name[32];

		snprintf(name, sizeof(name), "mj_f%u", i);
		if (jitperf_code_load(jp, name, mem + (size_t)place[i] * slot, sizeof(loop_code), NULL))
			return 1;
	}
	end = now(CLOCK_MONOTONIC) + secs;
	for (unsigned i = 0; now(CLOCK_MONOTONIC) < end; i = (i + 1) % n, calls++)
		((loop_fn)(void *)(mem + (size_t)place[i] * slot))(2000);
	printf("%.0f\n", now(CLOCK_REALTIME) * 1e9);
	fprintf(stderr, "manyjit: %u functions, %llu calls\n", n, calls);
	return 0;
}
