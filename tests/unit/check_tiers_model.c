/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tiers model (read/tiers_model.c): a tiers file libjitperf wrote is
 * joined per function and tier (compiles, failed, unfinished, nested,
 * queue, install, thread), a damaged one is refused with its name, and
 * the tier marks of jitperf, V8 and .NET are read out of symbol names.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/check-subr.h"
#include "read/tiers_model.h"

static char *dir;
static char path[512];
static char err[512];
static unsigned char code[64];

static void setup(void)
{
	clear_env();
	memset(code, 0xc3, sizeof(code));
	dir = make_tmpdir();
	snprintf(path, sizeof(path), "%s/jit-%d.tiers", dir, (int)getpid());
}

static void teardown(void)
{
	remove_perf_map(getpid());
	remove_tmpdir(dir);
}

static jitperf *open_session(void)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_JITDUMP, .dir = dir };
	jitperf *jp;

	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	return jp;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	nanosleep(&ts, NULL);
}

static const struct tm_row *find(const struct tm_row *rows, size_t n, const char *func,
				 unsigned tier)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].tier == tier && !strcmp(rows[i].func, func))
			return &rows[i];
	ck_abort_msg("no row %s tier %u", func, tier);
	return NULL;
}

/*
 * A request, a 20 ms compile of sum in tier 1 with a nested failed
 * compile of helper, its install; a compile of open never ended.
 */
START_TEST(test_join)
{
	jitperf *jp = open_session();
	struct jitperf_code c = { .size = sizeof(c), .addr = code, .len = 16 };
	uint64_t sum, helper, open;
	struct tm_model m;
	struct tm_row *rows;
	const struct tm_row *r;
	size_t n;

	ck_assert_int_eq(jitperf_tier_name(jp, 1, "opt"), 0);
	ck_assert_int_eq(jitperf_tier_request(jp, "sum", 1), 0);
	sleep_ms(5);
	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 1, &sum), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "helper", 1, &helper), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, helper, -ECANCELED), 0);
	sleep_ms(20);
	c.compile = sum;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, sum, 0), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "open", 1, &open), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);

	ck_assert_int_eq(tm_load(&m, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.pid, (unsigned)getpid());
	ck_assert_int_eq(m.closed, 1);
	ck_assert_str_eq(m.tags[1], "opt");
	ck_assert_str_eq(m.tags[0], "tier0");
	ck_assert_int_eq(tm_tier_of_tag(&m, "opt"), 1);
	ck_assert_int_eq(tm_tier_of_tag(&m, "tier2"), 2);
	ck_assert_int_eq(tm_tier_of_tag(&m, "nope"), -1);
	ck_assert_uint_eq(m.ncompiles, 3);
	ck_assert_uint_eq(m.compiles[1].parent, m.compiles[0].id);   /* helper nests in sum */
	ck_assert_uint_eq(m.ninstalls, 1);

	ck_assert_int_eq(tm_rows(&m, &rows, &n), 0);
	ck_assert_uint_eq(n, 3);
	/* sorted by function */
	ck_assert_str_eq(rows[0].func, "helper");
	ck_assert_str_eq(rows[1].func, "open");
	ck_assert_str_eq(rows[2].func, "sum");
	r = find(rows, n, "sum", 1);
	ck_assert_uint_eq(r->compiles, 1);
	ck_assert_uint_eq(r->failed, 0);
	ck_assert_uint_eq(r->unfinished, 0);
	ck_assert_uint_ge(r->compile_ns, 20000000);
	ck_assert_uint_lt(r->compile_ns, 200000000);
	ck_assert_uint_eq(r->compile_max_ns, r->compile_ns);
	ck_assert_uint_eq(r->compile_tid, (unsigned)syscall(SYS_gettid));
	ck_assert_uint_ge(r->queue_ns, 5000000);
	ck_assert_uint_lt(r->queue_ns, r->compile_ns);
	ck_assert_uint_ne(r->install, TM_NO_TIME);
	ck_assert_uint_ge(r->install, r->request + r->queue_ns + 20000000);
	r = find(rows, n, "helper", 1);
	ck_assert_uint_eq(r->compiles, 1);
	ck_assert_uint_eq(r->failed, 1);
	ck_assert_uint_eq(r->queue_ns, TM_NO_TIME);     /* never requested */
	ck_assert_uint_eq(r->install, TM_NO_TIME);
	r = find(rows, n, "open", 1);
	ck_assert_uint_eq(r->compiles, 1);
	ck_assert_uint_eq(r->unfinished, 1);
	ck_assert_uint_eq(r->compile_ns, 0);
	free(rows);
	tm_free(&m);
}
END_TEST

/* A file cut inside a record, or not a tiers file: one line naming it. */
/*
 * A compile installed before a fork and ended in the child: the child's
 * file ends a compile it never began (its begin is in the parent's), and
 * is read all the same.
 */
