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

START_TEST(test_exact_format)
{
	jitperf *jp = instr_open(dir, JITPERF_STATS, 3, "page-faults,no-such-counter");
	jitperf_fn odd = jitperf_fn_register(jp, "odd\tname\nwith\rbreaks", NULL, 0);
	jitperf_fn never = jitperf_fn_register(jp, "never", NULL, 0);
	char head[512], *text, *line, *save = NULL;
	int n = 0;

	(void)never;
	for (int i = 0; i < 5; i++) {
		jitperf_enter(odd);
		jitperf_exit(odd);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
	text = stats_text();
	snprintf(head, sizeof(head),
		 "# jitperf-stats 1 pid=%d clock=monotonic sample_every=3 "
		 "counters=page-faults,no-such-counter\n"
		 "# unsupported counter no-such-counter: unknown counter name\n"
		 "function\tcalls\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced"
		 "\tpage-faults\tno-such-counter\n", (int)getpid());
	ck_assert_msg(!strncmp(text, head, strlen(head)), "stats file starts:\n%s", text);
	for (line = strtok_r(text + strlen(head), "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		int tabs = 0;

		for (char *p = line; *p; p++)
			tabs += *p == '\t';
		ck_assert_int_eq(tabs, 9);
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
	char head[256], *text;

	ck_assert_int_eq(jitperf_close(jp), 0);
	text = stats_text();
	snprintf(head, sizeof(head),
		 "# jitperf-stats 1 pid=%d clock=monotonic sample_every=1 counters=-\n"
		 "function\tcalls\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced\n",
		 (int)getpid());
	ck_assert_str_eq(text, head);
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
	ck_assert_uint_eq(ro.self, ro.total - ri.total);/* clock=monotonic: exact */
	ck_assert_uint_eq(ri.mean, ri.total / 6);
	ck_assert_uint_le(ri.min, ri.mean);
	ck_assert_uint_le(ri.mean, ri.max);
	ck_assert_uint_ge(ro.self, 3000000);
	/* Rows are sorted by total time, largest first. */
	text = stats_text();
	ck_assert_ptr_nonnull(strstr(text, "unbalanced\nouter\t3\t"));
	free(text);
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
	suite_add_tcase(s, tc);

	tc = tcase_create("Durations");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_times_add_up);
	tcase_add_test(tc, test_tsc_clock_in_ns);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(stats_suite());
}
