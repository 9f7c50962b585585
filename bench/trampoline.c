/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a jitperf_trampoline adds to a call: an interpreter's call of its
 * eval function through the function's trampoline, next to a direct call
 * of the same function and a call of it through a function pointer,
 * measured in the same run.
 *
 *   bench/trampoline [N] [ROUNDS]    (N calls per batch, default 1000;
 *                                     ROUNDS, default 5, of 2000 batches)
 *
 * The calls form one dependency chain (each takes the previous result),
 * as an interpreter's calls do.  A batch of N calls is timed with
 * CLOCK_MONOTONIC; a line gives ns per call, the median batch and the
 * worst, of the round whose median is the median of the rounds.  The
 * jitdump goes to a directory of its own under $TMPDIR (else /tmp),
 * removed at the end.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "jitperf.h"

#define BATCHES 2000

typedef int64_t (*fn2)(int64_t, int64_t);

/* The eval function: as small as a call target gets. */
__attribute__((noinline)) static int64_t target(int64_t a, int64_t b)
{
	__asm__ volatile("" ::: "memory");
	return a + b;
}

struct round { double median, worst; };

static int cmp_round(const void *a, const void *b)
{
	const struct round *x = a, *y = b;

	return x->median < y->median ? -1 : x->median > y->median;
}

static struct round summary(double *t)
{
	struct round r;

	qsort(t, BATCHES, sizeof(*t), bench_cmp_double);
	r.median = t[BATCHES / 2];
	r.worst = t[BATCHES - 1];
	return r;
}

static int64_t sink;

static struct round direct(size_t n, double *t)
{
	int64_t x = 0;

	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = bench_now();

		for (size_t i = 0; i < n; i++)
			x = target((int64_t)i, x);
		t[b] = (double)(bench_now() - t0) / (double)n;
	}
	sink += x;
	return summary(t);
}

/* through f, which the compiler cannot see through */
static struct round through(fn2 f, size_t n, double *t)
{
	int64_t x = 0;

	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = bench_now();

		for (size_t i = 0; i < n; i++) {
			__asm__("" : "+r"(f));
			x = f((int64_t)i, x);
		}
		t[b] = (double)(bench_now() - t0) / (double)n;
	}
	sink += x;
	return summary(t);
}

static struct round pick(struct round *r, int rounds)
{
	qsort(r, (size_t)rounds, sizeof(*r), cmp_round);
	return r[rounds / 2];
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct round d[64], p[64], tr[64], dm, pm, tm;
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_JITDUMP };
	fn2 tf = target, entry;
	const void *tobj;
	char dir[4096], path[4200];
	void *e;
	jitperf *jp;
	double *t;
	int err;

	if (n < 1 || rounds < 1 || rounds > 64)
		return fprintf(stderr, "usage: trampoline [N] [ROUNDS <= 64]\n"), 2;
	snprintf(dir, sizeof(dir), "%s/jitperf-bench-trampoline.XXXXXX", tmp);
	if (!(t = malloc(BATCHES * sizeof(*t))) || !mkdtemp(dir))
		return perror("trampoline"), 1;
	o.dir = dir;
	if ((err = jitperf_open(&jp, &o)))
		return fprintf(stderr, "trampoline: jitperf_open: %s\n", jitperf_strerror(err)), 1;
	memcpy(&tobj, &tf, sizeof(tobj));
	if ((err = jitperf_trampoline(jp, "sum", 0, tobj, &e)))
		return fprintf(stderr, "trampoline: %s\n", jitperf_strerror(err)), 1;
	if (e == tobj)
		return fprintf(stderr, "trampoline: no trampoline made (session inactive)\n"), 1;
	memcpy(&entry, &e, sizeof(entry));

	/* interleaved rounds: the machine's drift falls on every line alike */
	for (int r = 0; r < rounds; r++) {
		d[r] = direct(n, t);
		p[r] = through(target, n, t);
		tr[r] = through(entry, n, t);
	}
	dm = pick(d, rounds);
	pm = pick(p, rounds);
	tm = pick(tr, rounds);
	printf("%zu calls per batch, %d batches per round, %d rounds; ns per call\n\n",
	       n, BATCHES, rounds);
	printf("| call | ns (median / worst batch) | - direct call |\n|---|---|---|\n");
	printf("| direct call of `target` | %.2f / %.2f | 0.00 |\n", dm.median, dm.worst);
	printf("| `target` through a function pointer | %.2f / %.2f | %+.2f |\n", pm.median, pm.worst,
	       pm.median - dm.median);
	printf("| `target` through its trampoline | %.2f / %.2f | %+.2f |\n", tm.median, tm.worst,
	       tm.median - dm.median);

	jitperf_close(jp);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	unlink(path);
	snprintf(path, sizeof(path), "%s/jit-%d.tiers", dir, (int)getpid());
	unlink(path);
	rmdir(dir);
	free(t);
	return sink == 42;  /* never: keeps the chains alive */
}
