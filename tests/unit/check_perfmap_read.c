/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the perf map reader (read/perfmap_read.c). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/perfmap_read.h"
#include "tests/check-subr.h"

static char *dir;
static char path[512], err[512];

static void setup(void)
{
	dir = make_tmpdir();
	snprintf(path, sizeof(path), "%s/perf-4242.map", dir);
}

static void teardown(void)
{
	remove_tmpdir(dir);
	dir = NULL;
}

static struct pm_map *read_text(const char *text)
{
	FILE *fp = fopen(path, "wb");
	struct pm_map *m;

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fputs(text, fp) >= 0, 1);
	fclose(fp);
	ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(m);
	return m;
}

static const char *name_at(const struct pm_map *m, uint64_t addr)
{
	const struct pm_sym *s = pm_find(m, addr);

	return s ? s->name : NULL;
}

/* V8 (--perf-basic-prof): bare hex; the JVM and perf-map-agent: 0x-prefixed */
START_TEST(emitters)
{
	struct pm_map *m = read_text(
		"18c4000 300 Builtin:DeoptimizationEntry_Eager\n"
		"7f02c27c5b40 140 JS:^fib /tmp/fib.js:1:13\n"
		"0x00007fe8f4ec7640 0x0000000000000130 int Fib.fib(int)\n");

	ck_assert_uint_eq(m->nsyms, 3);
	ck_assert_uint_eq(m->skipped, 0);
	ck_assert_str_eq(name_at(m, 0x18c4000), "Builtin:DeoptimizationEntry_Eager");
	ck_assert_str_eq(name_at(m, 0x18c42ff), "Builtin:DeoptimizationEntry_Eager");
	ck_assert_ptr_null(name_at(m, 0x18c4300));
	ck_assert_str_eq(name_at(m, 0x7f02c27c5bb3), "JS:^fib /tmp/fib.js:1:13");
	ck_assert_str_eq(name_at(m, 0x7fe8f4ec7640 + 0x12f), "int Fib.fib(int)");
	ck_assert_ptr_null(name_at(m, 0x7fe8f4ec7640 + 0x130));
	ck_assert_ptr_null(name_at(m, 0x1000));
	ck_assert_uint_eq(pm_find(m, 0x7fe8f4ec7640)->line, 3);
	pm_free(m);
}
END_TEST

/* Code written over old code at the same address: the later line names it. */
START_TEST(reused_address)
{
	struct pm_map *m = read_text(
		"1000 100 old\n"
		"2000 10 other\n"
		"1000 80 new\n");

	ck_assert_str_eq(name_at(m, 0x1000), "new");
	ck_assert_str_eq(name_at(m, 0x107f), "new");
	/* the new code is shorter: the old tail is not the new function's */
	ck_assert_ptr_null(name_at(m, 0x1080));
	ck_assert_str_eq(name_at(m, 0x2000), "other");
	pm_free(m);
}
END_TEST

/* What perf 6.1 skips: no size, names of two bytes or less; size 0 names one address */
START_TEST(perf_rules)
{
	struct pm_map *m = read_text(
		"1000\n"
		"1100 10\n"
		"1200 10 ab\n"
		"1300 10 abc\n"
		"1400 0 zero size\n"
		"not a line at all\n"
		"\n");

	ck_assert_uint_eq(m->nsyms, 3);
	ck_assert_uint_eq(m->skipped, 4);
	ck_assert_ptr_null(name_at(m, 0x1200));
	ck_assert_str_eq(name_at(m, 0x1300), "abc");
	ck_assert_str_eq(name_at(m, 0x1400), "zero size");
	ck_assert_ptr_null(name_at(m, 0x1401));
	/* no digits: address 0, size 0, the name after two separators, as in perf */
	ck_assert_str_eq(name_at(m, 0), "t a line at all");
	pm_free(m);
}
END_TEST

/* A map still being written: its last line has no newline yet. */
START_TEST(last_line)
{
	struct pm_map *m = read_text("1000 10 first\n2000 20 second, unfinished");

	ck_assert_uint_eq(m->nsyms, 2);
	ck_assert_str_eq(name_at(m, 0x2010), "second, unfinished");
	pm_free(m);
}
END_TEST

START_TEST(empty_and_missing)
{
	struct pm_map *m = read_text("");
	char want[600];

	ck_assert_uint_eq(m->nsyms, 0);
	ck_assert_ptr_null(pm_find(m, 0));
	pm_free(m);
	unlink(path);
	ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(m);
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	ck_assert_str_eq(err, want);
}
END_TEST

/* Many lines out of order (a JIT's threads): every start finds its own. */
START_TEST(many)
{
	FILE *fp = fopen(path, "wb");
	struct pm_map *m;
	char want[32];

	ck_assert_ptr_nonnull(fp);
	for (unsigned i = 0; i < 10000; i++) {
		unsigned k = (i * 7919) % 10000;

		fprintf(fp, "%x 40 fn%u\n", 0x100000 + k * 0x40, k);
	}
	fclose(fp);
	ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m->nsyms, 10000);
	for (unsigned k = 0; k < 10000; k += 37) {
		snprintf(want, sizeof(want), "fn%u", k);
		ck_assert_str_eq(name_at(m, 0x100000 + k * 0x40 + 0x3f), want);
	}
	ck_assert_ptr_null(name_at(m, 0x100000 + 10000 * 0x40));
	pm_free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("Perf map reader");
	TCase *tc = tcase_create("Reading");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, emitters);
	tcase_add_test(tc, reused_address);
	tcase_add_test(tc, perf_rules);
	tcase_add_test(tc, last_line);
	tcase_add_test(tc, empty_and_missing);
	tcase_add_test(tc, many);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
