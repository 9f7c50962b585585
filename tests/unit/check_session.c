/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sessions: the options struct's size rules, the JITPERF* environment, the
 * inactive no-op session, the default session, jitperf_strerror.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "tests/check-subr.h"
#include "lib/session.h"    /* to see what the session stored for the instrumentation side */

static char *dir;
static unsigned char code[64];

static void setup(void)
{
	clear_env();
	dir = make_tmpdir();
	setenv("JITPERF_DIR", dir, 1);
}

static void teardown(void)
{
	char map[64];

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	unlink(map);
	clear_env();
	remove_tmpdir(dir);
}

static int files_in(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		if (e->d_name[0] != '.')
			n++;
	closedir(dp);
	return n;
}

/* ---- options */

START_TEST(test_null_options_inactive)
{
	jitperf *jp;

	ck_assert_int_eq(jitperf_open(&jp, NULL), 0);
	ck_assert_ptr_nonnull(jp);
	ck_assert_uint_eq(jitperf_outputs(jp), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(jitperf_open(NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(test_options_size)
{
	struct {
		struct jitperf_options o;
		uint64_t future[2];
	} big;
	jitperf *jp = (jitperf *)1;

	memset(&big, 0, sizeof(big));
	big.o.outputs = JITPERF_JITDUMP;
	big.o.dir = dir;
	/* an older, shorter struct: the missing fields read as 0 */
	big.o.size = offsetof(struct jitperf_options, dir);
	ck_assert_int_eq(jitperf_open(&jp, &big.o), 0);
	ck_assert_uint_eq(jitperf_outputs(jp), JITPERF_JITDUMP);
	ck_assert_str_eq(jp->dir, dir);         /* .dir was beyond size: $JITPERF_DIR */
	ck_assert_int_eq(jitperf_close(jp), 0);
	/* a newer, longer struct whose unknown tail is zero */
	big.o.size = sizeof(big);
	ck_assert_int_eq(jitperf_open(&jp, &big.o), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	/* ... with something we do not know about set: refused */
	big.future[1] = 42;
	ck_assert_int_eq(jitperf_open(&jp, &big.o), -EINVAL);
	ck_assert_ptr_null(jp);
	big.future[1] = 0;
	/* no size at all, or garbage */
	big.o.size = 0;
	ck_assert_int_eq(jitperf_open(&jp, &big.o), -EINVAL);
	big.o.size = (size_t)1 << 40;
	ck_assert_int_eq(jitperf_open(&jp, &big.o), -EINVAL);
	/* output bits that do not exist */
	big.o.size = sizeof(big.o);
	big.o.outputs = 1u << 9;
	ck_assert_int_eq(jitperf_open(&jp, &big.o), -EINVAL);
}
END_TEST

START_TEST(test_options_override_env)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_PERFMAP, .dir = "/",
				     .sample_every = 5, .counters = "cycles" };
	jitperf *jp;

	setenv("JITPERF", "jitdump", 1);
	setenv("JITPERF_SAMPLE", "9", 1);
	setenv("JITPERF_COUNTERS", "instructions", 1);
	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	ck_assert_uint_eq(jitperf_outputs(jp), JITPERF_PERFMAP);
	ck_assert_str_eq(jp->dir, "/");
	ck_assert_uint_eq(jp->sample_every, 5);
	ck_assert_str_eq(jp->counters, "cycles");
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(files_in(dir), 0);     /* no jitdump: options won over $JITPERF */
}
END_TEST

/* ---- environment */

static int open_env(const char *value, unsigned *outputs)
{
	jitperf *jp;
	int err;

	if (value)
		setenv("JITPERF", value, 1);
	else
		unsetenv("JITPERF");
	err = jitperf_open(&jp, NULL);
	if (err)
		return err;
	*outputs = jitperf_outputs(jp);
	ck_assert_int_eq(jitperf_close(jp), 0);
	return 0;
}

START_TEST(test_env_outputs)
{
	unsigned out = 99;

	ck_assert_int_eq(open_env(NULL, &out), 0);
	ck_assert_uint_eq(out, 0);
	ck_assert_int_eq(open_env("", &out), 0);
	ck_assert_uint_eq(out, 0);
	ck_assert_int_eq(open_env("perfmap", &out), 0);
	ck_assert_uint_eq(out, JITPERF_PERFMAP);
	ck_assert_int_eq(open_env("perfmap,jitdump", &out), 0);
	ck_assert_uint_eq(out, JITPERF_PERFMAP | JITPERF_JITDUMP);
	ck_assert_int_eq(open_env(" jitdump , perfmap ", &out), 0);
	ck_assert_uint_eq(out, JITPERF_PERFMAP | JITPERF_JITDUMP);
	ck_assert_int_eq(open_env("jitdump,jitdump", &out), 0);
	ck_assert_uint_eq(out, JITPERF_JITDUMP);
	ck_assert_int_eq(open_env("all", &out), 0);
	ck_assert_uint_eq(out, JITPERF_PERFMAP | JITPERF_JITDUMP | JITPERF_TRACE | JITPERF_STATS);
	ck_assert_int_eq(open_env("trace,stats", &out), 0);
	ck_assert_uint_eq(out, JITPERF_TRACE | JITPERF_STATS);
	ck_assert_int_eq(open_env("standby", &out), 0);
	ck_assert_uint_eq(out, JITPERF_STANDBY | JITPERF_PERFMAP | JITPERF_JITDUMP);
	ck_assert_int_eq(open_env("standby,stats", &out), 0);
	ck_assert_uint_eq(out, JITPERF_STANDBY | JITPERF_PERFMAP | JITPERF_JITDUMP | JITPERF_STATS);
	ck_assert_int_eq(open_env("bogus", &out), -EINVAL);
	ck_assert_int_eq(open_env("perfmap,bogus", &out), -EINVAL);
	ck_assert_int_eq(open_env("perfmaps", &out), -EINVAL);
	ck_assert_int_eq(open_env("PERFMAP", &out), -EINVAL);
}
END_TEST

START_TEST(test_env_dir)
{
	char path[600];
	jitperf *jp;
	size_t len;
	unsigned char *buf;

	setenv("JITPERF", "jitdump", 1);
	ck_assert_int_eq(jitperf_open(&jp, NULL), 0);
	ck_assert_str_eq(jp->dir, dir);
	ck_assert_int_eq(jitperf_close(jp), 0);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	buf = slurp(path, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(len, 40 + 16);        /* header + CODE_CLOSE */
	free(buf);
	/* unset: the current directory, made absolute */
	unsetenv("JITPERF_DIR");
	unsetenv("JITPERF");
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(jitperf_open(&jp, NULL), 0);
	ck_assert_str_eq(jp->dir, dir);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(chdir("/"), 0);
}
END_TEST

START_TEST(test_env_sample_counters_clock)
{
	jitperf *jp;

	setenv("JITPERF_SAMPLE", "16", 1);
	setenv("JITPERF_COUNTERS", "cycles,instructions", 1);
	setenv("JITPERF_CLOCK", "tsc", 1);
	ck_assert_int_eq(jitperf_open(&jp, NULL), 0);
	ck_assert_uint_eq(jp->sample_every, 16);
	ck_assert_str_eq(jp->counters, "cycles,instructions");
	ck_assert_str_eq(jp->clock, "tsc");
	ck_assert_int_eq(jitperf_close(jp), 0);

	clear_env();
	ck_assert_int_eq(jitperf_open(&jp, NULL), 0);
	/* the defaults: adaptive sampling, 10000 timed calls/s/thread, 32 MiB */
	ck_assert_uint_eq(jp->sample_every, JITPERF_SAMPLE_ADAPTIVE);
	ck_assert_uint_eq(jp->timed_per_sec, 10000);
	ck_assert_uint_eq(jp->trace_max, 32u << 20);
	ck_assert_uint_eq(jp->trace_ring, 0);
	ck_assert_uint_eq(jp->trace_min_ns, 0);
	ck_assert_ptr_null(jp->counters);
	ck_assert_ptr_null(jp->clock);
	ck_assert_int_eq(jitperf_close(jp), 0);

	setenv("JITPERF_SAMPLE", "0", 1);               /* count only */
	setenv("JITPERF_TRACE_MAX", "1G", 1);
	setenv("JITPERF_TRACE_RING", "4MiB", 1);
	setenv("JITPERF_TRACE_MIN", "10us", 1);
	ck_assert_int_eq(jitperf_open(&jp, NULL), 0);
	ck_assert_uint_eq(jp->sample_every, JITPERF_SAMPLE_NONE);
	ck_assert_uint_eq(jp->trace_max, 1u << 30);
	ck_assert_uint_eq(jp->trace_ring, 4u << 20);
	ck_assert_uint_eq(jp->trace_min_ns, 10000);
	ck_assert_int_eq(jitperf_close(jp), 0);
	setenv("JITPERF_SAMPLE", "auto:500", 1);
	setenv("JITPERF_TRACE_MAX", "0", 1);            /* no limit of its own */
	ck_assert_int_eq(jitperf_open(&jp, NULL), 0);
	ck_assert_uint_eq(jp->sample_every, JITPERF_SAMPLE_ADAPTIVE);
	ck_assert_uint_eq(jp->timed_per_sec, 500);
	ck_assert_uint_eq(jp->trace_max, JITPERF_UNLIMITED);
	ck_assert_int_eq(jitperf_close(jp), 0);
	{       /* options win over the environment */
		struct jitperf_options o = { .size = sizeof(o), .sample_every = 3,
					     .trace_max = 1 << 20, .trace_min_ns = 7 };

		ck_assert_int_eq(jitperf_open(&jp, &o), 0);
		ck_assert_uint_eq(jp->sample_every, 3);
		ck_assert_uint_eq(jp->trace_max, 1 << 20);
		ck_assert_uint_eq(jp->trace_ring, 4u << 20);
		ck_assert_uint_eq(jp->trace_min_ns, 7);
		ck_assert_int_eq(jitperf_close(jp), 0);
	}
	unsetenv("JITPERF_TRACE_MAX");
	unsetenv("JITPERF_TRACE_RING");
	unsetenv("JITPERF_TRACE_MIN");

	static const char *const bad[][2] = {
		{ "JITPERF_SAMPLE", "12x" }, { "JITPERF_SAMPLE", "-3" },
		{ "JITPERF_SAMPLE", "auto:0" }, { "JITPERF_SAMPLE", "auto:" },
		{ "JITPERF_SAMPLE", "automatic" }, { "JITPERF_TRACE_MAX", "5X" },
		{ "JITPERF_TRACE_MAX", "-1" }, { "JITPERF_TRACE_RING", "1T" },
		{ "JITPERF_TRACE_MIN", "10 fortnights" }, { "JITPERF_TRACE_MIN", "ms" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(bad[i][0], bad[i][1], 1);
		ck_assert_msg(jitperf_open(&jp, NULL) == -EINVAL, "%s=%s accepted", bad[i][0], bad[i][1]);
		unsetenv(bad[i][0]);
	}
	setenv("JITPERF_CLOCK", "rdtsc", 1);
	ck_assert_int_eq(jitperf_open(&jp, NULL), -EINVAL);
	setenv("JITPERF_CLOCK", "monotonic", 1);
	ck_assert_int_eq(jitperf_open(&jp, NULL), 0);
	ck_assert_str_eq(jp->clock, "monotonic");
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

/* Run jitperf_open(NULL) with stderr caught in a file; returns what was printed. */
static char *stderr_of_open(int *err)
{
	char path[600];
	size_t len;
	char *text;
	jitperf *jp;
	int fd, saved;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	*err = jitperf_open(&jp, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	if (!*err)
		jitperf_close(jp);
	text = (char *)slurp(path, &len);
	ck_assert_ptr_nonnull(text);
	unlink(path);
	return text;
}

START_TEST(test_debug_messages)
{
	char *text;
	int err;

	setenv("JITPERF", "perfmap,bogus", 1);
	text = stderr_of_open(&err);
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_str_eq(text, "");             /* silent unless asked */
	free(text);
	setenv("JITPERF_DEBUG", "1", 1);
	text = stderr_of_open(&err);
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_str_eq(text, "jitperf: JITPERF: unknown output 'bogus' "
			 "(expected perfmap, jitdump, trace, stats, all or standby)\n");
	free(text);
	setenv("JITPERF", "jitdump", 1);
	setenv("JITPERF_DIR", "/dev/null/dir", 1);     /* cannot be made */
	text = stderr_of_open(&err);
	ck_assert_int_eq(err, -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(text, "/dev/null/dir/jit-"));      /* names the file */
	free(text);
}
END_TEST

/* ---- inactive */

START_TEST(test_inactive_noop)
{
	jitperf *jp;
	uint64_t idx = 5;
	char map[64];

	/* pids are reused: a map an earlier process left under ours is not ours */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	unlink(map);
	ck_assert_int_eq(jitperf_open(&jp, NULL), 0);
	ck_assert_uint_eq(jitperf_outputs(jp), 0);
	/* every call succeeds and does nothing -- even with arguments it would refuse */
	ck_assert_int_eq(jitperf_code_load(jp, "f", code, sizeof(code), &idx), 0);
	ck_assert_uint_eq(idx, 0);
	ck_assert_int_eq(jitperf_code_load(jp, NULL, NULL, 0, NULL), 0);
	ck_assert_int_eq(jitperf_code_move(jp, 1, code), 0);
	ck_assert_int_eq(jitperf_code_unload(jp, 1), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(files_in(dir), 0);
	ck_assert_int_ne(access(map, F_OK), 0);
	ck_assert_int_eq(jitperf_close(NULL), 0);
	ck_assert_uint_eq(jitperf_outputs(NULL), 0);
}
END_TEST

/* ---- default session: in a child of its own, so each case starts fresh */

static int in_child(void (*fn)(void))
{
	char map[64];
	int st;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	unlink(map);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define REQUIRE(c) do { if (!(c)) _exit(__LINE__ % 200 + 1); } while (0)

static void default_active(void)
{
	jitperf *d = jitperf_default();
	uint64_t idx = 0;

	REQUIRE(d && d == jitperf_default());
	REQUIRE(jitperf_outputs(d) == (JITPERF_PERFMAP | JITPERF_JITDUMP));
	REQUIRE(jitperf_code_load(d, "dflt", code, 8, &idx) == 0 && idx == 1);
	/* NULL is the default session in every call that acts on one */
	{
		struct jitperf_code c = { .size = sizeof(c), .name = "ex", .addr = code + 8, .len = 4 };

		REQUIRE(jitperf_code_load(NULL, "null", code + 4, 4, &idx) == 0 && idx == 2);
		REQUIRE(jitperf_code_move(NULL, 2, code + 12) == 0);
		REQUIRE(jitperf_code_unload(NULL, 2) == 0);
		REQUIRE(jitperf_code_move(NULL, 2, code + 4) == -ENOENT);     /* gone from d */
		REQUIRE(jitperf_code_load_ex(NULL, &c, &idx) == 0 && idx == 3);
		REQUIRE(jitperf_code_unload(d, 3) == 0);
		REQUIRE(jitperf_fn_register(NULL, "f", code, 8) == 1);
		REQUIRE(jitperf_outputs(NULL) == 0);    /* asks of no session */
		REQUIRE(jitperf_close(NULL) == 0);      /* ends none */
		REQUIRE(jitperf_outputs(d) == (JITPERF_PERFMAP | JITPERF_JITDUMP));
	}
	/* closing it is allowed; it stays a valid, inactive session */
	REQUIRE(jitperf_close(d) == 0);
	REQUIRE(jitperf_default() == d);
	REQUIRE(jitperf_outputs(d) == 0);
	REQUIRE(jitperf_code_load(d, "late", code, 8, &idx) == 0 && idx == 0);
	REQUIRE(jitperf_close(d) == 0);
}

static void default_bad_env(void)
{
	jitperf *d = jitperf_default();
	uint64_t idx = 9;

	REQUIRE(d != NULL);                     /* never NULL */
	REQUIRE(jitperf_outputs(d) == 0);
	REQUIRE(jitperf_code_load(d, "x", code, 8, &idx) == 0 && idx == 0);
}

static void default_at_exit(void)
{
	REQUIRE(jitperf_code_load(jitperf_default(), "atexit", code, 8, NULL) == 0);
	exit(0);        /* atexit closes it: CODE_CLOSE must be in the file */
}

/* stderr into path while fn runs in a child; the child's status */
static int in_child_stderr(void (*fn)(void), const char *path)
{
	int st;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(99);
		fn();
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void default_traces(void)
{
	REQUIRE(jitperf_outputs(jitperf_default()) == JITPERF_JITDUMP);
	REQUIRE(jitperf_close(jitperf_default()) == 0);
}

static void default_inactive(void)
{
	REQUIRE(jitperf_outputs(jitperf_default()) == 0);
}

/*
 * JITPERF_DIR names a directory that does not exist: it is made, parents
 * too, as perf and uftrace make theirs.  One that cannot be made, or any
 * output JITPERF asks for that cannot be opened, is one line on stderr --
 * the environment is the user asking -- and the session stays inactive.
 * jitperf_open() says nothing: its caller has the error code.
 */
START_TEST(test_env_dir_made_or_said)
{
	char sub[600], path[700], err_path[700], want[900], *text;
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_JITDUMP };
	jitperf *jp;
	size_t len;
	int fd;

	snprintf(sub, sizeof(sub), "%s/new/sub", dir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
	setenv("JITPERF", "jitdump", 1);
	setenv("JITPERF_DIR", sub, 1);
	ck_assert_int_eq(in_child_stderr(default_traces, err_path), 0);
	text = (char *)slurp(err_path, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "");
	free(text);
	ck_assert_int_eq(files_in(sub), 1);             /* the child's jitdump */

	/* a path through a file: not a directory, and said so once */
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(sub, sizeof(sub), "%s/file/sub", dir);
	setenv("JITPERF_DIR", sub, 1);
	ck_assert_int_eq(in_child_stderr(default_inactive, err_path), 0);
	text = (char *)slurp(err_path, &len);
	ck_assert_ptr_nonnull(text);
	snprintf(want, sizeof(want), "jitperf: JITPERF=jitdump: nothing is recorded: %s: %s\n",
		 sub, strerror(ENOTDIR));
	ck_assert_str_eq(text, want);
	free(text);

	/* a value refused: the precise reason, once, without JITPERF_DEBUG */
	unsetenv("JITPERF_DEBUG");
	setenv("JITPERF_DIR", dir, 1);
	setenv("JITPERF", "trace,bogus", 1);
	ck_assert_int_eq(in_child_stderr(default_inactive, err_path), 0);
	text = (char *)slurp(err_path, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "jitperf: JITPERF=trace,bogus: nothing is recorded: unknown output "
			 "'bogus' (expected perfmap, jitdump, trace, stats, all or standby)\n");
	free(text);
	setenv("JITPERF", "stats", 1);
	setenv("JITPERF_TRACE_MAX", "lots", 1);
	ck_assert_int_eq(in_child_stderr(default_inactive, err_path), 0);
	unsetenv("JITPERF_TRACE_MAX");
	text = (char *)slurp(err_path, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "jitperf: JITPERF=stats: nothing is recorded: JITPERF_TRACE_MAX: "
			 "'lots' is not a size (N, NK, NM or NG)\n");
	free(text);
	setenv("JITPERF", "jitdump", 1);
	setenv("JITPERF_DIR", sub, 1);

	/* JITPERF unset: an inactive session is what was asked; silence */
	unsetenv("JITPERF");
	ck_assert_int_eq(in_child_stderr(default_inactive, err_path), 0);
	text = (char *)slurp(err_path, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "");
	free(text);

	/* the API: made the same, and on failure the code, no message */
	snprintf(sub, sizeof(sub), "%s/api/made", dir);
	o.dir = sub;
	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	ck_assert_str_eq(jp->dir, sub);
	ck_assert_int_eq(jitperf_close(jp), 0);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", sub, (int)getpid());
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(sub, sizeof(sub), "%s/file/api", dir);
	ck_assert_int_eq(jitperf_open(&jp, &o), -ENOTDIR);
}
END_TEST

/* the log's messages, "LEVEL MSG" a line */
static char logged[2048];

static void log_to_buffer(int level, const char *msg, void *arg)
{
	size_t n = strlen(logged);

	if (arg == logged)
		snprintf(logged + n, sizeof(logged) - n, "%d %s\n", level, msg);
}

/* the default session asked for with a value refused, logged to the buffer */
static void default_logged(void)
{
	jitperf_set_log(log_to_buffer, logged);
	REQUIRE(jitperf_outputs(jitperf_default()) == 0);
	fputs(logged, stdout);
	fflush(stdout);
}

/*
 * jitperf_set_log: every message goes to the function, debug messages
 * without JITPERF_DEBUG too, and nothing to stderr; NULL gives them back
 * to stderr.
 */
START_TEST(test_log_hook)
{
	char path[600], out[600], want[600], *text;
	size_t len;
	int err, fd, saved;

	jitperf_set_log(log_to_buffer, logged);
	setenv("JITPERF", "perfmap,bogus", 1);
	text = stderr_of_open(&err);
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_str_eq(text, "");
	free(text);
	snprintf(want, sizeof(want), "%d JITPERF: unknown output 'bogus' (expected perfmap, "
		 "jitdump, trace, stats, all or standby)\n", JITPERF_LOG_DEBUG);
	ck_assert_str_eq(logged, want);
	jitperf_set_log(NULL, NULL);
	logged[0] = 0;
	text = stderr_of_open(&err);
	ck_assert_str_eq(text, "");             /* back to stderr: silent unless asked */
	free(text);
	ck_assert_str_eq(logged, "");

	/* an error: the default session cannot have what JITPERF asks */
	snprintf(path, sizeof(path), "%s/stderr", dir);
	snprintf(out, sizeof(out), "%s/stdout", dir);
	setenv("JITPERF", "trace,bogus", 1);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	close(fd);
	err = in_child_stderr(default_logged, path);
	dup2(saved, 1);
	close(saved);
	ck_assert_int_eq(err, 0);
	text = (char *)slurp(path, &len);
	ck_assert_str_eq(text, "");
	free(text);
	text = (char *)slurp(out, &len);
	snprintf(want, sizeof(want), "%d JITPERF=trace,bogus: nothing is recorded: unknown output "
		 "'bogus' (expected perfmap, jitdump, trace, stats, all or standby)\n",
		 JITPERF_LOG_ERROR);
	ck_assert_ptr_nonnull(strstr(text, want));
	free(text);
}
END_TEST

START_TEST(test_default_session)
{
	char path[600], map[64];
	unsigned char *buf;
	size_t len;
	pid_t pid;

	setenv("JITPERF", "perfmap,jitdump", 1);
	ck_assert_int_eq(in_child(default_active), 0);
	setenv("JITPERF", "nonsense", 1);
	ck_assert_int_eq(in_child(default_bad_env), 0);
	ck_assert_int_eq(files_in(dir), 1);     /* only the first child's dump */

	setenv("JITPERF", "jitdump", 1);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		default_at_exit();
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)pid);
	buf = slurp(path, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_ge(len, 40 + 16);
	ck_assert_uint_eq(buf[len - 16], 3);    /* last record: JIT_CODE_CLOSE */
	ck_assert_uint_eq(buf[len - 12], 16);
	free(buf);
	/* perfmap was not asked for: no map of the child's (pids are reused, so
	 * one an earlier process left under that pid may be there) */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	buf = slurp(map, &len);
	ck_assert_msg(!buf || !strstr((char *)buf, " atexit\n"), "%s: the child wrote a perf map", map);
	free(buf);
}
END_TEST

/* ---- strerror */

/*
 * The function table holds 4194303 functions (1024 chunks of 4096, id 0
 * unused); the next registration fails with ENOBUFS, whose text is not
 * that of a full disk.
 */
START_TEST(test_fn_table_full)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = 0, .dir = dir };
	jitperf *jp = NULL;
	jitperf_fn id = 0, last = 0;

	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	while ((id = jitperf_fn_register(jp, "f", NULL, 0)) != 0)
		last = id;
	ck_assert_int_eq(errno, ENOBUFS);
	ck_assert_uint_eq(last, 4194303);
	ck_assert_str_eq(jitperf_strerror(errno), "the session's function table is full "
			 "(jitperf_fn_register)");
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

START_TEST(test_strerror)
{
	static const int codes[] = {
		EINVAL, ENOMEM, ENOENT, ENOSPC, ENOBUFS, EDQUOT, EFBIG, EIO, EACCES, EPERM, EROFS,
		ENOTDIR, ENAMETOOLONG, ELOOP, EEXIST, EMFILE, ENFILE, E2BIG, EFAULT, EOPNOTSUPP, EBADF,
		EBUSY, ENODEV, EISDIR,
	};
	const char *seen[sizeof(codes) / sizeof(codes[0])];

	ck_assert_str_eq(jitperf_strerror(0), "success");
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *s = jitperf_strerror(-codes[i]);

		ck_assert_ptr_nonnull(s);
		ck_assert_uint_gt(strlen(s), 5);
		ck_assert_ptr_null(strstr(s, "unknown"));
		ck_assert_str_eq(s, jitperf_strerror(codes[i]));        /* either sign */
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(s, seen[j]);
		seen[i] = s;
	}
	/* a full disk and a full function table are told apart; EBUSY is the
	 * one-instrumenting-session rule */
	ck_assert_str_eq(jitperf_strerror(-ENOSPC), "no space left on the device of an output file");
	ck_assert_str_eq(jitperf_strerror(-ENOBUFS),
			 "the session's function table is full (jitperf_fn_register)");
	ck_assert_ptr_nonnull(strstr(jitperf_strerror(-EBUSY),
				     "only one instrumenting session per process"));
	/* other errno values: the system's text; nonsense: still a string */
	ck_assert_str_eq(jitperf_strerror(-EAGAIN), strerrordesc_np(EAGAIN));
	ck_assert_ptr_nonnull(jitperf_strerror(-100000));
	ck_assert_ptr_nonnull(jitperf_strerror(-2147483647 - 1));
}
END_TEST

/* The EBUSY a second tracing session gets is the one the text explains. */
START_TEST(test_strerror_busy)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_STATS, .dir = dir };
	jitperf *first, *second = (jitperf *)1;
	int err;

	ck_assert_int_eq(jitperf_open(&first, &o), 0);
	err = jitperf_open(&second, &o);
	ck_assert_int_eq(err, -EBUSY);
	ck_assert_ptr_null(second);
	ck_assert_str_eq(jitperf_strerror(err), jitperf_strerror(-EBUSY));
	ck_assert_ptr_nonnull(strstr(jitperf_strerror(err), "already traces or counts"));
	ck_assert_int_eq(jitperf_close(first), 0);
	ck_assert_int_eq(jitperf_open(&second, &o), 0);       /* free again */
	ck_assert_int_eq(jitperf_close(second), 0);
}
END_TEST

/* ---- standby */

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

START_TEST(test_standby_writes_nothing)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_STANDBY };
	char sub[4096], map[64];
	uint64_t a, b;
	jitperf *jp, *jp2;

	snprintf(sub, sizeof(sub), "%s/not-yet", dir);
	o.dir = sub;
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	ck_assert_uint_eq(jitperf_outputs(jp), JITPERF_STANDBY | JITPERF_PERFMAP | JITPERF_JITDUMP);
	ck_assert_int_eq(jitperf_code_load(jp, "f", code, 16, &a), 0);
	ck_assert_int_eq(jitperf_code_load(jp, "g", code + 16, 16, &b), 0);
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(b, 2);
	ck_assert_int_eq(jitperf_code_move(jp, a, code + 32), 0);
	ck_assert_int_eq(jitperf_code_unload(jp, b), 0);
	ck_assert_int_eq(jitperf_code_unload(jp, b), -ENOENT);
	/* a second standby session shares the process's listener */
	ck_assert_int_eq(jitperf_open(&jp2, &o), 0);
	ck_assert_int_eq(jitperf_close(jp2), 0);
	ck_assert_int_eq(files_in(dir), 0);     /* not even its directory */
	ck_assert_int_eq(access(map, F_OK), -1);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(files_in(dir), 0);
	ck_assert_int_eq(access(map, F_OK), -1);
}
END_TEST

START_TEST(test_standby_wake)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_STANDBY,
				     .dir = "/nonexistent" };
	char req[4200], reply[4300], want[4300], dump[4200], map[64];
	uint64_t a, b, c;
	off_t size;
	jitperf *jp;

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	snprintf(dump, sizeof(dump), "%s/jit-%d.dump", dir, (int)getpid());
	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	ck_assert_int_eq(jitperf_code_load(jp, "f", code, 16, &a), 0);
	ck_assert_int_eq(jitperf_code_load(jp, "g", code + 16, 16, &b), 0);
	ck_assert_int_eq(jitperf_code_unload(jp, b), 0);
	/* not a request: nothing happens */
	knock("hello\n", reply, sizeof(reply));
	ck_assert_str_eq(reply, "error expected \"attach [DIR]\"\n");
	ck_assert_uint_eq(jitperf_outputs(jp), JITPERF_STANDBY | JITPERF_PERFMAP | JITPERF_JITDUMP);
	/* its own directory cannot be made: the error, still in standby */
	knock("attach\n", reply, sizeof(reply));
	ck_assert_int_eq(strncmp(reply, "error ", 6), 0);
	ck_assert_int_eq(access(map, F_OK), -1);
	ck_assert_uint_eq(jitperf_outputs(jp), JITPERF_STANDBY | JITPERF_PERFMAP | JITPERF_JITDUMP);
	/* the recorder's directory: the live function written, the answer after */
	snprintf(req, sizeof(req), "attach %s\n", dir);
	knock(req, reply, sizeof(reply));
	snprintf(want, sizeof(want), "ok 1 %s\n", dump);
	ck_assert_str_eq(reply, want);
	ck_assert_uint_eq(jitperf_outputs(jp), JITPERF_PERFMAP | JITPERF_JITDUMP);
	ck_assert_int_gt(size_of(map), 0);
	size = size_of(dump);
	ck_assert_int_gt(size, 40);
	/* then a load writes as it comes, with the next index */
	ck_assert_int_eq(jitperf_code_load(jp, "h", code + 32, 16, &c), 0);
	ck_assert_uint_eq(c, 3);
	ck_assert_int_gt(size_of(dump), size);
	knock(req, reply, sizeof(reply));
	ck_assert_str_eq(reply, "ok 0\n");
	ck_assert_int_eq(jitperf_close(jp), 0);
	unlink(dump);
}
END_TEST

/* Someone else holds @jitperf-standby-<pid>: the session is not opened, nothing written. */
START_TEST(test_standby_name_taken)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_STANDBY, .dir = dir };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "jitperf-standby-%d",
			 (int)getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	jitperf *jp = (jitperf *)1;

	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)), 0);
	ck_assert_int_eq(jitperf_open(&jp, &o), -EADDRINUSE);
	ck_assert_ptr_null(jp);
	ck_assert_str_eq(jitperf_strerror(-EADDRINUSE), "standby: another process holds this "
			 "process's socket name (@jitperf-standby-<pid>)");
	ck_assert_int_eq(files_in(dir), 0);
	close(fd);
}
END_TEST

