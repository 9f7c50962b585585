/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/probe: cost of jitperf_enter/jitperf_exit per enter/exit pair, in
 * one run, beside what a bare pair of calls costs.  Calls are nested 3 deep
 * (the shape of real call trees); each figure is the median of several
 * runs of the thread's CPU time, so other processes on a loaded machine do
 * not count:
 *   bare         a pair of calls of an empty function through a pointer
 *   inactive     no session counts calls: jitperf.h's inline test (inline)
 *                and the exported functions called through a pointer (call)
 *   counting     JITPERF_SAMPLE=0: every call counted, none timed
 *   sampled      the defaults: counted, timed adaptively (10000 timed
 *                calls a second)
 *   timed-all    JITPERF_SAMPLE=1: every call timed, with statistics,
 *                with a trace, with both
 * and the trace's bytes per event.  Run it with nice:
 *   nice bench/probe [DIR [MODE]]
 * DIR receives the trace files (default: a new directory under /tmp);
 * MODE runs only the measurements whose name starts with it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jitperf.h"

#define ITERS 1000000
#define RUNS  7

static jitperf_fn fa, fb, fc;
static void (*volatile enter_fn)(jitperf_fn) = (jitperf_enter);
static void (*volatile exit_fn)(jitperf_fn) = (jitperf_exit);

static void __attribute__((noinline)) empty(jitperf_fn fn)
{
	__asm__ volatile("" : : "r"(fn) : "memory");
}
static void (*volatile empty_fn)(jitperf_fn) = empty;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);   /* not the time others ran */
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* 3 pairs per iteration, nested a > b > c: the shape of real call trees. */
static double nest_inline(int iters)
{
	double t0 = now_ns();

	for (int i = 0; i < iters; i++) {
		jitperf_enter(fa);
		jitperf_enter(fb);
		jitperf_enter(fc);
		__asm__ volatile("" ::: "memory");
		jitperf_exit(fc);
		jitperf_exit(fb);
		jitperf_exit(fa);
	}
	return (now_ns() - t0) / (3.0 * iters);
}

static double nest_calls(int iters, void (*en)(jitperf_fn), void (*ex)(jitperf_fn))
{
	double t0 = now_ns();

	for (int i = 0; i < iters; i++) {
		en(fa);
		en(fb);
		en(fc);
		ex(fc);
		ex(fb);
		ex(fa);
	}
	return (now_ns() - t0) / (3.0 * iters);
}

static double nest_call(int iters)
{
	return nest_calls(iters, enter_fn, exit_fn);
}

static double nest_bare(int iters)
{
	return nest_calls(iters, empty_fn, empty_fn);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double (*fn)(int), int iters)
{
	double v[RUNS];

	fn(iters / 10);                        /* warm up: first events, page faults */
	for (int i = 0; i < RUNS; i++)
		v[i] = fn(iters);
	qsort(v, RUNS, sizeof(v[0]), cmp);
	return v[RUNS / 2];
}

static jitperf *open_session(const char *dir, unsigned outputs, unsigned sample)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = outputs, .dir = dir,
				     .sample_every = sample, .trace_max = JITPERF_UNLIMITED };
	jitperf *jp = NULL;
	int err = jitperf_open(&jp, &o);

	if (err) {
		fprintf(stderr, "bench/probe: jitperf_open: %s\n", jitperf_strerror(err));
		exit(1);
	}
	fa = jitperf_fn_register(jp, "a", NULL, 0);
	fb = jitperf_fn_register(jp, "b", NULL, 0);
	fc = jitperf_fn_register(jp, "c", NULL, 0);
	return jp;
}

#define ALL JITPERF_SAMPLE_ADAPTIVE
#define NONE JITPERF_SAMPLE_NONE

static const struct mode {
	const char *name;
	unsigned    outputs;              /* 0: no session */
	unsigned    sample_every;
	int         iters;
	double    (*run)(int);
	const char *what;
} modes[] = {
	{ "bare",              0, 1, ITERS * 10, nest_bare, "two calls of an empty function" },
	{ "inactive/inline",   0, 1, ITERS * 10, nest_inline, "nothing counts, jitperf.h inline" },
	{ "inactive/call",     0, 1, ITERS * 10, nest_call, "nothing counts, exported functions" },
	{ "counting/inline",   JITPERF_STATS, NONE, ITERS * 10, nest_inline, "JITPERF_SAMPLE=0" },
	{ "counting/call",     JITPERF_STATS, NONE, ITERS * 10, nest_call, "JITPERF_SAMPLE=0" },
	{ "sampled/inline",    JITPERF_STATS | JITPERF_TRACE, ALL, ITERS * 10, nest_inline,
	  "defaults: adaptive timing" },
	{ "sampled/call",      JITPERF_STATS | JITPERF_TRACE, ALL, ITERS * 10, nest_call,
	  "defaults: adaptive timing" },
	{ "timed-all/stats",   JITPERF_STATS, 1, ITERS, nest_inline, "JITPERF_SAMPLE=1, statistics" },
	{ "timed-all/trace",   JITPERF_TRACE, 1, ITERS, nest_inline, "JITPERF_SAMPLE=1, trace" },
	{ "timed-all/both",    JITPERF_TRACE | JITPERF_STATS, 1, ITERS, nest_inline,
	  "JITPERF_SAMPLE=1, trace+statistics" },
};

int main(int argc, char **argv)
{
	char dir[] = "/tmp/jitperf-bench.XXXXXX", trace[4200], stats[4200];
	const char *d = argc > 1 ? argv[1] : mkdtemp(dir);
	const char *only = argc > 2 ? argv[2] : NULL;
	double bare = 0;

	if (!d) {
		perror("bench/probe: mkdtemp");
		return 1;
	}
	unsetenv("JITPERF");
	snprintf(trace, sizeof(trace), "%s/jitperf-%d.trace", d, (int)getpid());
	snprintf(stats, sizeof(stats), "%s/jitperf-%d.stats", d, (int)getpid());
	printf("ns per enter/exit pair, nested 3 deep (medians of %d runs, thread CPU time)\n", RUNS);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const struct mode *m = &modes[i];
		jitperf *jp = NULL;
		struct stat st;
		double v;

		if (only && strncmp(m->name, only, strlen(only)) && strcmp(m->name, "bare"))
			continue;
		if (m->outputs)
			jp = open_session(d, m->outputs, m->sample_every);
		v = median(m->run, m->iters);
		jitperf_close(jp);
		if (!strcmp(m->name, "bare"))
			bare = v;
		if (m->run == nest_call)
			printf("%-16s %6.2f  %+6.2f over the bare calls  (%s)\n", m->name, v, v - bare,
			       m->what);
		else
			printf("%-16s %6.2f                          (%s)\n", m->name, v, m->what);
		/* warm-up + RUNS runs of iters x 6 events, all traced */
		if (m->outputs == JITPERF_TRACE && m->sample_every == 1 && !stat(trace, &st))
			printf("%-16s %6.2f bytes/event (%lld bytes, %.0f events)\n", "  trace",
			       (double)st.st_size / ((RUNS + 0.1) * m->iters * 6),
			       (long long)st.st_size, (RUNS + 0.1) * m->iters * 6);
		unlink(trace);
		unlink(stats);
	}
	if (d == dir)
		rmdir(dir);
	return 0;
}
