/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/bench.h - what the benches share: the clock they read and the
 * order they sort their rounds in, for medians and worst cases.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns */
static inline uint64_t bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* qsort's order of doubles and of uint64_t, smallest first */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
