/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the statistics file reader (read/stats_read.c). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/stats_read.h"
#include "tests/check-subr.h"

static char path[] = "/tmp/check_stats_read.XXXXXX";
static char err[512];

static void write_file(const char *text, size_t len)
{
	FILE *fp = fopen(path, "wb");

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(text, 1, len, fp), len);
	fclose(fp);
}

static void setup(void)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void teardown(void)
{
	unlink(path);
	strcpy(path, "/tmp/check_stats_read.XXXXXX");
}

/* read must fail with -EINVAL and "PATH: line LINE: what" */
static void expect_error(const char *text, size_t len, const char *what)
{
	struct stats_file *s = NULL;
	char want[600];

	write_file(text, len);
	ck_assert_int_eq(stats_read(path, &s, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(s);
	snprintf(want, sizeof(want), "%s: %s", path, what);
	ck_assert_str_eq(err, want);
}

START_TEST(full_file)
{
	static const char text[] =
		"# jitperf-stats 1 pid=4242 clock=tsc sample_every=10 counters=task-clock,cycles\n"
		"# unsupported counter cycles: not supported by this CPU or kernel\n"
		"function\tcalls\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced\ttask-clock\tcycles\n"
		"fib\t21891\t500000\t400000\t10\t22\t9000\t0\t480000\t-\n"
		"a name with spaces\t1\t7\t7\t7\t7\t7\t1\t5\t-\n";
	struct stats_file *s;

	write_file(text, sizeof(text) - 1);
	ck_assert_int_eq(stats_read(path, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s->pid, 4242);
	ck_assert_str_eq(s->clock, "tsc");
	ck_assert_uint_eq(s->sample_every, 10);
	ck_assert_uint_eq(s->ncounters, 2);
	ck_assert_str_eq(s->counters[0], "task-clock");
	ck_assert_str_eq(s->counters[1], "cycles");
	ck_assert_uint_eq(s->nrows, 2);
	ck_assert_str_eq(s->rows[0].name, "fib");
	ck_assert_uint_eq(s->rows[0].calls, 21891);
	ck_assert_uint_eq(s->rows[0].total_ns, 500000);
	ck_assert_uint_eq(s->rows[0].self_ns, 400000);
	ck_assert_uint_eq(s->rows[0].min_ns, 10);
	ck_assert_uint_eq(s->rows[0].mean_ns, 22);
	ck_assert_uint_eq(s->rows[0].max_ns, 9000);
	ck_assert_uint_eq(s->rows[0].unbalanced, 0);
	ck_assert_uint_eq(s->rows[0].counters[0], 480000);
	ck_assert_uint_eq(s->rows[0].counters[1], STATS_NO_VALUE);
	ck_assert_str_eq(s->rows[1].name, "a name with spaces");
	ck_assert_uint_eq(s->rows[1].unbalanced, 1);
	stats_free(s);
}
END_TEST

START_TEST(no_rows_no_counters)
{
	static const char text[] =
		"# jitperf-stats 1 pid=1 clock=monotonic sample_every=1 counters=-\n"
		"function\tcalls\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced\n";
	struct stats_file *s;

	write_file(text, sizeof(text) - 1);
	ck_assert_int_eq(stats_read(path, &s, err, sizeof(err)), 0);
	ck_assert_str_eq(s->clock, "monotonic");
	ck_assert_uint_eq(s->ncounters, 0);
	ck_assert_uint_eq(s->nrows, 0);
	stats_free(s);
}
END_TEST

#define HDR "# jitperf-stats 1 pid=1 clock=tsc sample_every=1 counters=-\n"
#define COLS "function\tcalls\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced\n"

START_TEST(bad_header)
{
	expect_error("", 0, "line 1: file ends before the column header");
	expect_error("hello\n", 6, "line 1: not a jitperf-stats 1 or 2 header");
	expect_error("# jitperf-stats 3 pid=1 clock=tsc sample=1 counters=-\n", 53,
		     "line 1: not a jitperf-stats 1 or 2 header");
	expect_error(HDR, sizeof(HDR) - 1, "line 2: file ends before the column header");
	expect_error(HDR "function\tcalls\n", sizeof(HDR) + 14, "line 2: bad column header");
}
END_TEST

START_TEST(bad_rows)
{
	static const char fields[] = HDR COLS "f\t1\t2\t3\t4\t5\t6\n";
	static const char number[] = HDR COLS "f\t1\t2\tx\t4\t5\t6\t0\n";
	static const char dash[] = HDR COLS "f\t-\t2\t3\t4\t5\t6\t0\n";
	static const char nul[] = HDR COLS "f\0\t1\t2\t3\t4\t5\t6\t0\n";
	static const char huge[] = HDR COLS "f\t99999999999999999999999\t2\t3\t4\t5\t6\t0\n";

	expect_error(fields, sizeof(fields) - 1, "line 3: bad row");
	expect_error(number, sizeof(number) - 1, "line 3: bad row");
	expect_error(dash, sizeof(dash) - 1, "line 3: bad row");
	expect_error(nul, sizeof(nul) - 1, "line 3: bad row");
	expect_error(huge, sizeof(huge) - 1, "line 3: bad row");
}
END_TEST

/* Version 2: sampling, calibration, run and trace lines, "-" times. */
START_TEST(version2_file)
{
	static const char text[] =
		"# jitperf-stats 2 pid=77 clock=tsc sample=auto:5000 counters=page-faults\n"
		"# probes: self_ns=21.5 lib_ns=2.4 inline_ns=0.8 framed_ns=0.5 timed_ns=40.2\n"
		"# run: calls=30000001 lib_calls=29990000 inline_calls=0 framed_calls=0 timed=10001 "
		"probe_ns=72378000 cpu_ns=150000000\n"
		"# trace: max=33558528 ring=0 min_ns=100 traced=9000 dropped_full=0 "
		"dropped_short=1001 dropped_ring=0\n"
		"function\tcalls\ttimed\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced"
		"\tpage-faults\n"
		"r\t30000000\t10000\t90000000\t45000000\t1\t3\t40000000\t0\t12\n"
		"counted\t1\t0\t-\t-\t-\t-\t-\t0\t-\n";
	struct stats_file *s;

	write_file(text, sizeof(text) - 1);
	ck_assert_int_eq(stats_read(path, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s->version, 2);
	ck_assert_uint_eq(s->sample_every, STATS_ADAPTIVE);
	ck_assert_uint_eq(s->timed_per_sec, 5000);
	ck_assert_int_eq(s->has_probes, 1);
	ck_assert_double_eq(s->probe_ns[STATS_COST_SELF], 21.5);
	ck_assert_double_eq(s->probe_ns[STATS_COST_TIMED], 40.2);
	ck_assert_double_eq(s->probe_ns[STATS_COST_FRAMED], 0.5);
	ck_assert_int_eq(s->has_run, 1);
	ck_assert_uint_eq(s->calls, 30000001);
	ck_assert_uint_eq(s->lib_calls, 29990000);
	ck_assert_uint_eq(s->timed, 10001);
	ck_assert_double_eq(s->run_probe_ns, 72378000);
	ck_assert_uint_eq(s->cpu_ns, 150000000);
	ck_assert_int_eq(s->has_trace, 1);
	ck_assert_uint_eq(s->trace_max, 33558528);
	ck_assert_uint_eq(s->trace_min_ns, 100);
	ck_assert_uint_eq(s->traced, 9000);
	ck_assert_uint_eq(s->dropped_short, 1001);
	ck_assert_uint_eq(s->nrows, 2);
	ck_assert_uint_eq(s->rows[0].calls, 30000000);
	ck_assert_uint_eq(s->rows[0].timed, 10000);
	ck_assert_uint_eq(s->rows[0].total_ns, 90000000);
	ck_assert_uint_eq(s->rows[0].unbalanced, 0);
	ck_assert_uint_eq(s->rows[0].counters[0], 12);
	ck_assert_uint_eq(s->rows[1].timed, 0);
	ck_assert_uint_eq(s->rows[1].total_ns, STATS_NO_VALUE);
	ck_assert_uint_eq(s->rows[1].max_ns, STATS_NO_VALUE);
	stats_free(s);
}
END_TEST

/* Two processes' files summed: counts add up, the trace's limits are the
 * largest, a file without run or trace lines adds only its rows. */
START_TEST(sum_of_files)
{
	static const char a[] =
		"# jitperf-stats 2 pid=1 clock=tsc sample=1 counters=-\n"
		"# probes: self_ns=20 lib_ns=2 inline_ns=1 framed_ns=1 timed_ns=40\n"
		"# run: calls=100 lib_calls=0 inline_calls=0 framed_calls=0 timed=100 "
		"probe_ns=4000.5 cpu_ns=90000\n"
		"# trace: max=1000 ring=0 min_ns=5 traced=90 dropped_full=10 dropped_short=0 "
		"dropped_ring=0\n"
		"function\tcalls\ttimed\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced\n"
		"f\t100\t100\t5000\t5000\t40\t50\t90\t0\n";
	static const char b[] =
		"# jitperf-stats 2 pid=2 clock=tsc sample=1 counters=-\n"
		"# run: calls=7 lib_calls=0 inline_calls=0 framed_calls=0 timed=7 "
		"probe_ns=280 cpu_ns=10000\n"
		"# trace: max=4000 ring=64 min_ns=0 traced=7 dropped_full=0 dropped_short=2 "
		"dropped_ring=3\n"
		"function\tcalls\ttimed\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced\n"
		"g\t4\t4\t400\t400\t90\t100\t110\t0\n"
		"h\t3\t3\t30\t30\t9\t10\t11\t0\n";
	static const char c[] =
		"# jitperf-stats 1 pid=3 clock=tsc sample_every=1 counters=-\n"
		"function\tcalls\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced\n"
		"k\t1\t10\t10\t10\t10\t10\t0\n";
	const char *texts[] = { a, b, c };
	size_t lens[] = { sizeof(a) - 1, sizeof(b) - 1, sizeof(c) - 1 };
	struct stats_sum sum = { 0 };

	for (int i = 0; i < 3; i++) {
		struct stats_file *s;

		write_file(texts[i], lens[i]);
		ck_assert_msg(stats_read(path, &s, err, sizeof(err)) == 0, "%s", err);
		stats_sum_add(&sum, s);
		stats_free(s);
	}
	ck_assert_uint_eq(sum.functions, 4);
	ck_assert_int_eq(sum.has_run, 1);
	ck_assert_uint_eq(sum.calls, 107);
	ck_assert_uint_eq(sum.timed, 107);
	ck_assert_uint_eq(sum.cpu_ns, 100000);
	ck_assert_double_eq(sum.run_probe_ns, 4280.5);
	ck_assert_int_eq(sum.has_trace, 1);
	ck_assert_uint_eq(sum.traced, 97);
	ck_assert_uint_eq(sum.dropped_full, 10);
	ck_assert_uint_eq(sum.dropped_short, 2);
	ck_assert_uint_eq(sum.dropped_ring, 3);
	ck_assert_uint_eq(sum.trace_max, 4000);
	ck_assert_uint_eq(sum.trace_ring, 64);
	ck_assert_uint_eq(sum.trace_min_ns, 5);
}
END_TEST

#define HDR2 "# jitperf-stats 2 pid=1 clock=tsc sample=3 counters=-\n"
#define COLS2 "function\tcalls\ttimed\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced\n"

START_TEST(version2_damaged)
{
	static const char none[] = "# jitperf-stats 2 pid=1 clock=tsc sample=none counters=-\n" COLS2
		"f\t5\t0\t-\t-\t-\t-\t-\t0\n";
	static const char sample[] = "# jitperf-stats 2 pid=1 clock=tsc sample=auto:0 counters=-\n";
	static const char probes[] = HDR2 "# probes: self_ns=x lib_ns=1 inline_ns=1 timed_ns=1\n";
	static const char trace[] = HDR2 "# trace: max=1\n";
	static const char dash_timed[] = HDR2 COLS2 "f\t5\t2\t-\t-\t-\t-\t-\t0\n";
	static const char num_untimed[] = HDR2 COLS2 "f\t5\t0\t1\t1\t1\t1\t1\t0\n";
	static const char more_timed[] = HDR2 COLS2 "f\t5\t6\t1\t1\t1\t1\t1\t0\n";
	struct stats_file *s;

	write_file(none, sizeof(none) - 1);
	ck_assert_int_eq(stats_read(path, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s->sample_every, STATS_NONE);
	stats_free(s);
	expect_error(sample, sizeof(sample) - 1, "line 1: not a jitperf-stats 1 or 2 header");
	expect_error(probes, sizeof(probes) - 1, "line 2: bad '# probes:' line");
	expect_error(trace, sizeof(trace) - 1, "line 2: bad '# trace:' line");
	expect_error(dash_timed, sizeof(dash_timed) - 1, "line 3: bad row");
	expect_error(num_untimed, sizeof(num_untimed) - 1, "line 3: bad row");
	expect_error(more_timed, sizeof(more_timed) - 1, "line 3: bad row");
}
END_TEST

START_TEST(missing_file)
{
	struct stats_file *s;

	ck_assert_int_eq(stats_read("/nonexistent/x.stats", &s, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/x.stats: No such file or directory");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("Statistics file reader");
	TCase *tc;

	tc = tcase_create("Well-formed files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, full_file);
	tcase_add_test(tc, no_rows_no_counters);
	tcase_add_test(tc, version2_file);
	tcase_add_test(tc, sum_of_files);
	suite_add_tcase(s, tc);
	tc = tcase_create("Damaged files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, bad_header);
	tcase_add_test(tc, bad_rows);
	tcase_add_test(tc, version2_damaged);
	tcase_add_test(tc, missing_file);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
