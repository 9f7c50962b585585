/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of what the readers share (read/util.c). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "read/util.h"
#include "tests/check-subr.h"

static char *dir;
static char path[512];

static void setup(void)
{
	dir = make_tmpdir();
	snprintf(path, sizeof(path), "%s/file", dir);
}

static void teardown(void)
{
	remove_tmpdir(dir);
	dir = NULL;
}

static void write_file(const char *p, const void *data, size_t len)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* every byte, a NUL after them; the bound and a directory refused */
START_TEST(slurp_file)
{
	static unsigned char big[300000];
	unsigned char *d;
	size_t n;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7 + 1);
	write_file(path, big, sizeof(big));
	ck_assert_int_eq(rd_slurp_path(path, 0, &d, &n), 0);
	ck_assert_uint_eq(n, sizeof(big));
	ck_assert_int_eq(memcmp(d, big, n), 0);
	ck_assert_int_eq(d[n], 0);
	free(d);
	ck_assert_int_eq(rd_slurp_path(path, sizeof(big), &d, &n), 0);
	free(d);
	ck_assert_int_eq(rd_slurp_path(path, sizeof(big) - 1, &d, &n), -EFBIG);
	ck_assert_int_eq(rd_slurp_path(dir, 0, &d, &n), -EISDIR);
	ck_assert_int_eq(rd_slurp_path("/nonexistent/x", 0, &d, &n), -ENOENT);
	write_file(path, "", 0);
	ck_assert_int_eq(rd_slurp_path(path, 0, &d, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(d[0], 0);
	free(d);
}
END_TEST

/* a pipe: its bytes after the head already read, grown past 64 KiB */
START_TEST(slurp_pipe)
{
	int p[2];
	unsigned char *d;
	size_t n;
	pid_t pid;
	int st;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char buf[1000];

		close(p[0]);
		memset(buf, 'x', sizeof(buf));
		for (int i = 0; i < 200; i++)
			if (write(p[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				_exit(1);
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(rd_slurp(p[0], "head", 4, 0, &d, &n), 0);
	close(p[0]);
	ck_assert_uint_eq(n, 4 + 200000);
	ck_assert_int_eq(memcmp(d, "headxxx", 7), 0);
	ck_assert_int_eq(d[n - 1], 'x');
	ck_assert_int_eq(d[n], 0);
	free(d);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(st, 0);
}
END_TEST

/* doubles from 64 until need fits, the new elements zeroed */
START_TEST(grow)
{
	int *a = NULL;
	size_t cap = 0;

	ck_assert_int_eq(rd_grow((void **)&a, &cap, 1, sizeof(*a)), 0);
	ck_assert_uint_eq(cap, 64);
	a[63] = 5;
	ck_assert_int_eq(rd_grow((void **)&a, &cap, 64, sizeof(*a)), 0);
	ck_assert_uint_eq(cap, 64);
	ck_assert_int_eq(rd_grow((void **)&a, &cap, 200, sizeof(*a)), 0);
	ck_assert_uint_eq(cap, 256);
	ck_assert_int_eq(a[63], 5);
	for (size_t i = 64; i < cap; i++)
		ck_assert_int_eq(a[i], 0);
	ck_assert_int_eq(rd_grow((void **)&a, &cap, SIZE_MAX / 2, sizeof(*a)), -ENOMEM);
	ck_assert_uint_eq(cap, 256);
	free(a);
}
END_TEST

/* a regular file of this user; a link or a FIFO at the name is refused */
START_TEST(open_own)
{
	char link[600], fifo[600];
	struct stat st;
	int fd;

	write_file(path, "x", 1);
	fd = rd_open_own(path, O_RDONLY, &st);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(st.st_size, 1);
	close(fd);
	snprintf(link, sizeof(link), "%s/link", dir);
	ck_assert_int_eq(symlink(path, link), 0);
	ck_assert_int_eq(rd_open_own(link, O_RDONLY, &st), -ELOOP);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(rd_open_own(fifo, O_RDONLY, &st), -EPERM);
}
END_TEST

/* a FIFO, a directory or a larger file at a name a recording gives: never waited on */
START_TEST(open_regular)
{
	char fifo[600];
	unsigned char *d;
	struct stat st;
	size_t n;
	int fd;

	write_file(path, "xyz", 3);
	fd = rd_open_regular(path, 3, &st);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(st.st_size, 3);
	close(fd);
	ck_assert_int_eq(rd_open_regular(path, 2, NULL), -EFBIG);
	ck_assert_int_eq(rd_open_regular(dir, 0, NULL), -EISDIR);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	/* no writer: a blocking open would wait here forever */
	ck_assert_int_eq(rd_open_regular(fifo, 0, NULL), -RD_ENOTREG);
	ck_assert_int_eq(rd_slurp_path(fifo, 0, &d, &n), -RD_ENOTREG);
	ck_assert_str_eq(rd_strerror(-RD_ENOTREG), "not a regular file");
	ck_assert_str_eq(rd_strerror(-ENOENT), strerror(ENOENT));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("read/util");
	TCase *tc = tcase_create("Helpers");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, slurp_file);
	tcase_add_test(tc, slurp_pipe);
	tcase_add_test(tc, grow);
	tcase_add_test(tc, open_own);
	tcase_add_test(tc, open_regular);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
