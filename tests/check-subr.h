/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every Check suite shares: running the suite, a temporary directory
 * per test, a clean environment, whole-file reads, a private tmpfs.
 */
#ifndef JITPERF_CHECK_SUBR_H
#define JITPERF_CHECK_SUBR_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "jitperf.h"

/*
 * Whether the suite runs under user-mode emulation (a build for another
 * processor, run by qemu-user; tests/local.mk sets EMULATED): no perf
 * events there, and timings mean nothing.
 */
static inline int emulated(void)
{
	const char *e = getenv("EMULATED");

	return e && *e;
}

/* a sanitizer build (configure --enable-sanitizers): its probes are instrumented code */
static inline int sanitized(void)
{
	const char *s = getenv("SANITIZERS");

	return s && *s;
}

/* Unset every variable the library reads, so tests start from nothing. */
static inline void clear_env(void)
{
	unsetenv("JITPERF");
	unsetenv("JITPERF_DIR");
	unsetenv("JITPERF_SAMPLE");
	unsetenv("JITPERF_COUNTERS");
	unsetenv("JITPERF_CLOCK");
	unsetenv("JITPERF_DEBUG");
	unsetenv("JITPERF_TRACE_MAX");
	unsetenv("JITPERF_TRACE_RING");
	unsetenv("JITPERF_TRACE_MIN");
	unsetenv("JITPERF_TIER_TAGS");
}

static inline char *make_tmpdir(void)
{
	char *d = strdup("/tmp/jitperf-check.XXXXXX");

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static inline int remove_entry(const char *path, const struct stat *st, int flag,
			       struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The directory and all it holds; NULL is a no-op. */
static inline void remove_tmpdir(char *d)
{
	if (d)
		nftw(d, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
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

/*
 * Mount a tmpfs of size (e.g. "16k") on mnt, visible to this process only:
 * it is made in a mount namespace of its own (root only), so it goes away
 * with the process however the test ends -- a failed assertion, a timeout
 * kill -- and no stale mount is ever left behind.  0, or -1 with errno.
 */
static inline int mount_private_tmpfs(const char *mnt, const char *size)
{
	char opt[64];

	if (unshare(CLONE_NEWNS) < 0)
		return -1;
	/* "/" is usually a shared mount: without this the tmpfs would
	 * propagate back to the namespace we came from */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	snprintf(opt, sizeof(opt), "size=%s", size);
	return mount("jitperf-check", mnt, "tmpfs", 0, opt);
}

/*
 * The perf maps of the suite's test processes go when the suite ends,
 * whether their tests passed or failed: perf reads maps in /tmp only, and
 * pid_max being small, a later process given one of these pids would find
 * the map stale, perhaps root's.  A failed forked test ends in _exit()
 * (Check's), so nothing can run in it after the failure: the pids of the
 * tests Check forks are noted, in memory shared with them, as each starts,
 * and the suite's process removes their maps (and its own, for CK_FORK=no)
 * as it exits.  A child that a test forks is not noted: the test may be
 * checking what that child wrote, and removes its map itself.
 */
#define TEST_PIDS_MAX 4096
/*
 * A recorder's knock on this process's JITPERF=standby socket: its reply
 * in reply, or "" when nothing listens.
 */
static inline void knock(const char *req, char *reply, size_t len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "jitperf-standby-%d",
			 (int)getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	size_t have = 0;
	ssize_t r;

	reply[0] = '\0';
	ck_assert_int_ge(fd, 0);
	if (connect(fd, (struct sockaddr *)&a,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n))) {
		close(fd);
		return;
	}
	ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (have < len - 1 && (r = read(fd, reply + have, len - 1 - have)) > 0)
		have += (size_t)r;
	reply[have] = '\0';
	close(fd);
}

static pid_t suite_pid;
static pid_t *test_pids;        /* shared: [0] the count, then the pids */

static inline void note_test_pid(void)
{
	if (!test_pids || getppid() != suite_pid || test_pids[0] >= TEST_PIDS_MAX - 1)
		return;
	test_pids[++test_pids[0]] = getpid();
}

static inline void remove_perf_map(pid_t pid)
{
	char map[64];

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	unlink(map);
}

static inline void remove_test_perf_maps(void)
{
	if (getpid() != suite_pid)      /* a test, exiting */
		return;
	for (pid_t i = 1; test_pids && i <= test_pids[0]; i++)
		remove_perf_map(test_pids[i]);
	remove_perf_map(suite_pid);
}

static inline void track_test_perf_maps(void)
{
	void *p = mmap(NULL, TEST_PIDS_MAX * sizeof(pid_t), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	suite_pid = getpid();
	test_pids = p == MAP_FAILED ? NULL : p;
	pthread_atfork(NULL, NULL, note_test_pid);
	atexit(remove_test_perf_maps);
}

/* Run a suite: exit status 0 when every test passed. */
static inline int run_suite_mode(Suite *s, enum fork_status mode)
{
	SRunner *sr = srunner_create(s);
	int failed;

	track_test_perf_maps();
	if (mode != CK_FORK_GETENV)
		srunner_set_fork_status(sr, mode);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Forked as CK_FORK says (CK_FORK=no under valgrind). */
static inline int run_suite(Suite *s)
{
	return run_suite_mode(s, CK_FORK_GETENV);
}

#endif
