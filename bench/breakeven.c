/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Break-even of a tier-up, measured without jitperf: the example's
 * function (examples/jitcalc-tiered) interpreted and compiled, and its
 * compile, timed in one run of this program; break-even calls = compile
 * time / (interpreted - native time per call).  bench/breakeven.sh puts
 * it next to what a jitperf recording of the example gives.
 *
 *   bench/breakeven [FUNC [PASSES [CALLS [ROUNDS]]]]
 *       (default: hot 1000 200000 9; the example's tiered.jc)
 *
 * No libjitperf session is active (JITPERF is unset), so the interpreter
 * runs without trampolines and nothing is registered.  FUNC is timed
 * where the example runs it, in CALLS rounds of the example's loop,
 * run(i, CALLS) for i < CALLS (each round calls FUNC once, and cold):
 * the rounds with FUNC interpreted, then native, less the same rounds
 * with FUNC an empty C function.  So a figure is what FUNC's tier changes
 * in the program, effects on the code around it included (the
 * interpreter's dispatch branches are shared), which perf's samples
 * cannot attribute.  Rounds are timed in the thread's CPU time, which
 * perf's cpu-clock samples count; a compile, of PASSES + 1 backend
 * passes, in wall time, as the tiers file's begin and end give it.  Each
 * line gives the median of ROUNDS and the worst.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench.h"
#include "examples/tiered.h"

#ifndef JITCALC_TIERED
# define JITCALC_TIERED "examples/tiered.jc"
#endif
#define MAX_ROUNDS 64

static int64_t sink;

/* CPU ns of the thread: what perf's cpu-clock samples count */
static uint64_t cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* what stands in for FUNC in the rounds that take it out */
__attribute__((noinline)) static int64_t nothing(int64_t a, int64_t b, int64_t c, int64_t d,
						int64_t e, int64_t f)
{
	__asm__ volatile("" ::: "memory");
	return a + b + c + d + e + f;
}

/* CPU ns per round of run(i, rounds), i < rounds, f's entry set to e (NULL: interpreted) */
static double loop(struct tx_fn *run, struct tx_fn *f, jc_entry e, long rounds)
{
	uint64_t t0;

	atomic_store(&f->native, e);
	t0 = cpu();
	for (long i = 0; i < rounds; i++) {
		int64_t args[JC_MAX_PARAMS] = { i, rounds };

		sink += tx_call(run, args);
	}
	t0 = cpu() - t0;
	atomic_store(&f->native, NULL);
	return (double)t0 / (double)rounds;
}

int main(int argc, char **argv)
{
	const char *func = argc > 1 ? argv[1] : "hot";
	int passes = argc > 2 ? atoi(argv[2]) : 1000;
	long calls = argc > 3 ? atol(argv[3]) : 200000;
	int rounds = argc > 4 ? atoi(argv[4]) : 9;
	double in[MAX_ROUNDS], nat[MAX_ROUNDS], comp[MAX_ROUNDS], base;
	struct jc_prog *p = jc_prog_new();
	struct tx_rt rt;
	struct tx_fn *f, *run;
	jc_entry e;
	int err;

	if (passes < 0 || calls < 1 || rounds < 1 || rounds > MAX_ROUNDS)
		return fprintf(stderr, "usage: breakeven [FUNC [PASSES [CALLS [ROUNDS <= %d]]]]\n",
			       MAX_ROUNDS), 2;
	unsetenv("JITPERF");
	if (!p || (err = tx_load(p, JITCALC_TIERED)) ||
	    (err = tx_rt_open(&rt, p, jitperf_default(), 0)))
		return fprintf(stderr, "breakeven: %s\n", p ? p->err : "out of memory"), 1;
	if (!(f = tx_rt_find(&rt, func)) || !(run = tx_rt_find(&rt, "run")) || f == run)
		return fprintf(stderr, "breakeven: no function '%s' (other than run) in %s\n", func,
			       JITCALC_TIERED), 1;
	f->passes = passes;

	/* interleaved rounds: the machine's drift falls on every line alike */
	for (int r = 0; r < rounds; r++) {
		uint64_t t0 = bench_now();

		if ((err = tx_native(&rt, f)))
			return fprintf(stderr, "breakeven: compile of %s: %s\n", func, strerror(-err)), 1;
		comp[r] = (double)(bench_now() - t0);
		memcpy(&e, &f->native_map, sizeof(e));
		base = loop(run, f, nothing, calls);
		in[r] = loop(run, f, NULL, calls) - base;
		nat[r] = loop(run, f, e, calls) - base;
		munmap(f->native_map, f->native_size);
		f->native_map = NULL;
	}
	qsort(in, (size_t)rounds, sizeof(in[0]), bench_cmp_double);
	qsort(nat, (size_t)rounds, sizeof(nat[0]), bench_cmp_double);
	qsort(comp, (size_t)rounds, sizeof(comp[0]), bench_cmp_double);
	printf("%s(i), i < %ld, %d rounds; compile: %d + 1 backend passes; median / worst round\n\n",
	       func, calls, rounds, passes);
	printf("| measure | median | worst |\n|---|---|---|\n");
	printf("| interpreted, ns/call | %.1f | %.1f |\n", in[rounds / 2], in[rounds - 1]);
	printf("| native, ns/call | %.1f | %.1f |\n", nat[rounds / 2], nat[rounds - 1]);
	printf("| compile, ms | %.3f | %.3f |\n", comp[rounds / 2] / 1e6, comp[rounds - 1] / 1e6);
	printf("| break-even calls | %.0f | |\n", comp[rounds / 2] / (in[rounds / 2] - nat[rounds / 2]));
	tx_rt_close(&rt);
	jc_prog_free(p);
	return sink == 42;  /* never: keeps the calls alive */
}
