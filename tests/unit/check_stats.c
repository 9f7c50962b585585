/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The statistics file: its exact text format (jitperf-stats(5)), and the
 * numbers in it for calls whose durations are known.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instr-subr.h"

static char *dir;

static void setup(void)
{
	dir = make_tmpdir();
	setenv("JITPERF_CLOCK", "monotonic", 1);   /* ticks are ns: exact arithmetic */
}

static void teardown(void)
{
	unsetenv("JITPERF_CLOCK");
	remove_tmpdir(dir);
	dir = NULL;
}

static char *stats_text(void)
{
	char path[4200];
	char *t;

	snprintf(path, sizeof(path), "%s/jitperf-%d.stats", dir, (int)getpid());
	t = instr_slurp(path);
	ck_assert_msg(t != NULL, "no %s", path);
	return t;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* Line n (0-based) of text, copied into buf. */
static const char *line_of(const char *text, int n, char *buf, size_t len)
{
	const char *p = text, *e;

	while (n-- > 0 && (p = strchr(p, '\n')))
		p++;
	ck_assert_ptr_nonnull(p);
	e = strchr(p, '\n');
	ck_assert_ptr_nonnull(e);
	snprintf(buf, len, "%.*s", (int)(e - p), p);
	return buf;
}

/* "# probes: self_ns=F lib_ns=F inline_ns=F timed_ns=F", all positive */
static void check_probes_line(const char *line)
{
	double c[5];

	ck_assert_msg(sscanf(line, "# probes: self_ns=%lf lib_ns=%lf inline_ns=%lf framed_ns=%lf "
			     "timed_ns=%lf", &c[0], &c[1], &c[2], &c[3], &c[4]) == 5,
		      "probes line: %s", line);
	for (int i = 0; i < 5; i++)
		ck_assert_msg(c[i] > 0 && c[i] < 100000, "probes line: %s", line);
	ck_assert_msg(c[0] <= c[4], "a timed call's own part above its whole: %s", line);
	/* to the picosecond: the report multiplies them by the calls */
	for (const char *p = strchr(line, '='); p; p = strchr(p + 1, '=')) {
		const char *dot = strchr(p, '.');

		ck_assert_msg(dot && strspn(dot + 1, "0123456789") == 3, "probes line: %s", line);
	}
}

START_TEST(test_exact_format)
{
	jitperf *jp = instr_open(dir, JITPERF_STATS, 3, "page-faults,no-such-counter");
	jitperf_fn odd = jitperf_fn_register(jp, "odd\tname\nwith\rbreaks", NULL, 0);
	jitperf_fn never = jitperf_fn_register(jp, "never", NULL, 0);
	char want[512], got[512], *text, *line, *save = NULL;
	unsigned long long calls, lib, inl, frm, timed, cpu, wall;
	unsigned threads;
	double probe;
	int n = 0;

	(void)never;
	for (int i = 0; i < 5; i++) {
		jitperf_enter(odd);
		jitperf_exit(odd);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
	text = stats_text();
	snprintf(want, sizeof(want), "# jitperf-stats 2 pid=%d clock=monotonic sample=3 "
		 "counters=page-faults,no-such-counter", (int)getpid());
	ck_assert_str_eq(line_of(text, 0, got, sizeof(got)), want);
	check_probes_line(line_of(text, 1, got, sizeof(got)));
	ck_assert_int_eq(sscanf(line_of(text, 2, got, sizeof(got)),
				"# run: calls=%llu lib_calls=%llu inline_calls=%llu framed_calls=%llu "
				"timed=%llu probe_ns=%lf cpu_ns=%llu", &calls, &lib, &inl, &frm, &timed,
				&probe, &cpu), 7);
	ck_assert_uint_eq(calls, 5);
	ck_assert_uint_eq(lib + inl + frm + timed, 5);  /* each call took one path */
	ck_assert_uint_ge(timed, 1);
	ck_assert_uint_gt(cpu, 0);
	/* under emulation, no perf events: page-faults is named as unsupported too */
	if (emulated())
		ck_assert_str_eq(line_of(text, 3, got, sizeof(got)),
				 "# unsupported counter page-faults: perf_event_open is not available");
	ck_assert_str_eq(line_of(text, 3 + emulated(), got, sizeof(got)),
			 "# unsupported counter no-such-counter: unknown counter name");
	/* the checks of the figures: the threads' time, each row's error of
	 * its total and its callees' time (none: nothing else was called) */
	ck_assert_int_eq(sscanf(line_of(text, 4 + emulated(), got, sizeof(got)),
				"# check: wall_ns=%llu threads=%u", &wall, &threads), 2);
	ck_assert_uint_gt(wall, 0);
	ck_assert_uint_eq(threads, 1);
	ck_assert_int_eq(strncmp(line_of(text, 5 + emulated(), got, sizeof(got)),
				 "# error: total_ns=", 18), 0);
	ck_assert_str_eq(line_of(text, 6 + emulated(), got, sizeof(got)), "# callees: total_ns=0");
	ck_assert_str_eq(line_of(text, 7 + emulated(), got, sizeof(got)),
			 "function\tcalls\ttimed\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced"
			 "\tpage-faults\tno-such-counter");
	for (line = strtok_r(strstr(text, "\tno-such-counter\n") + 17, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		int tabs = 0;

		for (char *p = line; *p; p++)
			tabs += *p == '\t';
		ck_assert_int_eq(tabs, 10);
		ck_assert_msg(!strncmp(line, "odd name with breaks\t5\t", 23), "row: %s", line);
		ck_assert_str_eq(strrchr(line, '\t'), "\t-");
	}
	ck_assert_int_eq(n, 1);                 /* "never" was not called: no row */
	free(text);
}
END_TEST

START_TEST(test_no_counters_header)
{
	jitperf *jp = instr_open(dir, JITPERF_STATS, 1, NULL);
	char want[256], got[512], *text;

	ck_assert_int_eq(jitperf_close(jp), 0);
	text = stats_text();
	snprintf(want, sizeof(want), "# jitperf-stats 2 pid=%d clock=monotonic sample=1 counters=-",
		 (int)getpid());
	ck_assert_str_eq(line_of(text, 0, got, sizeof(got)), want);
	/* no rows: empty lists */
	ck_assert_str_eq(line_of(text, 4, got, sizeof(got)), "# error: total_ns=");
	ck_assert_str_eq(line_of(text, 5, got, sizeof(got)), "# callees: total_ns=");
	ck_assert_str_eq(line_of(text, 6, got, sizeof(got)),
			 "function\tcalls\ttimed\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced");
	ck_assert_ptr_null(strchr(strstr(text, "unbalanced\n"), '\t'));  /* no rows */
	free(text);
}
END_TEST

/* the messages of the log, one a line, "LEVEL MSG" */
static char logged[1024];

static void log_to_buffer(int level, const char *msg, void *arg)
{
	size_t n = strlen(logged);

	ck_assert_ptr_eq(arg, logged);
	snprintf(logged + n, sizeof(logged) - n, "%d %s\n", level, msg);
}

/* With a trace: what its limits dropped, in the file and in the log. */
START_TEST(test_trace_line)
{
	struct jitperf_options o = { .outputs = JITPERF_STATS | JITPERF_TRACE, .sample_every = 1,
				     .trace_max = 256 << 10 };
	jitperf *jp = instr_open_opts(dir, &o);
	jitperf_fn f = jitperf_fn_register(jp, "f", NULL, 0);
	unsigned long long max, ring, min, traced, full, shrt, wrapped;
	char got[512], want[256], *text;

	jitperf_set_log(log_to_buffer, logged);
	for (int i = 0; i < 100000; i++) {
		jitperf_enter(f);
		jitperf_exit(f);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
	jitperf_set_log(NULL, NULL);
	text = stats_text();
	ck_assert_int_eq(sscanf(line_of(text, 3, got, sizeof(got)),
				"# trace: max=%llu ring=%llu min_ns=%llu traced=%llu dropped_full=%llu "
				"dropped_short=%llu dropped_ring=%llu", &max, &ring, &min, &traced, &full,
				&shrt, &wrapped), 7);
	ck_assert_uint_eq(max, 4096 + 3 * 65536);       /* 256 KiB: 3 whole blocks */
	ck_assert_uint_eq(ring, 0);
	ck_assert_uint_eq(min, 0);
	ck_assert_uint_eq(wrapped, 0);
	ck_assert_uint_eq(shrt, 0);
	/* every call is either in the file or counted as dropped: the file
	 * holds its first metadata block, one block of events (up to 8184
	 * calls of 8 bytes) and the metadata's reserve */
	ck_assert_uint_eq(traced + full + shrt, 100000);
	ck_assert_uint_ge(traced, 8000);
	ck_assert_uint_le(traced, 8184);
	ck_assert_uint_gt(full, 90000);
	snprintf(want, sizeof(want), "%d trace full: %llu calls left out of it (JITPERF_TRACE_MAX)\n",
		 JITPERF_LOG_ERROR, full);
	ck_assert_str_eq(logged, want);
	free(text);
}
END_TEST

START_TEST(test_times_add_up)
{
	jitperf *jp = instr_open(dir, JITPERF_STATS, 1, NULL);
	jitperf_fn outer = jitperf_fn_register(jp, "outer", NULL, 0);
	jitperf_fn inner = jitperf_fn_register(jp, "inner", NULL, 0);
	struct instr_row ro, ri;
	char *text;

	for (int i = 0; i < 3; i++) {
		jitperf_enter(outer);
		sleep_ms(1);
		for (int k = 0; k <= i; k++) {
			jitperf_enter(inner);
			sleep_ms(2);
			jitperf_exit(inner);
		}
		jitperf_exit(outer);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "outer", &ro), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "inner", &ri), 0);
	ck_assert_uint_eq(ro.calls, 3);
	ck_assert_uint_eq(ri.calls, 6);
	ck_assert_uint_ge(ri.min, 2000000);             /* each slept 2 ms */
	ck_assert_uint_ge(ro.min, 3000000);
	ck_assert_uint_eq(ri.self, ri.total);           /* a leaf */
	/* every call timed: exact up to the rounding of each column */
	ck_assert_uint_le(ro.self, ro.total - ri.total + 1);
	ck_assert_uint_ge(ro.self + 1, ro.total - ri.total);
	ck_assert_uint_le(ri.mean, ri.total / 6 + 1);
	ck_assert_uint_ge(ri.mean + 1, ri.total / 6);
	ck_assert_uint_eq(ri.timed, 6);
	ck_assert_uint_le(ri.min, ri.mean);
	ck_assert_uint_le(ri.mean, ri.max);
	ck_assert_uint_ge(ro.self, 3000000);
	/* Rows are sorted by total time, largest first. */
	text = stats_text();
	ck_assert_ptr_nonnull(strstr(text, "unbalanced\nouter\t3\t"));
	free(text);
}
END_TEST

/* ---- Calibration: the probes' cost is not in the reported times
 *
 * A timed call's statistics are its clock readings (which the trace
 * keeps) minus the probes inside it, each priced by the session's
 * calibration (the "# probes:" line).  The tests check that arithmetic
 * against the trace of the same calls, exactly; how close the calibrated
 * prices come to what the probes cost is measured by bench/probe.
 */

/* Calls of "known", each around ncalls calls of "empty" made through the
 * exported probes (what a JIT calls) and a little spinning. */
static void (*volatile enter_p)(jitperf_fn) = (jitperf_enter);
static void (*volatile exit_p)(jitperf_fn) = (jitperf_exit);

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_us(int us)
{
	for (uint64_t t0 = mono_ns(); mono_ns() - t0 < (uint64_t)us * 1000;)
		;
}

static void known(jitperf_fn p, jitperf_fn e, int ncalls)
{
	void (*en)(jitperf_fn) = enter_p, (*ex)(jitperf_fn) = exit_p;

	en(p);
	for (int i = 0; i < ncalls; i++) {
		en(e);
		ex(e);
	}
	spin_us(20);
	ex(p);
}

/* The net duration of each traced call of "known": its clock readings
 * minus its own probe, its timed calls of "empty" and the counted rest. */
struct net_arg {
	struct jpt_reader *r;
	double self, lib, timed;        /* the calibration, ns */
	int ncalls;                     /* calls of empty in each call of known */
	long inside;                    /* calls of empty traced since the last known */
	long known;
	double min, total;
};

static int net_cb(const struct jpt_call *c, void *arg)
{
	struct net_arg *a = arg;
	const char *name = jpt_fn(a->r, c->fn)->name;
	double net;

	if (!strcmp(name, "empty")) {
		a->inside++;
		return 0;
	}
	ck_assert_str_eq(name, "known");
	ck_assert_int_le(a->inside, a->ncalls);
	net = (double)(c->end_ns - c->start_ns) - a->self - (double)a->inside * a->timed -
	      (double)(a->ncalls - a->inside) * a->lib;
	ck_assert_msg(net > 0, "a call of known nets %.1f ns", net);
	if (!a->known || net < a->min)
		a->min = net;
	a->total += net;
	a->known++;
	a->inside = 0;
	return 0;
}

/* Opens a session as o says, makes calls of known around ncalls calls of
 * empty, and compares its statistics with its trace. */
static void check_net(struct jitperf_options *o, int ncalls, int nknown, int gap_us)
{
	struct net_arg a = { .ncalls = ncalls };
	struct instr_row r;
	double write;
	char got[512], err[512], *text;
	double c[5];
	jitperf *jp;
	jitperf_fn p, e;

	o->outputs = JITPERF_STATS | JITPERF_TRACE;
	jp = instr_open_opts(dir, o);
	p = jitperf_fn_register(jp, "known", NULL, 0);
	e = jitperf_fn_register(jp, "empty", NULL, 0);
	for (int i = 0; i < nknown; i++) {
		known(p, e, ncalls);
		spin_us(gap_us);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);

	text = stats_text();
	check_probes_line(line_of(text, 1, got, sizeof(got)));
	ck_assert_int_eq(sscanf(got, "# probes: self_ns=%lf lib_ns=%lf inline_ns=%lf framed_ns=%lf "
				"timed_ns=%lf", &c[0], &c[1], &c[2], &c[3], &c[4]), 5);
	free(text);
	a.lib = c[1];
	a.timed = c[4];
	a.r = instr_trace_open(dir, getpid());
	/* the trace's clock reads hold a timed call's own part and the
	 * writing of its entry event, which the statistics' net time starts
	 * after: its header prices both */
	a.self = jpt_info(a.r)->probe_ns[0];
	ck_assert(a.self >= c[0] - 0.001);
	ck_assert_int_eq(jpt_for_each_call(a.r, net_cb, &a, err, sizeof(err)), 0);
	jpt_close(a.r);

	ck_assert_int_eq(instr_stats_row(dir, getpid(), "known", &r), 0);
	ck_assert_uint_eq(r.calls, (unsigned)nknown);
	ck_assert_int_eq(a.known, (long)r.timed);       /* every timed call is traced */
	ck_assert_int_ge(a.known, 10);
	/* to the nanosecond the file rounds to, the calibration's printed
	 * picoseconds times the calls inside, and the writing of the entry
	 * event: the trace prices it by its median, the statistics leave out
	 * what each took (up to microseconds, a page of the file faulted in) */
	write = 2 * (a.self - c[0]);
	ck_assert_msg((double)r.min <= a.min + 2 + 0.001 * ncalls + write &&
		      (double)r.min >= 0.95 * a.min - 2 - 0.001 * ncalls - write,
		      "min %lu ns in the statistics, %.1f from the trace", (long)r.min, a.min);
	/* The total: the statistics leave out each entry event's writing as
	 * it went, the trace only its median; a page of the file faulted in
	 * costs microseconds.  Never more than the trace's, and not much
	 * less (in a sanitizer build an instrumented write strays further
	 * from its median: only the upper bound holds there). */
	if (r.timed == r.calls)
		ck_assert_msg((double)r.total <= a.total + a.known * (2 + 0.001 * ncalls + write) &&
			      (sanitized() ||
			       (double)r.total >= 0.95 * a.total - a.known * (2 + 0.001 * ncalls)),
			      "total %lu ns in the statistics, %.1f from the trace",
			      (long)r.total, a.total);
}

START_TEST(test_net_all_timed)
{
	struct jitperf_options o = { .sample_every = 1 };

	if (emulated()) {
		fputs("test_net_all_timed: skipped under emulation (timings mean nothing)\n", stderr);
		return;
	}
	/* every call timed: 300 timed calls inside each */
	check_net(&o, 300, 50, 0);
}
END_TEST

START_TEST(test_net_counted)
{
	struct jitperf_options o = { .sample_every = JITPERF_SAMPLE_ADAPTIVE, .timed_per_sec = 1000 };

	if (emulated()) {
		fputs("test_net_counted: skipped under emulation (timings mean nothing)\n", stderr);
		return;
	}

	/* 1500 calls inside each, a few timed, the rest counted; known is
	 * called less often than once a sampling period, so every call of it
	 * is timed */
	check_net(&o, 1500, 40, 2000);
}
END_TEST

START_TEST(test_tsc_clock_in_ns)
{
	jitperf *jp;
	jitperf_fn f;
	struct instr_row r;
	char *text;

	setenv("JITPERF_CLOCK", "tsc", 1);
	jp = instr_open(dir, JITPERF_STATS, 1, NULL);
	f = jitperf_fn_register(jp, "sleeper", NULL, 0);
	jitperf_enter(f);
	sleep_ms(20);
	jitperf_exit(f);
	ck_assert_int_eq(jitperf_close(jp), 0);
	text = stats_text();
	/* tsc where invariant, else the library falls back to monotonic */
	ck_assert(strstr(text, " clock=tsc ") || strstr(text, " clock=monotonic "));
	free(text);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "sleeper", &r), 0);
	/* Converted to ns: at least the 20 ms slept, and not wildly more. */
	ck_assert_uint_ge(r.total, 19900000);
	ck_assert_uint_le(r.total, 2000000000);
}
END_TEST

START_TEST(test_no_file_without_stats)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE, 1, NULL);
	char path[4200];

	ck_assert_int_eq(jitperf_close(jp), 0);
	snprintf(path, sizeof(path), "%s/jitperf-%d.stats", dir, (int)getpid());
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("Statistics");
	TCase *tc;

	tc = tcase_create("File format");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_exact_format);
	tcase_add_test(tc, test_no_counters_header);
	tcase_add_test(tc, test_no_file_without_stats);
	tcase_add_test(tc, test_trace_line);
	suite_add_tcase(s, tc);

	tc = tcase_create("Durations");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_times_add_up);
	tcase_add_test(tc, test_tsc_clock_in_ns);
	suite_add_tcase(s, tc);

	tc = tcase_create("Calibration");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_net_all_timed);
	tcase_add_test(tc, test_net_counted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(stats_suite());
}
