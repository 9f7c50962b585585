/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/probe: cost of jitperf_enter/jitperf_exit.  Prints medians of
 * several runs, in ns per enter/exit pair:
 *   off      no session instruments (the inline fast path of jitperf.h)
 *   off-call the same through the exported functions (what JIT code calls)
 *   traced   JITPERF_TRACE, every call traced, nested 3 deep
 *   stats    JITPERF_TRACE|JITPERF_STATS, nested 3 deep
 *   stats-only JITPERF_STATS, nested 3 deep
 *   sampled  JITPERF_TRACE with sample_every=1000 (999 of 1000 trees skipped)
 * and the trace file's bytes per event.  Time is the thread's CPU time, so
 * other processes on a loaded machine do not count.  Run it with nice:
 *   nice bench/probe [DIR [MODE]]
 * DIR receives the trace files (default: a new directory under /tmp);
 * MODE runs only the measurement of that name.
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

static double nest_call(int iters)
{
	void (*en)(jitperf_fn) = enter_fn, (*ex)(jitperf_fn) = exit_fn;
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
				     .sample_every = sample };
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

static const struct mode {
	const char *name;
	unsigned    outputs;              /* 0: no session */
	unsigned    sample_every;
	int         iters;
	double    (*run)(int);
	const char *what;
} modes[] = {
	{ "off",        0, 1, ITERS * 10, nest_inline, "inline fast path, nothing on" },
	{ "off-call",   0, 1, ITERS * 10, nest_call, "exported functions, nothing on" },
	{ "traced",     JITPERF_TRACE, 1, ITERS, nest_inline, "trace, nested 3 deep" },
	{ "stats",      JITPERF_TRACE | JITPERF_STATS, 1, ITERS, nest_inline,
	  "trace+stats, nested 3 deep" },
	{ "stats-only", JITPERF_STATS, 1, ITERS, nest_inline, "stats, nested 3 deep" },
	{ "sampled",    JITPERF_TRACE, 1000, ITERS * 10, nest_inline, "trace, 1 tree in 1000" },
};

int main(int argc, char **argv)
{
	char dir[] = "/tmp/jitperf-bench.XXXXXX", trace[4200], stats[4200];
	const char *d = argc > 1 ? argv[1] : mkdtemp(dir);
	const char *only = argc > 2 ? argv[2] : NULL;

	if (!d) {
		perror("bench/probe: mkdtemp");
		return 1;
	}
	unsetenv("JITPERF");
	snprintf(trace, sizeof(trace), "%s/jitperf-%d.trace", d, (int)getpid());
	snprintf(stats, sizeof(stats), "%s/jitperf-%d.stats", d, (int)getpid());
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const struct mode *m = &modes[i];
		jitperf *jp = NULL;
		struct stat st;
		double v;

		if (only && strcmp(only, m->name))
			continue;
		if (m->outputs)
			jp = open_session(d, m->outputs, m->sample_every);
		v = median(m->run, m->iters);
		jitperf_close(jp);
		printf("%-10s %6.2f ns/pair (%s)\n", m->name, v, m->what);
		/* warm-up + RUNS runs of iters x 6 events, all traced */
		if (m->outputs == JITPERF_TRACE && m->sample_every == 1 && !stat(trace, &st))
			printf("%-10s %6.2f bytes/event (%lld bytes, %.0f events)\n", "trace",
			       (double)st.st_size / ((RUNS + 0.1) * m->iters * 6),
			       (long long)st.st_size, (RUNS + 0.1) * m->iters * 6);
		unlink(trace);
		unlink(stats);
	}
	if (d == dir)
		rmdir(dir);
	return 0;
}
