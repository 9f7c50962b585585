/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cost of a call through a jitperf_wrap thunk (run with nice): ns per call
 * of a small function called directly, through a thunk with recording off
 * (an inactive session) and through a thunk with statistics on (every call
 * timed).  Prints the median of 7 runs of 2 million calls each.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* median ns per call of fn over RUNS runs */
static double measure(long (*volatile fn)(long, long, long))
{
	double t[RUNS];
	long sink = 0;

	for (int r = 0; r < RUNS; r++) {
		double t0 = now_ns();

		for (long i = 0; i < CALLS; i++)
			sink += fn(i, 1, 2);
		t[r] = (now_ns() - t0) / CALLS;
	}
	if (sink == 42)
		puts("");
	qsort(t, RUNS, sizeof(t[0]), cmp);
	return t[RUNS / 2];
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

int main(void)
{
	struct jitperf_options off = { .size = sizeof(off), .outputs = JITPERF_PERFMAP };
	struct jitperf_options on = { .size = sizeof(on), .outputs = JITPERF_STATS };
	char dir[] = "/tmp/bench-wrap.XXXXXX", path[128];
	double direct, idle, timed;
	jitperf *jp;

	if (!mkdtemp(dir))
		return 1;
	on.dir = dir;
	direct = measure(add3);
	/* a perf map only: the thunk runs, the probes record nothing */
	if (jitperf_open(&jp, &off) != 0)
		return 1;
	idle = measure(wrap(jp));
	jitperf_close(jp);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	if (jitperf_open(&jp, &on) != 0)
		return 1;
	timed = measure(wrap(jp));
	jitperf_close(jp);
	snprintf(path, sizeof(path), "%s/jitperf-%d.stats", dir, (int)getpid());
	unlink(path);
	rmdir(dir);

	printf("bench/wrap: %d calls x %d runs, median ns per call\n", CALLS, RUNS);
	printf("  direct call               %6.1f\n", direct);
	printf("  thunk, recording off      %6.1f  (+%.1f)\n", idle, idle - direct);
	printf("  thunk, statistics on      %6.1f  (+%.1f)\n", timed, timed - direct);
	return 0;
}
