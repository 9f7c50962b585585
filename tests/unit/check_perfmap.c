/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /tmp/perf-<pid>.map read back: exact lines, names with newlines, moves,
 * file mode, a stale file or symlink of an earlier process replaced safely.
 */
#include "config.h"

#include <errno.h>
#include <sys/wait.h>

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

/*
 * The lines a reader sees, at any moment: the file is its lines, each
 * whole, with no NUL and nothing after the last newline.
 */
static char *read_map(void)
{
	size_t len;
	char *s = (char *)slurp(map, &len);

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s), len);
	if (len)
		ck_assert_int_eq(s[len - 1], '\n');
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

/* The raw file: its bytes, with the length of its text before the zeros. */
static char *raw_map(size_t *len, size_t *text)
{
	char *s = (char *)slurp(map, len);

	ck_assert_ptr_nonnull(s);
	*text = strlen(s);
	return s;
}

START_TEST(test_whole_lines_at_once)
{
	char expect[256];
	size_t len, text;
	char *got;

	/* each line is in the file when its call returns, before any close */
	ck_assert_int_eq(jitperf_code_load(jp, "one", code, 16, NULL), 0);
	snprintf(expect, sizeof(expect), "%lx 10 one\n", (unsigned long)(uintptr_t)code);
	got = raw_map(&len, &text);
	ck_assert_uint_eq(len, strlen(expect));
	ck_assert_str_eq(got, expect);
	free(got);
	ck_assert_int_eq(jitperf_code_load(jp, "two", code + 16, 32, NULL), 0);
	snprintf(expect, sizeof(expect), "%lx 10 one\n%lx 20 two\n",
		 (unsigned long)(uintptr_t)code, (unsigned long)(uintptr_t)(code + 16));
	got = raw_map(&len, &text);
	ck_assert_uint_eq(len, strlen(expect));
	ck_assert_str_eq(got, expect);
	free(got);
	/* the close adds nothing */
	ck_assert_int_eq(jitperf_close(jp), 0);
	got = raw_map(&len, &text);
	ck_assert_uint_eq(len, strlen(expect));
	ck_assert_str_eq(got, expect);
	free(got);
	open_map();
}
END_TEST

/*
 * The session reopened with its jitdump on a tmpfs of size bytes at
 * dir/small (a disk that fills up); 0, or -1 where no tmpfs can be
 * mounted: then the case is reported as not run and put back as it was.
 */
static int open_on_small_fs(char *dir, char *mnt, size_t mntlen, const char *size,
			    const char *what)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_PERFMAP | JITPERF_JITDUMP };

	ck_assert_int_eq(jitperf_close(jp), 0);
	snprintf(mnt, mntlen, "%s/small", dir);
	ck_assert_int_eq(mkdir(mnt, 0755), 0);
	if (mount_private_tmpfs(mnt, size) < 0) {
		fprintf(stderr, "check_perfmap: cannot mount a tmpfs (%s): %s case not run\n",
			strerror(errno), what);
		open_map();
		remove_tmpdir(dir);
		return -1;
	}
	o.dir = mnt;
	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	return 0;
}

/* After open_on_small_fs, the session closed: the map's own session back. */
static void leave_small_fs(char *dir, const char *mnt)
{
	ck_assert_int_eq(umount(mnt), 0);
	open_map();
	remove_tmpdir(dir);
}

/*
 * A load the jitdump cannot take (a full disk) leaves no line in the map,
 * the first line included: the map is written whole again afterwards.
 */
START_TEST(test_rollback)
{
	static unsigned char big[8192];
	char *dir = make_tmpdir(), mnt[256], expect[256], *got;
	int n = 0, err = 0;

	if (open_on_small_fs(dir, mnt, sizeof(mnt), "4k", "rollback"))
		return;
	/* the first load does not fit: no line */
	ck_assert_int_eq(jitperf_code_load(jp, "huge", big, sizeof(big), NULL), -ENOSPC);
	got = read_map();
	ck_assert_str_eq(got, "");
	free(got);
	/* small ones fit until the page is full; the one that does not leaves no line */
	while (!err && n < 100) {
		err = jitperf_code_load(jp, n ? "later" : "first", code + n, 64, NULL);
		n += !err;
	}
	ck_assert_int_eq(err, -ENOSPC);
	ck_assert_int_gt(n, 1);
	ck_assert_int_eq(jitperf_close(jp), 0);
	jp = NULL;
	got = read_map();
	snprintf(expect, sizeof(expect), "%lx 40 first\n", (unsigned long)(uintptr_t)code);
	ck_assert_int_eq(strncmp(got, expect, strlen(expect)), 0);
	{
		int lines = 0;

		for (char *c = got; *c; c++)
			lines += *c == '\n';
		ck_assert_int_eq(lines, n);
	}
	free(got);
	leave_small_fs(dir, mnt);
}
END_TEST

/*
 * A fork child writes the code it inherited into its map, then its own
 * lines.  When the jitdump cannot take a load, its line goes and the map
 * ends on the inherited line again; the next load is written as usual.
 * The child reports by its exit
 * status: 0, or the step that went wrong.  (8k: a page for each process's
 * jitdump, none for the load.)
 */
static int child_rollback(void)
{
	static unsigned char big[8192];
	char path[64], expect[256], *s;
	size_t len;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (jitperf_code_load(jp, "huge", big, sizeof(big), NULL) != -ENOSPC)
		return 2;
	snprintf(expect, sizeof(expect), "%lx 40 inherited\n", (unsigned long)(uintptr_t)code);
	s = (char *)slurp(path, &len);
	if (!s || len != strlen(expect) || memcmp(s, expect, len))
		return 3;
	free(s);
	if (jitperf_code_load(jp, "own", code + 64, 64, NULL) || jitperf_close(jp))
		return 4;
	snprintf(expect + strlen(expect), sizeof(expect) - strlen(expect), "%lx 40 own\n",
		 (unsigned long)(uintptr_t)(code + 64));
	s = (char *)slurp(path, &len);
	if (!s || len != strlen(expect) || memcmp(s, expect, len))
		return 5;
	free(s);
	unlink(path);
	return 0;
}

START_TEST(test_rollback_in_fork_child)
{
	char *dir = make_tmpdir(), mnt[256], child_map[80];
	int st = -1;
	pid_t pid;

	if (open_on_small_fs(dir, mnt, sizeof(mnt), "8k", "fork rollback"))
		return;
	ck_assert_int_eq(jitperf_code_load(jp, "inherited", code, 64, NULL), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(child_rollback());
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	/* what a child that failed part-way left in /tmp */
	snprintf(child_map, sizeof(child_map), "/tmp/perf-%d.map", (int)pid);
	unlink(child_map);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed at step %d",
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	ck_assert_int_eq(jitperf_close(jp), 0);
	jp = NULL;
	leave_small_fs(dir, mnt);
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

	tc = tcase_create("Whole lines");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_whole_lines_at_once);
	tcase_add_test(tc, test_rollback);
	tcase_add_test(tc, test_rollback_in_fork_child);
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
