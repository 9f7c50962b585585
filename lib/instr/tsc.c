/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The probes' clock: the CPU's own counter where it runs at a constant rate
 * (a few ns to read): the invariant TSC on x86-64, the generic timer's
 * virtual count CNTVCT_EL0 on AArch64 (Linux lets user space read it, as
 * its vDSO does); otherwise CLOCK_MONOTONIC through the vDSO.  Ticks are mapped to the
 * CLOCK_MONOTONIC timeline of perf record -k 1 with (tick, ns) pairs taken
 * at open, at every new trace block and at close.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
# include <cpuid.h>
#endif

#include "instr.h"

int jp_clock_is_tsc;

/*
 * A counter of constant rate.  x86-64: the invariant TSC, cpuid
 * 0x80000007 EDX bit 8 (constant in all P- and C-states).  AArch64: the
 * generic timer always counts at CNTFRQ_EL0; 0 there means no firmware
 * set it up.
 */
static int tsc_invariant(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return 0;
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	return (d >> 8) & 1;
#elif defined(__aarch64__)
	uint64_t f;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
	return f != 0;
#else
	return 0;
#endif
}

int jp_clock_setup(const char *want, int debug)
{
	int tsc = tsc_invariant();

	if (want && *want && strcmp(want, "tsc") && strcmp(want, "monotonic"))
		return -EINVAL;
	if (want && !strcmp(want, "monotonic"))
		tsc = 0;
	else if (want && !strcmp(want, "tsc") && !tsc && debug)
		fprintf(stderr, "jitperf: JITPERF_CLOCK=tsc: no constant-rate CPU counter here, using CLOCK_MONOTONIC\n");
	jp_clock_is_tsc = tsc;
	return 0;
}

void jp_clock_pair(uint64_t *tick, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	if (!jp_clock_is_tsc) {
		*tick = *ns = jp_monotonic_ns();
		return;
	}
	/* Keep the pair whose two TSC reads bracket the clock_gettime tightest. */
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = jp_ticks(), n = jp_monotonic_ns(), t1 = jp_ticks();

		if (t1 - t0 < best) {
			best = t1 - t0;
			*tick = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}

uint64_t jp_clock_measure_hz(void)
{
	uint64_t t0, n0, t1, n1;
	struct timespec ts = { 0, 2000000 };

	if (!jp_clock_is_tsc)
		return 1000000000u;
	jp_clock_pair(&t0, &n0);
	nanosleep(&ts, NULL);
	jp_clock_pair(&t1, &n1);
	if (n1 <= n0 || t1 <= t0)
		return 1000000000u;
	return (uint64_t)((double)(t1 - t0) * 1e9 / (double)(n1 - n0));
}

uint64_t jp_clock_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
