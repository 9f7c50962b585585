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
	expect_error("hello\n", 6, "line 1: not a jitperf-stats 1 header");
	expect_error("# jitperf-stats 2 pid=1 clock=tsc sample_every=1 counters=-\n", 61,
		     "line 1: not a jitperf-stats 1 header");
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
	suite_add_tcase(s, tc);
	tc = tcase_create("Damaged files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, bad_header);
	tcase_add_test(tc, bad_rows);
	tcase_add_test(tc, missing_file);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