START_TEST(test_fork_child_file)
{
	jitperf *jp = open_session();
	struct jitperf_code c = { .size = sizeof(c), .addr = code, .len = 16 };
	char child_path[600];
	struct tm_model m;
	uint64_t id;
	pid_t pid;
	int st;

	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 1, &id), 0);
	c.compile = id;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), 0);   /* writes the begin */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(jitperf_compile_end(jp, id, 0) || jitperf_close(jp) ? 1 : 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	remove_perf_map(pid);
	snprintf(child_path, sizeof(child_path), "%s/jit-%d.tiers", dir, (int)pid);
	ck_assert_int_eq(tm_load(&m, child_path, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.ncompiles, 0);
	ck_assert_uint_eq(m.elsewhere, 1);
	ck_assert_int_eq(m.closed, 1);
	tm_free(&m);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(tm_load(&m, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.ncompiles, 1);      /* the parent's: begun and installed */
	ck_assert_uint_eq(m.ninstalls, 1);
	tm_free(&m);
}
END_TEST

START_TEST(test_damaged)
{
	jitperf *jp = open_session();
	uint64_t id;
	struct tm_model m;
	struct stat st;
	char want[600];
	int fd;

	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 1, &id), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, id, 0), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size - 4), 0);
	ck_assert_int_eq(tm_load(&m, path, err, sizeof(err)), -EBADMSG);
	snprintf(want, sizeof(want), "%s: ", path);
	ck_assert_int_eq(strncmp(err, want, strlen(want)), 0);
	ck_assert_ptr_null(strchr(err, '\n'));

	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "garbage, not a tiers file\n", 26), 26);
	close(fd);
	ck_assert_int_eq(tm_load(&m, path, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(strncmp(err, want, strlen(want)), 0);
}
END_TEST

static void expect_mark(const char *name, enum tm_kind kind, int tier, const char *func,
			const char *tag, const char *loc)
{
	struct tm_mark mk;

	ck_assert_msg(tm_mark_parse(name, &mk) == 1, "%s: no mark", name);
	ck_assert_int_eq(mk.kind, kind);
	ck_assert_int_eq(mk.tier, tier);
	ck_assert_uint_eq(mk.func_len, strlen(func));
	ck_assert_int_eq(strncmp(name + mk.func_off, func, mk.func_len), 0);
	ck_assert_uint_eq(mk.tag_len, strlen(tag));
	ck_assert_int_eq(strncmp(name + mk.tag_off, tag, mk.tag_len), 0);
	ck_assert_uint_eq(mk.loc_len, strlen(loc));
	if (*loc)
		ck_assert_int_eq(strncmp(name + mk.loc_off, loc, mk.loc_len), 0);
}

START_TEST(test_marks)
{
	struct tm_mark mk;

	/* jitperf: the tag between the last '[' and the final ']' */
	expect_mark("sum[opt]", TM_JITPERF, -1, "sum", "opt", "");
	expect_mark("a[b][interp]", TM_JITPERF, -1, "a[b]", "interp", "");
	expect_mark("sum[tier3]", TM_JITPERF, 3, "sum", "tier3", "");
	expect_mark("sum[tier15]", TM_JITPERF, 15, "sum", "tier15", "");
	expect_mark("sum[tier16]", TM_JITPERF, -1, "sum", "tier16", "");
	expect_mark("sum[tier03]", TM_JITPERF, -1, "sum", "tier03", "");
	/* V8, --perf-basic-prof and --perf-prof */
	expect_mark("JS:~fib /t/fib.js:1:13", TM_V8, 0, "fib", "~", "/t/fib.js:1:13");
	expect_mark("JS:^fib /t/fib.js:1:13", TM_V8, 1, "fib", "^", "/t/fib.js:1:13");
	expect_mark("JS:+fib file.js:2:13", TM_V8, 2, "fib", "+", "file.js:2:13");
	expect_mark("LazyCompile:*fib file.js:2:13", TM_V8, 3, "fib", "*", "file.js:2:13");
	expect_mark("Function:~ file.js:9:1", TM_V8, 0, "", "~", "file.js:9:1");
	expect_mark("JS:*run", TM_V8, 3, "run", "*", "");
	/* .NET */
	expect_mark("void [lib] P::Work(int32)[QuickJitted]", TM_DOTNET, 0,
		    "void [lib] P::Work(int32)", "QuickJitted", "");
	expect_mark("P::Work()[OptimizedTier1]", TM_DOTNET, 1, "P::Work()", "OptimizedTier1", "");
	expect_mark("P::Work()[OptimizedTier1OSR]", TM_DOTNET, 1, "P::Work()", "OptimizedTier1OSR", "");
	expect_mark("P::Work()[Optimized]", TM_DOTNET, 1, "P::Work()", "Optimized", "");
	expect_mark("P::Work()[PreJIT]", TM_DOTNET, 0, "P::Work()", "PreJIT", "");
	expect_mark("P::Work()[MinOptJitted]", TM_DOTNET, 0, "P::Work()", "MinOptJitted", "");
	expect_mark("P::Work()[InstrumentedTier]", TM_DOTNET, 0, "P::Work()", "InstrumentedTier", "");
	expect_mark("P::Work()[InstrumentedTierOptimized]", TM_DOTNET, 1, "P::Work()",
		    "InstrumentedTierOptimized", "");
	/* no mark */
	ck_assert_int_eq(tm_mark_parse("sum", &mk), 0);
	ck_assert_int_eq(tm_mark_parse("wrap:sum[opt]", &mk), 0);   /* jitperf_wrap's thunk */
	ck_assert_int_eq(mk.kind, TM_NONE);
	ck_assert_int_eq(tm_mark_parse("Builtin:ArgumentsAdaptor", &mk), 0);
	ck_assert_int_eq(tm_mark_parse("JS:fib file.js:1:1", &mk), 0);
	ck_assert_int_eq(tm_mark_parse("sum[]", &mk), 0);
	ck_assert_int_eq(tm_mark_parse("[opt]", &mk), 0);
	ck_assert_int_eq(tm_mark_parse("sum[opt] ", &mk), 0);
	ck_assert_int_eq(tm_mark_parse(NULL, &mk), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("Tiers model");
	TCase *tc;

	tc = tcase_create("A tiers file joined");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_join);
	tcase_add_test(tc, test_damaged);
	tcase_add_test(tc, test_fork_child_file);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

	tc = tcase_create("Tier marks in names");
	tcase_add_test(tc, test_marks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
