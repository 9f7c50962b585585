/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the core Check suites: temp dirs, whole-file reads. */
#ifndef JITPERF_CORE_CHECK_H
#define JITPERF_CORE_CHECK_H

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "jitperf.h"

/* Unset every variable the library reads, so tests start from nothing. */
static inline void clear_env(void)
{
	unsetenv("JITPERF");
	unsetenv("JITPERF_DIR");
	unsetenv("JITPERF_SAMPLE");
	unsetenv("JITPERF_COUNTERS");
	unsetenv("JITPERF_CLOCK");
	unsetenv("JITPERF_DEBUG");
}

static inline char *make_tmpdir(void)
{
	char *d = strdup("/tmp/jitperf-check.XXXXXX");

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static inline void remove_tmpdir(char *d)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	ck_assert_int_eq(system(cmd), 0);
	free(d);
}

/* The whole file, NUL-terminated; *len gets its size.  NULL if missing. */
static inline unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	buf[st.st_size] = 0;
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static inline int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
