/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /tmp/perf-<pid>.map read back: exact lines, names with newlines, moves,
 * file mode, a stale file or symlink of an earlier process replaced safely.
 */
#include "config.h"

#include <errno.h>

#include "tests/check-subr.h"

static char map[64];
static jitperf *jp;
static unsigned char code[256];

static void open_map(void)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_PERFMAP };

	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
}

static void setup(void)
{
	clear_env();
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	unlink(map);
	open_map();
}

static void teardown(void)
{
	ck_assert_int_eq(jitperf_close(jp), 0);
	unlink(map);
}

static char *read_map(void)
{
	size_t len;
	char *s = (char *)slurp(map, &len);

	ck_assert_ptr_nonnull(s);
	return s;
}

START_TEST(test_lines)
{
	char expect[512];
	char *got;
	uint64_t idx;

	ck_assert_int_eq(jitperf_code_load(jp, "first", code, 16, &idx), 0);
	ck_assert_int_eq(jitperf_code_load(jp, "Foo::bar(int) const", code + 16, 0xab, NULL), 0);
	ck_assert_int_eq(jitperf_code_load(jp, "x", code + 255, 1, NULL), 0);
	/* START SIZE name: lower-case hex, no 0x, like perf's own parser expects */
	snprintf(expect, sizeof(expect), "%lx 10 first\n%lx ab Foo::bar(int) const\n%lx 1 x\n",
		 (unsigned long)(uintptr_t)code, (unsigned long)(uintptr_t)(code + 16),
		 (unsigned long)(uintptr_t)(code + 255));
	got = read_map();
	ck_assert_str_eq(got, expect);
	free(got);
}
END_TEST

START_TEST(test_name_newlines)
{
	char expect[256];
	char *got;

	ck_assert_int_eq(jitperf_code_load(jp, "two\nlines\r\nhere", code, 4, NULL), 0);
	snprintf(expect, sizeof(expect), "%lx 4 two lines  here\n", (unsigned long)(uintptr_t)code);
	got = read_map();
	ck_assert_str_eq(got, expect);
	free(got);
}
END_TEST

START_TEST(test_long_name)
{
	size_t n = 5000;
	char *name = malloc(n + 1), *got, *sp;

	ck_assert_ptr_nonnull(name);
	memset(name, 'q', n);
	name[n] = 0;
	ck_assert_int_eq(jitperf_code_load(jp, name, code, 4, NULL), 0);
	got = read_map();
	sp = strchr(strchr(got, ' ') + 1, ' ') + 1;
	ck_assert_uint_eq(strlen(sp), n + 1);
	ck_assert_mem_eq(sp, name, n);
	ck_assert_int_eq(sp[n], '\n');
	free(got);
	free(name);
}
END_TEST

START_TEST(test_move_adds_line)
{
	char expect[256];
	char *got;
	uint64_t idx;

	ck_assert_int_eq(jitperf_code_load(jp, "moving", code, 32, &idx), 0);
	ck_assert_int_eq(jitperf_code_move(jp, idx, code + 128), 0);
	ck_assert_int_eq(jitperf_code_unload(jp, idx), 0);      /* perf maps cannot say this */
	snprintf(expect, sizeof(expect), "%lx 20 moving\n%lx 20 moving\n",
		 (unsigned long)(uintptr_t)code, (unsigned long)(uintptr_t)(code + 128));
	got = read_map();
	ck_assert_str_eq(got, expect);
	free(got);
}
END_TEST

START_TEST(test_mode)
{
	struct stat st;
	mode_t old = umask(0);

	/* even with umask 0: never world-writable */
	ck_assert_int_eq(jitperf_close(jp), 0);
	open_map();
	umask(old);
	ck_assert_int_eq(lstat(map, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	/* and with a strict umask: still readable by perf run as another user */
	old = umask(077);
	ck_assert_int_eq(jitperf_close(jp), 0);
	open_map();
	umask(old);
	ck_assert_int_eq(lstat(map, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
}
END_TEST

START_TEST(test_bad_arguments)
{
	char *got;

	ck_assert_int_eq(jitperf_code_load(jp, NULL, code, 4, NULL), -EINVAL);
	ck_assert_int_eq(jitperf_code_load(jp, "z", code, 0, NULL), -EINVAL);
	got = read_map();
	ck_assert_str_eq(got, "");
	free(got);
}
END_TEST

START_TEST(test_stale_file_replaced)
{
	char victim[] = "/tmp/jitperf-victim.XXXXXX", expect[128];
	char *got;
	size_t len;
	unsigned char *v;
	int fd;

	ck_assert_int_eq(jitperf_close(jp), 0);
	/* a stale map of an earlier process with our pid */
	fd = open(map, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "dead beef stale\n", 16), 16);
	close(fd);
	open_map();
	ck_assert_int_eq(jitperf_code_load(jp, "fresh", code, 8, NULL), 0);
	snprintf(expect, sizeof(expect), "%lx 8 fresh\n", (unsigned long)(uintptr_t)code);
	got = read_map();
	ck_assert_str_eq(got, expect);
	free(got);

	/* a symlink planted at the name: replaced, never followed */
	ck_assert_int_eq(jitperf_close(jp), 0);
	fd = mkstemp(victim);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "precious\n", 9), 9);
	close(fd);
	unlink(map);
	ck_assert_int_eq(symlink(victim, map), 0);
	open_map();
	ck_assert_int_eq(jitperf_code_load(jp, "fresh", code, 8, NULL), 0);
	v = slurp(victim, &len);
	ck_assert_str_eq((char *)v, "precious\n");
	free(v);
	got = read_map();
	ck_assert_str_eq(got, expect);
	free(got);
	unlink(victim);
}
END_TEST

static Suite *perfmap_suite(void)
{
	Suite *s = suite_create("perfmap");
	TCase *tc;

	tc = tcase_create("Map lines");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_name_newlines);
	tcase_add_test(tc, test_long_name);
	tcase_add_test(tc, test_move_adds_line);
	tcase_add_test(tc, test_bad_arguments);
	suite_add_tcase(s, tc);

	tc = tcase_create("File safety");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_mode);
	tcase_add_test(tc, test_stale_file_replaced);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(perfmap_suite());
}
