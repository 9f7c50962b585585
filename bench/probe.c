/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/probe: cost of jitperf_enter/jitperf_exit per enter/exit pair,
 * beside references measured in the same run.  Calls are nested 3 deep
 * (the shape of real call trees).  A figure is the CPU time of the whole
 * process (every thread: the trace's filler thread counts) from the first
 * timed iteration to the end of jitperf_close (what is left to close
 * counts too), divided by the pairs; each is given as the median and the
 * worst of RUNS runs, each run with a session of its own:
 *   rdtsc        two reads of the CPU's counter (rdtsc on x86-64,
 *                CNTVCT_EL0 on AArch64): the clock reads a timed call
 *                cannot avoid (the reference of the timed figures)
 *   bare         a pair of calls of an empty function through a pointer
 *   inactive     no session counts calls: jitperf.h's inline test (inline)
 *                and the exported functions called through a pointer (call)
 *   counting     JITPERF_SAMPLE=0: every call counted, none timed
 *   sampled      the defaults: counted, timed adaptively (10000 timed
 *                calls a second)
 *   timed-all    JITPERF_SAMPLE=1: every call timed, with statistics,
 *                with a trace, with both (as uftrace records every call)
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

#include "bench.h"
#include "jitperf.h"
#include "read/stats_read.h"

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

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);  /* every thread of the process */
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The clock a timed call's duration is compared with (a vDSO call). */
static double wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline uint64_t rdtsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec;
#endif
}

static volatile uint64_t sink;

/* The reference: the two clock reads of a timed call, 3 times per iteration. */
static void nest_rdtsc(int iters)
{
	uint64_t s = 0;

	for (int i = 0; i < iters; i++) {
		s += rdtsc();
		s += rdtsc();
		s += rdtsc();
		s += rdtsc();
		s += rdtsc();
		s += rdtsc();
		__asm__ volatile("" : "+r"(s) :: "memory");
	}
	sink = s;
}

/* 3 pairs per iteration, nested a > b > c: the shape of real call trees. */
static void nest_inline(int iters)
{
	for (int i = 0; i < iters; i++) {
		jitperf_enter(fa);
		jitperf_enter(fb);
		jitperf_enter(fc);
		__asm__ volatile("" ::: "memory");
		jitperf_exit(fc);
		jitperf_exit(fb);
		jitperf_exit(fa);
	}
}

static void nest_calls(int iters, void (*en)(jitperf_fn), void (*ex)(jitperf_fn))
{
	for (int i = 0; i < iters; i++) {
		en(fa);
		en(fb);
		en(fc);
		ex(fc);
		ex(fb);
		ex(fa);
	}
}

static void nest_call(int iters)
{
	nest_calls(iters, enter_fn, exit_fn);
}

static void nest_bare(int iters)
{
	nest_calls(iters, empty_fn, empty_fn);
}

/* The machine's 1-minute load average: figures measured beside other work
 * are higher, references included. */
