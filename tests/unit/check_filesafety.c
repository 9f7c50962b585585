/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * No output follows a planted link.  Each output the library writes (perf
 * map, jitdump, trace, statistics, and the statistics' old temporary name)
 * has a name predictable from the pid; here a symbolic link to a victim
 * file, a hard link to it, a FIFO or a directory is planted at that name
 * in a sticky world-writable directory before the session opens, by the
 * same user (the name is replaced safely) and by another user (a clear
 * error).  Either way the victim keeps its bytes, and an output that was
 * written is a regular 0644 file of its own holding the real data.
 *
 * Run as root, each test gets a private tmpfs on /tmp (a mount namespace
 * of its own), so the perf map's real directory is a sticky one nobody
 * else uses, and the other-user and fork cases can run; elsewhere the
 * outputs go to a temporary directory, the perf map to /tmp, and those
 * cases say they were not run.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "tests/check-subr.h"

#define VICTIM_DATA "precious bytes that no output may touch\n"
#define FN_NAME     "safe_fn"

enum plant { SYMLINK, HARDLINK, FIFO, DIRECTORY, NPLANTS };
static const char *const plant_names[] = { "symbolic link", "hard link", "FIFO", "directory" };

/* Every name the library creates for pid, in dir; the perf map's is fixed. */
enum out { PERFMAP, JITDUMP, TRACE, STATS, STATS_OLDTMP, NOUTS };
static const struct {
	const char *what;
	unsigned    bit;
	const char *fmt;            /* %s the directory, %d the pid */
	int         final;          /* the output's own name (else a temporary's) */
} outs[NOUTS] = {
	[PERFMAP]      = { "perf map", JITPERF_PERFMAP, NULL, 1 },    /* /tmp/perf-%d.map */
	[JITDUMP]      = { "jitdump", JITPERF_JITDUMP, "%s/jit-%d.dump", 1 },
	[TRACE]        = { "trace", JITPERF_TRACE, "%s/jitperf-%d.trace", 1 },
	[STATS]        = { "statistics", JITPERF_STATS, "%s/jitperf-%d.stats", 1 },
	/* where earlier versions wrote the statistics before renaming them */
	[STATS_OLDTMP] = { "old statistics temporary", JITPERF_STATS, "%s/jitperf-%d.stats.tmp", 0 },
};

static char root[256];          /* the sandbox */
static char shared[300];        /* sticky, world-writable: the outputs' directory */
static char victim[320];        /* a file of the session's user, outside shared */
static int errfd = -1;          /* where the library's stderr is caught */
static struct stat victim_st;
static int private_tmp;         /* root is a private tmpfs mounted on /tmp */
static unsigned char code[64];

static void name_of(enum out o, pid_t pid, char *buf, size_t len)
{
	if (o == PERFMAP) {
		snprintf(buf, len, "/tmp/perf-%d.map", (int)pid);
		return;
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(buf, len, outs[o].fmt, shared, (int)pid);
#pragma GCC diagnostic pop
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

static void setup(void)
{
	char home[300];

	clear_env();
	private_tmp = geteuid() == 0 && mount_private_tmpfs("/tmp", "64m") == 0;
	if (private_tmp) {
		snprintf(root, sizeof(root), "/tmp");
	} else {
		snprintf(root, sizeof(root), "/tmp/jitperf-check.XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(root));
	}
	snprintf(shared, sizeof(shared), "%s/shared", root);
	ck_assert_int_eq(mkdir(shared, 0755), 0);
	ck_assert_int_eq(chmod(shared, 01777), 0);      /* like /tmp */
	snprintf(home, sizeof(home), "%s/home", root);
	ck_assert_int_eq(mkdir(home, 0755), 0);
	snprintf(victim, sizeof(victim), "%s/victim", home);
	write_file(victim, VICTIM_DATA, 0644);
	ck_assert_int_eq(stat(victim, &victim_st), 0);
	/* opened now: the test may not be able to create it once it is nobody */
	snprintf(home, sizeof(home), "%s/home/stderr", root);
	errfd = open(home, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(errfd, 0);
}

static void teardown(void)
{
	char map[64], cmd[300];

	close(errfd);
	if (private_tmp)
		return;         /* goes with the test's mount namespace */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	unlink(map);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

/* ---- planting, and what must hold afterwards */

static void plant(enum plant p, const char *path)
{
	char inside[400];

	switch (p) {
	case SYMLINK:
		ck_assert_int_eq(symlink(victim, path), 0);
		break;
	case HARDLINK:
		ck_assert_int_eq(link(victim, path), 0);
		break;
	case FIFO:
		ck_assert_int_eq(mkfifo(path, 0666), 0);
		break;
	case DIRECTORY:
		ck_assert_int_eq(mkdir(path, 0755), 0);
		snprintf(inside, sizeof(inside), "%s/inside", path);
		write_file(inside, "inside\n", 0644);
		break;
	default:
		ck_abort();
	}
}

/* The planted object is still there, unchanged. */
static void check_plant_kept(enum plant p, const char *path)
{
	char target[400] = "", inside[400];
	struct stat st;
	size_t len;
	unsigned char *s;

	ck_assert_msg(lstat(path, &st) == 0, "%s: the planted %s is gone", path, plant_names[p]);
	switch (p) {
	case SYMLINK:
		ck_assert(S_ISLNK(st.st_mode));
		ck_assert_int_gt(readlink(path, target, sizeof(target) - 1), 0);
		ck_assert_str_eq(target, victim);
		break;
	case HARDLINK:
		ck_assert_uint_eq(st.st_ino, victim_st.st_ino);
		break;
	case FIFO:
		ck_assert(S_ISFIFO(st.st_mode));
		break;
	case DIRECTORY:
		ck_assert(S_ISDIR(st.st_mode));
		snprintf(inside, sizeof(inside), "%s/inside", path);
		s = slurp(inside, &len);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq((char *)s, "inside\n");
		free(s);
		break;
	default:
		ck_abort();
	}
}

/* The victim has its inode, its bytes, its mode; nlink says how many names. */
static void check_victim(nlink_t nlink)
{
	struct stat st;
	size_t len;
	unsigned char *s;

	ck_assert_int_eq(lstat(victim, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_ino, victim_st.st_ino);
	ck_assert_uint_eq(st.st_mode, victim_st.st_mode);
	ck_assert_uint_eq(st.st_nlink, nlink);
	s = slurp(victim, &len);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(!strcmp((char *)s, VICTIM_DATA), "the victim file was changed: now %zu bytes",
		      len);
	free(s);
}

/* path is a regular 0644 file of its own holding output o of pid, naming fn. */
static void check_output(enum out o, const char *path, pid_t pid, const char *fn)
{
	struct stat st;
	unsigned char *s;
	size_t len;
	char head[64];
	uint32_t magic;

	ck_assert_msg(lstat(path, &st) == 0, "%s: no output", path);
	ck_assert_msg(S_ISREG(st.st_mode), "%s is not a regular file", path);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_uint_eq(st.st_nlink, 1);
	ck_assert_uint_ne(st.st_ino, victim_st.st_ino);
	ck_assert_uint_eq(st.st_uid, geteuid());
	s = slurp(path, &len);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(memmem(s, len, fn, strlen(fn)), "%s does not name %s", path, fn);
	switch (o) {
	case PERFMAP:
		snprintf(head, sizeof(head), "%lx 40 %s\n", (unsigned long)(uintptr_t)code, fn);
		ck_assert_str_eq((char *)s, head);
		break;
	case JITDUMP:
		ck_assert_uint_ge(len, 40);
		memcpy(&magic, s, 4);
		ck_assert_uint_eq(magic, 0x4A695444u);  /* "JiTD" */
		break;
	case TRACE:
		ck_assert_uint_ge(len, 8);
		ck_assert_mem_eq(s, "JITPTRC\n", 8);
		break;
	case STATS:
		snprintf(head, sizeof(head), "# jitperf-stats 2 pid=%d ", (int)pid);
		ck_assert_msg(!strncmp((char *)s, head, strlen(head)), "stats header: %.60s", s);
		snprintf(head, sizeof(head), "\n%s\t1\t", fn);
		ck_assert_ptr_nonnull(strstr((char *)s, head));
		break;
	default:
		ck_abort();
	}
	free(s);
}

/* Nothing but the expected names in shared: no temporary file left over. */
static void check_no_leftovers(const char *const *expect, size_t n)
{
	struct dirent *e;
	DIR *d = opendir(shared);

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		size_t i;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		for (i = 0; i < n; i++)
			if (expect[i] && !strcmp(strrchr(expect[i], '/') + 1, e->d_name))
				break;
		ck_assert_msg(i < n, "left in %s: %s", shared, e->d_name);
	}
	closedir(d);
}

/*
 * One session writing output o: open, one function loaded and called once,
 * close.  Returns the first error; *at says which call (0 open, 1 close).
 */
static int run_session(enum out o, const char *fn, int *at)
{
	struct jitperf_options opts = { .size = sizeof(opts), .outputs = outs[o].bit, .dir = shared };
	jitperf_fn id;
	jitperf *jp;
	int err;

	*at = 0;
	err = jitperf_open(&jp, &opts);
	if (err)
		return err;
	ck_assert_int_eq(jitperf_code_load(jp, fn, code, 0x40, NULL), 0);
	id = jitperf_fn_register(jp, fn, code, 0x40);
	ck_assert_uint_ne(id, 0);
	jitperf_enter(id);
	jitperf_exit(id);
	*at = 1;
	return jitperf_close(jp);
}

/* Run with stderr caught (JITPERF_DEBUG=1); the text comes back in msg. */
static int run_session_debug(enum out o, int *at, char *msg, size_t len)
{
	int saved, err;
	ssize_t n;

	ck_assert_int_eq(ftruncate(errfd, 0), 0);
	fflush(stderr);
	saved = dup(2);
	dup2(errfd, 2);
	setenv("JITPERF_DEBUG", "1", 1);
	err = run_session(o, FN_NAME, at);
	unsetenv("JITPERF_DEBUG");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(errfd, msg, len - 1, 0);
	msg[n > 0 ? n : 0] = 0;
	return err;
}

/* ---- the same user planted it (or left it): replaced, never followed */

START_TEST(test_same_user)
{
	enum out o = (enum out)(_i / NPLANTS);
	enum plant p = (enum plant)(_i % NPLANTS);
	enum out real = o == STATS_OLDTMP ? STATS : o;
	char at_name[400], out_name[400], msg[1024], expect[600];
	const char *names[2] = { at_name, NULL };
	int err, at;

	name_of(o, getpid(), at_name, sizeof(at_name));
	name_of(real, getpid(), out_name, sizeof(out_name));
	plant(p, at_name);
	err = run_session_debug(real, &at, msg, sizeof(msg));
	if (p == DIRECTORY && outs[o].final) {
		/* a directory cannot be replaced: the session says so and writes nothing */
		ck_assert_msg(err == -EISDIR, "%s over a directory: %d (%s)", outs[o].what, err,
			      jitperf_strerror(err));
		ck_assert_int_eq(at, real == STATS);   /* statistics are written at close */
		snprintf(expect, sizeof(expect), "jitperf: cannot create %s: Is a directory\n",
			 out_name);
		ck_assert_ptr_nonnull(strstr(msg, expect));
		check_plant_kept(p, at_name);
		check_victim(1);
	} else {
		ck_assert_msg(err == 0, "%s with a %s planted at %s: %s", outs[o].what,
			      plant_names[p], at_name, jitperf_strerror(err));
		check_output(real, out_name, getpid(), FN_NAME);
		if (outs[o].final) {
			/* replaced, and JITPERF_DEBUG says so */
			snprintf(expect, sizeof(expect), "jitperf: %s exists: replaced, neither "
				 "followed nor opened\n", out_name);
			ck_assert_str_eq(msg, expect);
			check_victim(1);        /* a hard link planted there is gone */
		} else {
			ck_assert_str_eq(msg, "");
			check_plant_kept(p, at_name);   /* a temporary name is never used */
			check_victim(p == HARDLINK ? 2 : 1);
		}
	}
	if (real != PERFMAP) {
		names[1] = out_name;
		check_no_leftovers(names, 2);
	}
}
END_TEST

/* ---- another user planted it in the sticky directory: a clear error */

static void become_nobody(void)
{
	struct passwd *pw = getpwnam("nobody");

	ck_assert_ptr_nonnull(pw);
	ck_assert_int_eq(setgroups(0, NULL), 0);
	ck_assert_int_eq(setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid), 0);
	ck_assert_int_eq(setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid), 0);
}

START_TEST(test_other_user)
{
	enum out o = (enum out)(_i / NPLANTS);
	enum plant p = (enum plant)(_i % NPLANTS);
	enum out real = o == STATS_OLDTMP ? STATS : o;
	char at_name[400], out_name[400], msg[1024], expect[600];
	const char *names[2] = { at_name, NULL };
	struct passwd *pw;
	int err, at;

	if (!private_tmp) {
		fprintf(stderr, "check_filesafety: not root: other-user case not run\n");
		return;
	}
	/* the victim is the session user's own file, one it could write */
	pw = getpwnam("nobody");
	ck_assert_ptr_nonnull(pw);
	ck_assert_int_eq(chown(victim, pw->pw_uid, pw->pw_gid), 0);
	ck_assert_int_eq(stat(victim, &victim_st), 0);
	name_of(o, getpid(), at_name, sizeof(at_name));
	name_of(real, getpid(), out_name, sizeof(out_name));
	plant(p, at_name);              /* as root: another user */
	become_nobody();
	err = run_session_debug(real, &at, msg, sizeof(msg));
	if (outs[o].final && p == HARDLINK) {
		/* a hard link to the session user's own file is that user's
		 * inode: the sticky bit lets it be replaced, and it is */
		ck_assert_msg(err == 0, "%s over a hard link: %s", outs[o].what,
			      jitperf_strerror(err));
		snprintf(expect, sizeof(expect), "jitperf: %s exists: replaced, neither "
			 "followed nor opened\n", out_name);
		ck_assert_str_eq(msg, expect);
		check_output(real, out_name, getpid(), FN_NAME);
		check_victim(1);
		return;
	}
	if (outs[o].final) {
		/* the sticky bit keeps another user's name from being replaced */
		ck_assert_msg(err == -EPERM, "%s over another user's %s: %d (%s)", outs[o].what,
			      plant_names[p], err, jitperf_strerror(err));
		ck_assert_int_eq(at, real == STATS);
		snprintf(expect, sizeof(expect),
			 "jitperf: cannot create %s: Operation not permitted\n", out_name);
		ck_assert_ptr_nonnull(strstr(msg, expect));
	} else {
		ck_assert_msg(err == 0, "%s with another user's %s at %s: %s", outs[o].what,
			      plant_names[p], at_name, jitperf_strerror(err));
		check_output(real, out_name, getpid(), FN_NAME);
		names[1] = out_name;
	}
	check_plant_kept(p, at_name);
	check_victim(p == HARDLINK ? 2 : 1);
	if (real != PERFMAP)
		check_no_leftovers(names, 2);
}
END_TEST

/* ---- a fork child's names are predictable too */

#define CHILD_PID 100

/* pid 1 of a new pid namespace: open a session, plant links at every name
 * of CHILD_PID, fork it, let the child register and close.  Exit status:
 * the child's, 77 when the child's pid could not be chosen. */
static int fork_in_namespace(void)
{
	struct jitperf_options opts = { .size = sizeof(opts), .dir = shared,
		.outputs = JITPERF_PERFMAP | JITPERF_JITDUMP | JITPERF_TRACE | JITPERF_STATS };
	char path[400];
	jitperf *jp;
	pid_t pid;
	int st, fd;

	if (jitperf_open(&jp, &opts))
		return 10;
	for (enum out o = PERFMAP; o < NOUTS; o++) {
		name_of(o, CHILD_PID, path, sizeof(path));
		if (symlink(victim, path))
			return 11;
	}
	/* the next pid of this namespace is CHILD_PID */
	fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	if (fd < 0 || dprintf(fd, "%d", CHILD_PID - 1) < 0)
		return 77;
	close(fd);
	pid = fork();
	if (pid == 0) {
		jitperf_fn id;

		if (getpid() != CHILD_PID)
			_exit(77);
		if (jitperf_code_load(jp, "child_fn", code, 0x40, NULL))
			_exit(12);
		id = jitperf_fn_register(jp, "child_fn", code, 0x40);
		jitperf_enter(id);
		jitperf_exit(id);
		_exit(jitperf_close(jp) ? 13 : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 14;
	jitperf_close(jp);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 15;
}

/* Run fork_in_namespace as pid 1 of a new pid namespace; its exit status.
 * The namespace is entered by a child of ours: once its init is gone, no
 * process in it can fork, not even the leak checker of a sanitizer build. */
static int in_pid_namespace(void)
{
	pid_t pid;
	int st;

	if (unshare(CLONE_NEWPID) < 0)
		return 77;
	pid = fork();
	if (pid == 0)
		_exit(fork_in_namespace());
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 16;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 17;
}

START_TEST(test_fork_child)
{
	char path[400], oldtmp[400];
	pid_t pid;
	int st;

	if (!private_tmp) {
		fprintf(stderr, "check_filesafety: not root: fork case not run\n");
		return;
	}
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(in_pid_namespace());
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77) {
		fprintf(stderr, "check_filesafety: no pid namespace or cannot choose the "
			"child's pid: fork case not run\n");
		return;
	}
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	for (enum out o = PERFMAP; o < STATS_OLDTMP; o++) {
		name_of(o, CHILD_PID, path, sizeof(path));
		check_output(o, path, CHILD_PID, "child_fn");
	}
	name_of(STATS_OLDTMP, CHILD_PID, oldtmp, sizeof(oldtmp));
	check_plant_kept(SYMLINK, oldtmp);
	check_victim(1);
}
END_TEST

static Suite *filesafety_suite(void)
{
	Suite *s = suite_create("File safety");
	TCase *tc;

	/* loaded machines and sanitizer builds need more than Check's 4 s; a
	 * session that opened a planted FIFO would still hang into the timeout */
	tc = tcase_create("Planted by the same user");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_same_user, 0, NOUTS * NPLANTS);
	suite_add_tcase(s, tc);

	tc = tcase_create("Planted by another user");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_other_user, 0, NOUTS * NPLANTS);
	suite_add_tcase(s, tc);

	tc = tcase_create("Fork child");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fork_child);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	/* each test changes its process's mount namespace and user: never in
	 * the runner itself, whatever CK_FORK says */
	return run_suite_mode(filesafety_suite(), CK_FORK);
}
