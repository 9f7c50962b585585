/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cost of a call through a jitperf_wrap thunk (run with nice): ns per call
 * of a small function called directly (the reference, measured in the
 * same run), through a thunk with recording off (a session writing only a
 * perf map), with statistics and the defaults (every call counted, some
 * timed), and with every call timed (JITPERF_SAMPLE=1).  Each run opens
 * its own session and closes it: a figure is the CPU time of every thread
 * of the process from the first call to the end of jitperf_close, per
 * call; median and worst of 7 runs of 2 million calls each.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "jitperf.h"

#define CALLS 2000000
#define RUNS  7

static __attribute__((noinline)) long add3(long a, long b, long c)
{
	return a + b + c;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);   /* every thread */
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static long (*wrap(jitperf *jp))(long, long, long)
{
	jitperf_fn id = jitperf_fn_register(jp, "add3", (void *)add3, 16);
	void *w;
	int err = jitperf_wrap(jp, id, (void *)add3, &w);

	if (err) {
		fprintf(stderr, "bench/wrap: jitperf_wrap: %s\n", jitperf_strerror(err));
		exit(1);
	}
	return (long (*)(long, long, long))w;
}

/* One run: ns per call through a thunk of a session with o (NULL: add3
 * itself), jitperf_close included. */
static double one_run(const struct jitperf_options *o, const char *dir)
{
	long (*volatile fn)(long, long, long) = add3;
	jitperf *jp = NULL;
	char path[4200];
	long sink = 0;
	double t0, t1;

	if (o && jitperf_open(&jp, o) != 0) {
		fprintf(stderr, "bench/wrap: jitperf_open failed\n");
		exit(1);
	}
	if (jp)
		fn = wrap(jp);
	t0 = now_ns();
	for (long i = 0; i < CALLS; i++)
		sink += fn(i, 1, 2);
	jitperf_close(jp);
	t1 = now_ns();
	if (sink == 42)
		puts("");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	snprintf(path, sizeof(path), "%s/jitperf-%d.stats", dir, (int)getpid());
	unlink(path);
	return (t1 - t0) / CALLS;
}

int main(void)
{
	char dir[] = "/tmp/bench-wrap.XXXXXX";
	struct jitperf_options off = { .size = sizeof(off), .outputs = JITPERF_PERFMAP };
	struct jitperf_options stats = { .size = sizeof(stats), .outputs = JITPERF_STATS };
	struct jitperf_options all = { .size = sizeof(all), .outputs = JITPERF_STATS,
				       .sample_every = 1 };
	static const char *const what[] = { "direct call (reference)", "thunk, recording off",
					    "thunk, statistics, defaults", "thunk, every call timed" };
	const struct jitperf_options *opts[] = { NULL, &off, &stats, &all };
	double v[4][RUNS];

	if (!mkdtemp(dir))
		return 1;
	stats.dir = all.dir = dir;
	/* the four interleaved: a busy spell of the machine slows them alike */
	for (int r = 0; r < RUNS; r++)
		for (int m = 0; m < 4; m++)
			v[m][r] = one_run(opts[m], dir);
	rmdir(dir);
	printf("bench/wrap: %d calls x %d runs; ns per call, CPU of all threads up to jitperf_close\n",
	       CALLS, RUNS);
	printf("  %-30s %7s %7s\n", "", "median", "worst");
	for (int m = 0; m < 4; m++) {
		qsort(v[m], RUNS, sizeof(v[m][0]), bench_cmp_double);
		printf("  %-30s %7.1f %7.1f", what[m], v[m][RUNS / 2], v[m][RUNS - 1]);
		if (m)
			printf("  (+%.1f)", v[m][RUNS / 2] - v[0][RUNS / 2]);
		printf("\n");
	}
	return 0;
}