static double loadavg(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double v = -1;

	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
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
	void      (*run)(int);
	const char *what;
} modes[] = {
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

/* One run of m (or of run alone): ns per pair, from the first timed
 * iteration to the end of jitperf_close, CPU of every thread. */
static double one_run(const struct mode *m, void (*run)(int), int iters, const char *dir,
		      long long *trace_bytes)
{
	char trace[4200], stats[4200];
	jitperf *jp = NULL;
	struct stat st;
	double t0, t1;

	snprintf(trace, sizeof(trace), "%s/jitperf-%d.trace", dir, (int)getpid());
	snprintf(stats, sizeof(stats), "%s/jitperf-%d.stats", dir, (int)getpid());
	if (m && m->outputs)
		jp = open_session(dir, m->outputs, m->sample_every);
	run(iters / 10);                       /* warm up: first events, first pages */
	t0 = now_ns();
	run(iters);
	jitperf_close(jp);
	t1 = now_ns();
	if (trace_bytes && !stat(trace, &st))
		*trace_bytes = (long long)st.st_size;
	unlink(trace);
	unlink(stats);
	return (t1 - t0) / (3.0 * iters);
}

struct fig {
	double v[RUNS];
};

static double med(struct fig *f)
{
	qsort(f->v, RUNS, sizeof(f->v[0]), bench_cmp_double);
	return f->v[RUNS / 2];
}

static double worst(struct fig *f)
{
	qsort(f->v, RUNS, sizeof(f->v[0]), bench_cmp_double);
	return f->v[RUNS - 1];
}

/*
 * How close the calibrated prices come to what the probes cost: a call of
 * "known" spins SPIN_NS around NINNER timed calls of "empty"; its
 * statistics (net of the probes, calls to them included) should give the
 * spin plus the loop without the probes.
 * Returns the error of the reported minimum, in ns, and in *inside what
 * the probes inside one call cost (the bench's own clock).  sample: 1,
 * every call timed; JITPERF_SAMPLE_ADAPTIVE, the inner calls mostly
 * counted (known, called rarely, is timed).
 */
#define SPIN_NS 30000.0
#define NINNER  300

static double calibration_error(const char *dir, unsigned sample, double *inside)
{
	char stats[4200], err[512];
	struct stats_file *sf;
	double in[50], body = 1e30, ret = 0;
	jitperf *jp = open_session(dir, JITPERF_STATS, sample);
	jitperf_fn known = jitperf_fn_register(jp, "known", NULL, 0);

	for (int i = 0; i < 50; i++) {
		double t0, t1, t2;

		enter_fn(known);
		t0 = wall_ns();
		for (int k = 0; k < NINNER; k++) {
			enter_fn(fa);
			exit_fn(fa);
		}
		t1 = wall_ns();
		do
			t2 = wall_ns();
		while (t2 - t1 < SPIN_NS);
		exit_fn(known);
		in[i] = t1 - t0;
		if (t2 - t1 < body)
			body = t2 - t1;
	}
	jitperf_close(jp);
	/* the same loop without the probes (and so without their calls), the
	 * least of a few: what the body costs besides the spin */
	{
		double least = 1e30;

		for (int r = 0; r < 20; r++) {
			double t0 = wall_ns(), t;

			for (int k = 0; k < NINNER; k++)
				__asm__ volatile("" ::: "memory");
			if ((t = wall_ns() - t0) < least)
				least = t;
		}
		body += least;
	}
	qsort(in, 50, sizeof(in[0]), bench_cmp_double);
	*inside = in[25];
	snprintf(stats, sizeof(stats), "%s/jitperf-%d.stats", dir, (int)getpid());
	if (stats_read(stats, &sf, err, sizeof(err))) {
		fprintf(stderr, "bench/probe: %s\n", err);
		exit(1);
	}
	for (size_t i = 0; i < sf->nrows; i++)
		if (!strcmp(sf->rows[i].name, "known"))
			ret = (double)sf->rows[i].min_ns - body;
	stats_free(sf);
	unlink(stats);
	return ret;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/jitperf-bench.XXXXXX";
	const char *d = argc > 1 ? argv[1] : mkdtemp(dir);
	const char *only = argc > 2 ? argv[2] : NULL;
	struct fig ref, bare, fig;
	double r, b;

	if (!d) {
		perror("bench/probe: mkdtemp");
		return 1;
	}
	unsetenv("JITPERF");
	printf("ns per enter/exit pair, nested 3 deep: CPU time of the whole process (all threads),\n"
	       "jitperf_close included; median and worst of %d runs, each with a session of its own\n"
	       "(load average %.2f at start)\n", RUNS, loadavg());
	/* the references, measured again around every mode below */
	for (int i = 0; i < RUNS; i++) {
		ref.v[i] = one_run(NULL, nest_rdtsc, ITERS, d, NULL);
		bare.v[i] = one_run(NULL, nest_bare, ITERS * 10, d, NULL);
	}
	printf("%-16s %7s %7s\n", "", "median", "worst");
	printf("%-16s %7.2f %7.2f  (reference: two rdtsc)\n", "rdtsc", med(&ref), worst(&ref));
	printf("%-16s %7.2f %7.2f  (reference: two calls of an empty function)\n", "bare", med(&bare),
	       worst(&bare));
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const struct mode *m = &modes[i];
		long long bytes = -1;

		if (only && strncmp(m->name, only, strlen(only)))
			continue;
		/* runs of the mode interleaved with the references: a busy
		 * spell of the machine slows both */
		for (int k = 0; k < RUNS; k++) {
			ref.v[k] = one_run(NULL, nest_rdtsc, ITERS, d, NULL);
			bare.v[k] = one_run(NULL, nest_bare, ITERS * 10, d, NULL);
			fig.v[k] = one_run(m, m->run, m->iters, d, &bytes);
		}
		r = med(&ref);
		b = med(&bare);
		printf("%-16s %7.2f %7.2f", m->name, med(&fig), worst(&fig));
		if (m->sample_every == 1 && m->outputs)
			printf("  %.2fx two rdtsc (%.2f)", med(&fig) / r, r);
		else if (m->run == nest_call)
			printf("  %+.2f over the bare calls (%.2f)", med(&fig) - b, b);
		printf("  (%s)\n", m->what);
		/* warm-up + a run of iters x 6 events, all traced */
		if (m->outputs == JITPERF_TRACE && m->sample_every == 1 && bytes > 0)
			printf("%-16s %7.2f bytes/event\n", "  trace",
			       (double)bytes / (1.1 * m->iters * 6));
	}
	if (!only || !strncmp("calibration", only, strlen(only))) {
		static const struct { unsigned sample; const char *what; } cal[] = {
			{ 1, "every call timed" }, { ALL, "adaptive: inner calls counted" },
		};

		for (int c = 0; c < 2; c++) {
			struct fig e, p;
			double w = 0;

			for (int k = 0; k < RUNS; k++) {
				e.v[k] = calibration_error(d, cal[c].sample, &p.v[k]);
				if (e.v[k] * e.v[k] > w * w)
					w = e.v[k];
			}
			printf("%-16s %7.0f %7.0f  ns error of a %.0f ns call's minimum, with %d calls "
			       "inside whose probes cost %.0f ns (%s)\n", "calibration", med(&e), w,
			       SPIN_NS, NINNER, med(&p), cal[c].what);
		}
	}
	printf("(load average %.2f at end)\n", loadavg());
	if (d == dir)
		rmdir(dir);
	return 0;
}