static Suite *session_suite(void)
{
	Suite *s = suite_create("session");
	TCase *tc;

	tc = tcase_create("Options struct");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_null_options_inactive);
	tcase_add_test(tc, test_options_size);
	tcase_add_test(tc, test_options_override_env);
	suite_add_tcase(s, tc);

	tc = tcase_create("Environment");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_env_outputs);
	tcase_add_test(tc, test_env_dir);
	tcase_add_test(tc, test_env_sample_counters_clock);
	tcase_add_test(tc, test_debug_messages);
	suite_add_tcase(s, tc);

	tc = tcase_create("Standby");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_standby_writes_nothing);
	tcase_add_test(tc, test_standby_wake);
	tcase_add_test(tc, test_standby_name_taken);
	suite_add_tcase(s, tc);

	tc = tcase_create("Inactive session");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_inactive_noop);
	suite_add_tcase(s, tc);

	tc = tcase_create("Default session");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_default_session);
	tcase_add_test(tc, test_env_dir_made_or_said);
	tcase_add_test(tc, test_log_hook);
	suite_add_tcase(s, tc);

	tc = tcase_create("Error texts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_strerror);
	tcase_add_test(tc, test_strerror_busy);
	tcase_add_test(tc, test_fn_table_full);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(session_suite());
}
