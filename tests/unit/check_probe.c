/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Probes: exact call counts (nested, recursive, threads), sampling at the
 * root, repair of unbalanced calls, errno, re-entry from signal handlers,
 * software counters, fork and SIGKILL.  Each test opens a real session
 * into its own directory and reads back the statistics file and the trace.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "instr-subr.h"

static char *dir;
static jitperf_fn fa, fb, fc, ffib;

static void setup(void)
{
	dir = make_tmpdir();
}

static void teardown(void)
{
	remove_tmpdir(dir);
	dir = NULL;
}

static uint64_t row_calls(const char *name)
{
	struct instr_row r;

	ck_assert_msg(instr_stats_row(dir, getpid(), name, &r) == 0, "no stats row for %s", name);
	return r.calls;
}

/* ---- Registration */

START_TEST(test_register_ids)
{
	jitperf *jp = instr_open(dir, 0, 1, NULL);      /* nothing on: ids still valid */

	ck_assert_uint_eq(jitperf_fn_register(jp, "one", (void *)0x1000, 16), 1);
	ck_assert_uint_eq(jitperf_fn_register(jp, "two", NULL, 0), 2);
	errno = 0;
	ck_assert_uint_eq(jitperf_fn_register(jp, NULL, NULL, 0), 0);
	ck_assert_int_eq(errno, EINVAL);
	jitperf_enter(1);                               /* no session instruments: no effect */
	jitperf_exit(1);
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

START_TEST(test_one_instrumenting_session)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_STATS, .dir = NULL };
	jitperf *first = instr_open(dir, JITPERF_TRACE, 1, NULL), *second = NULL;

	o.dir = dir;
	ck_assert_int_eq(jitperf_open(&second, &o), -EBUSY);
	ck_assert_int_eq(jitperf_close(first), 0);
	ck_assert_int_eq(jitperf_open(&second, &o), 0);
	ck_assert_int_eq(jitperf_close(second), 0);
}
END_TEST

/* ---- Nesting and recursion */

static void nest(int k)
{
	for (int i = 0; i < k; i++) {
		jitperf_enter(fa);
		jitperf_enter(fb);
		jitperf_enter(fc);
		jitperf_exit(fc);
		jitperf_enter(fc);
		jitperf_exit(fc);
		jitperf_exit(fb);
		jitperf_exit(fa);
	}
}

struct depth_arg { struct jpt_reader *r; long by_depth[3]; int bad; };

static int depth_cb(const struct jpt_call *c, void *arg)
{
	struct depth_arg *a = arg;
	const char *want[] = { "a", "b", "c" };

	if (c->depth > 2 || strcmp(jpt_fn(a->r, c->fn)->name, want[c->depth]))
		a->bad++;
	else
		a->by_depth[c->depth]++;
	for (uint32_t d = 0; d <= c->depth && d < 3; d++)
		if (strcmp(jpt_fn(a->r, c->stack[d])->name, want[d]))
			a->bad++;
	return 0;
}

START_TEST(test_nested_counts)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 1, NULL);
	struct depth_arg a = { 0 };
	char err[512];

	fa = jitperf_fn_register(jp, "a", NULL, 0);
	fb = jitperf_fn_register(jp, "b", NULL, 0);
	fc = jitperf_fn_register(jp, "c", NULL, 0);
	nest(1000);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_uint_eq(row_calls("a"), 1000);
	ck_assert_uint_eq(row_calls("b"), 1000);
	ck_assert_uint_eq(row_calls("c"), 2000);
	a.r = instr_trace_open(dir, getpid());
	ck_assert_int_eq(jpt_info(a.r)->truncated, 0);
	ck_assert_int_eq(jpt_for_each_call(a.r, depth_cb, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.bad, 0);
	ck_assert_int_eq(a.by_depth[0], 1000);
	ck_assert_int_eq(a.by_depth[1], 1000);
	ck_assert_int_eq(a.by_depth[2], 2000);
	jpt_close(a.r);
}
END_TEST

static int fib(int n)
{
	int r;

	jitperf_enter(ffib);
	r = n < 2 ? n : fib(n - 1) + fib(n - 2);
	jitperf_exit(ffib);
	return r;
}

struct self_arg { uint64_t self_sum, root_dur; long calls; uint32_t max_depth; };

static int self_cb(const struct jpt_call *c, void *arg)
{
	struct self_arg *a = arg;

	a->self_sum += c->self_ns;
	a->calls++;
	if (c->depth > a->max_depth)
		a->max_depth = c->depth;
	if (c->depth == 0)
		a->root_dur = c->end_ns - c->start_ns;
	return 0;
}

START_TEST(test_recursive_fib)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 1, NULL);
	struct self_arg a = { 0 };
	struct jpt_reader *r;
	struct instr_row row;
	char err[512];

	ffib = jitperf_fn_register(jp, "fib", (const void *)fib, 64);
	ck_assert_int_eq(fib(18), 2584);
	ck_assert_int_eq(jitperf_close(jp), 0);
	/* fib(n) makes 2 * fib(n + 1) - 1 calls: 2 * 4181 - 1 */
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "fib", &row), 0);
	ck_assert_uint_eq(row.calls, 8361);
	ck_assert_uint_eq(row.unbalanced, 0);
	ck_assert_uint_le(row.min, row.mean);
	ck_assert_uint_le(row.mean, row.max);
	r = instr_trace_open(dir, getpid());
	ck_assert_int_eq(jpt_for_each_call(r, self_cb, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.calls, 8361);
	ck_assert_uint_eq(a.max_depth, 17);
	/* Self times of one tree add up to the root's duration. */
	ck_assert_uint_eq(a.self_sum, a.root_dur);
	ck_assert_ptr_nonnull(jpt_fn(r, 1));
	ck_assert_str_eq(jpt_fn(r, 1)->name, "fib");
	ck_assert_uint_eq(jpt_fn(r, 1)->addr, (uintptr_t)fib);
	ck_assert_uint_eq(jpt_fn(r, 1)->len, 64);
	jpt_close(r);
}
END_TEST

/* ---- Threads */

#define NTHREADS 4
#define MCALLS   20000

static void *worker(void *arg)
{
	int n = (int)(intptr_t)arg;

	for (int i = 0; i < MCALLS * n; i++) {
		jitperf_enter(fa);
		jitperf_exit(fa);
	}
	return NULL;
}

struct tid_arg { uint32_t tid[NTHREADS + 1]; long n[NTHREADS + 1]; int ntid; };

static int tid_cb(const struct jpt_call *c, void *arg)
{
	struct tid_arg *a = arg;
	int i;

	for (i = 0; i < a->ntid && a->tid[i] != c->tid; i++)
		;
	if (i == a->ntid && a->ntid < NTHREADS + 1)
		a->tid[a->ntid++] = c->tid;
	if (i < NTHREADS + 1)
		a->n[i]++;
	return 0;
}

START_TEST(test_threads_exact)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 1, NULL);
	pthread_t th[NTHREADS];
	struct tid_arg a = { { 0 }, { 0 }, 0 };
	struct jpt_reader *r;
	char err[512];
	long seen[NTHREADS + 1] = { 0 };

	fa = jitperf_fn_register(jp, "a", NULL, 0);
	/* Thread i makes (i + 1) * MCALLS calls; all have exited before close. */
	for (int i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)(i + 1)), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_uint_eq(row_calls("a"), MCALLS * (1 + 2 + 3 + 4));
	r = instr_trace_open(dir, getpid());
	ck_assert_uint_eq(jpt_nthreads(r), NTHREADS);
	ck_assert_int_eq(jpt_for_each_call(r, tid_cb, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.ntid, NTHREADS);
	for (int i = 0; i < NTHREADS; i++) {
		long k = a.n[i] / MCALLS;

		ck_assert_int_eq(a.n[i] % MCALLS, 0);
		ck_assert(k >= 1 && k <= NTHREADS);
		ck_assert_int_eq(seen[k]++, 0);             /* each count 1..4 once */
	}
	jpt_close(r);
}
END_TEST

static volatile int stop_spinning;

static void *spinner(void *arg)
{
	(void)arg;
	while (!stop_spinning) {
		jitperf_enter(fa);
		jitperf_enter(fb);
		jitperf_exit(fb);
		jitperf_exit(fa);
	}
	return NULL;
}

START_TEST(test_close_while_running)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 1, NULL);
	struct timespec ts = { 0, 50000000 };
	struct depth_arg a = { 0 };
	pthread_t th[6];
	char err[512];

	fa = jitperf_fn_register(jp, "a", NULL, 0);
	fb = jitperf_fn_register(jp, "b", NULL, 0);
	fc = jitperf_fn_register(jp, "c", NULL, 0);
	stop_spinning = 0;
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, spinner, NULL), 0);
	nanosleep(&ts, NULL);
	/* and threads making their state (first event) while close runs */
	for (int i = 2; i < 6; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, spinner, NULL), 0);
	/* The threads are inside probes all the time: close must wait for
	 * them, and their later probes must not touch the freed session. */
	ck_assert_int_eq(jitperf_close(jp), 0);
	nanosleep(&ts, NULL);
	stop_spinning = 1;
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	/* b is entered right after a: only the calls in flight at close
	 * (one per thread at most) can have a counted and b not */
	ck_assert_uint_gt(row_calls("a"), 0);
	ck_assert_uint_ge(row_calls("b") + 6, row_calls("a"));
	a.r = instr_trace_open(dir, getpid());
	ck_assert_int_eq(jpt_for_each_call(a.r, depth_cb, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.bad, 0);
	ck_assert_int_gt(a.by_depth[0], 0);
	jpt_close(a.r);
}
END_TEST

/* ---- Sampling */

/* One root call whose loop makes 200000 calls of mid and 800000 of leaf. */
static void one_root(jitperf_fn r, jitperf_fn mid, jitperf_fn leaf)
{
	jitperf_enter(r);
	for (int i = 0; i < 200000; i++) {
		jitperf_enter(mid);
		for (int k = 0; k < 4; k++) {
			jitperf_enter(leaf);
			jitperf_exit(leaf);
		}
		jitperf_exit(mid);
	}
	jitperf_exit(r);
}

struct at_depth { struct jpt_reader *r; long leaf, mid, bad; };

static int at_depth_cb(const struct jpt_call *c, void *arg)
{
	struct at_depth *a = arg;
	const char *name = jpt_fn(a->r, c->fn)->name;
	const char *want[] = { "r", "mid", "leaf" };

	/* whatever is traced, the stack names every caller */
	for (uint32_t d = 0; d <= c->depth; d++)
		if (d > 2 || !jpt_fn(a->r, c->stack[d]) ||
		    strcmp(jpt_fn(a->r, c->stack[d])->name, want[d]))
			a->bad++;
	a->leaf += !strcmp(name, "leaf") && c->depth == 2;
	a->mid += !strcmp(name, "mid") && c->depth == 1;
	return 0;
}

START_TEST(test_sampling_at_depth)
{
	struct jitperf_options o = { .outputs = JITPERF_TRACE | JITPERF_STATS, .sample_every = 100,
				     .trace_max = JITPERF_UNLIMITED };
	jitperf *jp = instr_open_opts(dir, &o);
	struct at_depth a = { 0 };
	struct instr_row rr, rm, rl;
	char err[512];
	jitperf_fn r, mid, leaf;

	r = jitperf_fn_register(jp, "r", NULL, 0);
	mid = jitperf_fn_register(jp, "mid", NULL, 0);
	leaf = jitperf_fn_register(jp, "leaf", NULL, 0);
	one_root(r, mid, leaf);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "r", &rr), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "mid", &rm), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "leaf", &rl), 0);
	ck_assert_uint_eq(rr.calls, 1);                 /* counts stay exact */
	ck_assert_uint_eq(rm.calls, 200000);
	ck_assert_uint_eq(rl.calls, 800000);
	/* about 1 call in 100 of each function is timed, at any depth */
	ck_assert_msg(rm.timed >= 1800 && rm.timed <= 2200, "mid timed %lu times", (long)rm.timed);
	ck_assert_msg(rl.timed >= 7200 && rl.timed <= 8800, "leaf timed %lu times", (long)rl.timed);
	ck_assert_uint_eq(rl.unbalanced + rm.unbalanced + rr.unbalanced, 0);
	/* and traced, under callers that were not */
	a.r = instr_trace_open(dir, getpid());
	ck_assert_uint_eq(jpt_info(a.r)->sample_every, 100);
	ck_assert_int_eq(jpt_for_each_call(a.r, at_depth_cb, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.bad, 0);
	ck_assert_int_eq(a.leaf, (long)rl.timed);
	ck_assert_int_eq(a.mid, (long)rm.timed);
	ck_assert_uint_eq(jpt_info(a.r)->calls, 1000001);
	ck_assert_uint_eq(jpt_info(a.r)->timed, rr.timed + rm.timed + rl.timed);
	jpt_close(a.r);
}
END_TEST

START_TEST(test_sampling_trace_only)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE, 1000, NULL);
	long na, nc;

	fa = jitperf_fn_register(jp, "a", NULL, 0);
	fb = jitperf_fn_register(jp, "b", NULL, 0);
	fc = jitperf_fn_register(jp, "c", NULL, 0);
	nest(100000);                   /* 100000 calls of a, 200000 of c */
	ck_assert_int_eq(jitperf_close(jp), 0);
	na = instr_trace_calls(dir, getpid(), "a");
	nc = instr_trace_calls(dir, getpid(), "c");
	ck_assert_msg(na >= 70 && na <= 130, "a traced %ld times", na);
	ck_assert_msg(nc >= 160 && nc <= 240, "c traced %ld times", nc);
}
END_TEST

/* JITPERF_SAMPLE=0: every call counted, none timed or traced. */
START_TEST(test_sampling_none)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, JITPERF_SAMPLE_NONE, NULL);
	struct instr_row row;

	fa = jitperf_fn_register(jp, "a", NULL, 0);
	fb = jitperf_fn_register(jp, "b", NULL, 0);
	fc = jitperf_fn_register(jp, "c", NULL, 0);
	nest(5000);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "c", &row), 0);
	ck_assert_uint_eq(row.calls, 10000);
	ck_assert_uint_eq(row.timed, 0);
	ck_assert_int_eq(row.timing, 0);                /* "-", not 0 ns */
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "c"), 0);
}
END_TEST

static uint64_t thread_cpu_ns(void);

static void spin_ns(uint64_t ns)
{
	for (uint64_t t0 = thread_cpu_ns(); thread_cpu_ns() - t0 < ns;)
		;
}

/* Adaptive sampling: the frequent short function is timed rarely, the
 * long one called now and then every time. */
START_TEST(test_sampling_adaptive)
{
	struct jitperf_options o = { .outputs = JITPERF_STATS, .sample_every = JITPERF_SAMPLE_ADAPTIVE,
				     .timed_per_sec = 1000 };
	jitperf *jp = instr_open_opts(dir, &o);
	struct instr_row rs, rf;

	fa = jitperf_fn_register(jp, "short", NULL, 0);
	fb = jitperf_fn_register(jp, "long", NULL, 0);
	for (int k = 0; k < 20; k++) {
		for (int i = 0; i < 50000; i++) {
			jitperf_enter(fa);
			jitperf_exit(fa);
		}
		jitperf_enter(fb);
		spin_ns(3000000);
		jitperf_exit(fb);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "short", &rs), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "long", &rf), 0);
	ck_assert_uint_eq(rs.calls, 1000000);
	ck_assert_uint_eq(rf.calls, 20);
	ck_assert_uint_eq(rf.timed, 20);
	ck_assert_msg(rs.timed >= 5 && rs.timed <= 2000, "short timed %lu times", (long)rs.timed);
	/* the long one's figures are measured, not estimated */
	ck_assert_uint_ge(rf.min, 2700000);
	ck_assert_uint_ge(rf.mean, rf.min);
}
END_TEST

/* ---- Unbalanced calls */

static jmp_buf jb;

static void deep_then_longjmp(void)
{
	jitperf_enter(fb);
	jitperf_enter(fc);
	longjmp(jb, 1);                 /* skips the exits of c and b */
}

static void *exit_inside(void *arg)
{
	(void)arg;
	jitperf_enter(fa);
	jitperf_enter(fb);
	return NULL;                    /* the thread ends inside b inside a */
}

START_TEST(test_unbalanced_repairs)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 1, NULL);
	struct instr_row ra, rb, rc;
	pthread_t th;
	struct jpt_reader *r;
	struct depth_arg a = { 0 };
	char err[512];

	fa = jitperf_fn_register(jp, "a", NULL, 0);
	fb = jitperf_fn_register(jp, "b", NULL, 0);
	fc = jitperf_fn_register(jp, "c", NULL, 0);
	jitperf_exit(fc);                               /* exit without entry */
	jitperf_enter(fa);
	if (!setjmp(jb))
		deep_then_longjmp();
	jitperf_exit(fa);                               /* repairs c and b, then a */
	ck_assert_int_eq(pthread_create(&th, NULL, exit_inside, NULL), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "a", &ra), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "b", &rb), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "c", &rc), 0);
	ck_assert_uint_eq(ra.calls, 2);
	ck_assert_uint_eq(ra.unbalanced, 1);            /* closed at thread exit */
	ck_assert_uint_eq(rb.calls, 2);
	ck_assert_uint_eq(rb.unbalanced, 2);            /* longjmp + thread exit */
	ck_assert_uint_eq(rc.calls, 1);
	ck_assert_uint_eq(rc.unbalanced, 2);            /* exit without entry + longjmp */
	/* The trace stays well nested: repaired exits are written too. */
	a.r = r = instr_trace_open(dir, getpid());
	ck_assert_int_eq(jpt_for_each_call(r, depth_cb, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.bad, 0);
	ck_assert_int_eq(a.by_depth[0], 2);
	ck_assert_int_eq(a.by_depth[1], 2);
	ck_assert_int_eq(a.by_depth[2], 1);
	jpt_close(r);
}
END_TEST

/* ---- errno and re-entry */

START_TEST(test_errno_preserved)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 1, "page-faults,cycles");

	fa = jitperf_fn_register(jp, "a", NULL, 0);
	/* First event (thread state, counters), and enough events for new blocks. */
	for (int i = 0; i < 20000; i++) {
		errno = 4321;
		jitperf_enter(fa);
		ck_assert_int_eq(errno, 4321);
		errno = 1234;
		jitperf_exit(fa);
		ck_assert_int_eq(errno, 1234);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_uint_eq(row_calls("a"), 20000);
}
END_TEST

static volatile sig_atomic_t nsig;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_alarm(int sig)
{
	(void)sig;
	nsig++;
	jitperf_enter(fb);              /* lands in the middle of probes often */
	jitperf_exit(fb);
}

START_TEST(test_signal_reentry)
{
	struct jitperf_options o = { .outputs = JITPERF_TRACE | JITPERF_STATS, .sample_every = 1,
				     .trace_max = JITPERF_UNLIMITED };
	jitperf *jp = instr_open_opts(dir, &o);
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	struct sigaction sa;
	struct instr_row rb;
	long n = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGPROF, &sa, NULL);
	fa = jitperf_fn_register(jp, "a", NULL, 0);
	fb = jitperf_fn_register(jp, "b", NULL, 0);
	setitimer(ITIMER_PROF, &it, NULL);
	/* Until 100 signals came, for 2 s at most (valgrind is slow). */
	for (uint64_t t0 = mono_ns(); nsig < 100 && mono_ns() - t0 < 2000000000u;)
		for (int i = 0; i < 20000; i++, n++) {
			jitperf_enter(fa);
			jitperf_exit(fa);
		}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	signal(SIGPROF, SIG_DFL);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_uint_eq(row_calls("a"), (uint64_t)n);   /* never disturbed */
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "b", &rb), 0);
	/* the handler's calls are counted too, even inside a probe */
	ck_assert_uint_eq(rb.calls, (uint64_t)nsig);
	ck_assert_uint_le(rb.timed, rb.calls);            /* not timed inside a probe */
	ck_assert_uint_gt(rb.timed, 0);
	ck_assert_uint_eq(rb.unbalanced, 0);
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "a"), n);
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "b"), (long)rb.timed);
}
END_TEST

/* ---- Software counters (hardware ones are not available in every VM) */

static int event_supported(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define NPAGES 64

START_TEST(test_software_counters)
{
	jitperf *jp;
	struct instr_row rt, rs;
	char path[4200], line[256];
	char *text;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t t0;

	if (!event_supported(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS))
		return;                 /* no perf_event_open at all (seccomp, paranoid 3) */
	jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 1, "page-faults,task-clock,cycles");
	fa = jitperf_fn_register(jp, "touch", NULL, 0);
	fb = jitperf_fn_register(jp, "spin", NULL, 0);
	for (int k = 0; k < 3; k++) {
		char *p = mmap(NULL, NPAGES * pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ck_assert_ptr_ne(p, MAP_FAILED);
		jitperf_enter(fa);
		for (int i = 0; i < NPAGES; i++)
			p[i * pg] = 1;  /* one minor fault per new page */
		jitperf_exit(fa);
		munmap(p, NPAGES * pg);
	}
	jitperf_enter(fb);
	for (t0 = thread_cpu_ns(); thread_cpu_ns() - t0 < 3000000;)
		;
	jitperf_exit(fb);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "touch", &rt), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "spin", &rs), 0);
	ck_assert_int_eq(rt.nctr, 3);
	ck_assert_uint_ge(strtoull(rt.ctr[0], NULL, 10), 3 * NPAGES);
	ck_assert_uint_le(strtoull(rt.ctr[0], NULL, 10), 3 * NPAGES + 24);
	/* task-clock (ns) and the thread CPU clock tick apart: allow 10% */
	ck_assert_uint_ge(strtoull(rs.ctr[1], NULL, 10), 2700000);
	snprintf(path, sizeof(path), "%s/jitperf-%d.stats", dir, (int)getpid());
	text = instr_slurp(path);
	ck_assert_ptr_nonnull(text);
	if (!event_supported(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)) {
		snprintf(line, sizeof(line), "\n# unsupported counter cycles: ");
		ck_assert_ptr_nonnull(strstr(text, line));
		ck_assert_str_eq(rt.ctr[2], "-");
	} else {
		ck_assert_ptr_null(strstr(text, "# unsupported counter"));
	}
	free(text);
}
END_TEST

/* ---- fork and SIGKILL */

START_TEST(test_fork_child_files)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 1, NULL);
	pid_t child;
	int status;

	fa = jitperf_fn_register(jp, "a", NULL, 0);
	for (int i = 0; i < 10; i++) {
		jitperf_enter(fa);
		jitperf_exit(fa);
	}
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		for (int i = 0; i < 7; i++) {
			jitperf_enter(fa);
			jitperf_exit(fa);
		}
		_exit(jitperf_close(jp) ? 1 : 0);
	}
	for (int i = 0; i < 5; i++) {
		jitperf_enter(fa);
		jitperf_exit(fa);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_uint_eq(row_calls("a"), 15);
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "a"), 15);
	{
		struct instr_row rc;

		ck_assert_int_eq(instr_stats_row(dir, child, "a", &rc), 0);
		ck_assert_uint_eq(rc.calls, 7);
		ck_assert_int_eq(instr_trace_calls(dir, child, "a"), 7);
	}
}
END_TEST

/* ---- longjmp out of calls, some timed, some not */

static jmp_buf out_jb;

static void enter_and_jump(jitperf_fn r, jitperf_fn a)
{
	jitperf_enter(r);
	jitperf_enter(a);
	longjmp(out_jb, 1);             /* neither exit runs */
}

START_TEST(test_sampling_longjmp_out)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 3, NULL);
	struct instr_row rm, rr, ra;
	jitperf_fn fm, fr;
	volatile int i;

	fm = jitperf_fn_register(jp, "a", NULL, 0);
	fr = jitperf_fn_register(jp, "b", NULL, 0);
	fa = jitperf_fn_register(jp, "c", NULL, 0);
	for (int k = 0; k < 30; k++) {
		jitperf_enter(fm);
		for (i = 0; i < 10; i++)
			if (!setjmp(out_jb))
				enter_and_jump(fr, fa);
		jitperf_exit(fm);       /* ends the 20 skipped calls too */
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "a", &rm), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "b", &rr), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "c", &ra), 0);
	ck_assert_uint_eq(rm.calls, 30);
	ck_assert_uint_eq(rr.calls, 300);
	ck_assert_uint_eq(ra.calls, 300);
	ck_assert_uint_eq(rm.unbalanced, 0);
	ck_assert_uint_eq(rr.unbalanced, 300);          /* every skipped call repaired */
	ck_assert_uint_eq(ra.unbalanced, 300);
	/* the timed ones among them end as repaired exits: still well nested
	 * (their stacks hold the skipped calls until a's exit repairs them) */
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "a"), (long)rm.timed);
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "b"), (long)rr.timed);
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "c"), (long)ra.timed);
	ck_assert_uint_gt(rr.timed + ra.timed, 0);
}
END_TEST

/* A recursion deeper than a context lists (JPT_CTX_MAX = 1024): a timed
 * call's stack has its true depth, its listed callers named, the rest 0. */
static void recurse_r(jitperf_fn f, int n)
{
	jitperf_enter(f);
	if (n > 1)
		recurse_r(f, n - 1);
	jitperf_exit(f);
}

struct deep_arg { struct jpt_reader *r; long calls, bad, unnamed; };

static int deep_cb(const struct jpt_call *c, void *arg)
{
	struct deep_arg *a = arg;

	a->calls++;
	if (c->depth == 0) {
		a->bad += strcmp(jpt_fn(a->r, c->fn)->name, "m") != 0;
		return 0;
	}
	/* m at the bottom (unless more than 1024 untraced calls lie between) */
	for (uint32_t d = 0; d < c->depth; d++) {
		const struct jpt_fn *f = jpt_fn(a->r, c->stack[d]);

		if (!f)
			a->unnamed++;
		else if (strcmp(f->name, d ? "r" : "m") && strcmp(f->name, "r"))
			a->bad++;
	}
	a->bad += strcmp(jpt_fn(a->r, c->fn)->name, "r") != 0;
	return 0;
}

START_TEST(test_sampling_deep_tree)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 2000, NULL);
	struct deep_arg a = { 0 };
	struct instr_row rm, rr;
	jitperf_fn fm, fr;
	char err[512];

	fm = jitperf_fn_register(jp, "m", NULL, 0);
	fr = jitperf_fn_register(jp, "r", NULL, 0);
	/* about 30 timed calls of r at random depths, most deeper than 1025
	 * with no timed caller: at least one (but for 1 chance in 10^5) */
	for (int tree = 0; tree < 40; tree++) {
		jitperf_enter(fm);
		recurse_r(fr, 1500);
		jitperf_exit(fm);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "m", &rm), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "r", &rr), 0);
	ck_assert_uint_eq(rm.calls, 40);
	ck_assert_uint_eq(rr.calls, 40 * 1500);
	a.r = instr_trace_open(dir, getpid());
	ck_assert_int_eq(jpt_for_each_call(a.r, deep_cb, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.bad, 0);
	ck_assert_int_eq(a.calls, (long)(rm.timed + rr.timed));
	ck_assert_int_gt(a.unnamed, 0);                 /* some were deeper than listed */
	jpt_close(a.r);
}
END_TEST

/* ---- the trace's filler thread lives exactly as long as the tracing session */

static int fill_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "jitperf-fill\n"))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

START_TEST(test_filler_thread_lifetime)
{
	jitperf *jp = instr_open(dir, JITPERF_STATS, 1, NULL);

	ck_assert_int_eq(fill_threads(), 0);            /* no trace, no filler */
	ck_assert_int_eq(jitperf_close(jp), 0);
	jp = instr_open(dir, JITPERF_TRACE, 1, NULL);
	fa = jitperf_fn_register(jp, "a", NULL, 0);
	for (int i = 0; i < 100000; i++) {              /* 12 blocks */
		jitperf_enter(fa);
		jitperf_exit(fa);
	}
	ck_assert_int_eq(fill_threads(), 1);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(fill_threads(), 0);
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "a"), 100000);
}
END_TEST

/* A call open at fork() (main, in a -finstrument-functions program) spans the
 * child's calls: the child's trace holds them, nested in it. */
struct fork_arg { struct jpt_reader *r; int b_under_a, other; };

static int fork_cb(const struct jpt_call *c, void *arg)
{
	struct fork_arg *a = arg;
	const char *name = jpt_fn(a->r, c->fn)->name;

	if (!strcmp(name, "b") && c->depth == 1 && !strcmp(jpt_fn(a->r, c->stack[0])->name, "a"))
		a->b_under_a++;
	else if (strcmp(name, "a") || c->depth != 0)
		a->other++;
	return 0;
}

START_TEST(test_fork_under_open_call)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 1, NULL);
	pid_t child;
	int status;

	fa = jitperf_fn_register(jp, "a", NULL, 0);
	fb = jitperf_fn_register(jp, "b", NULL, 0);
	jitperf_enter(fa);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int fillers = fill_threads();   /* the child's own, restarted */

		for (int i = 0; i < 3; i++) {
			jitperf_enter(fb);
			jitperf_exit(fb);
		}
		jitperf_exit(fa);
		_exit(jitperf_close(jp) || fillers != 1 ? 1 : 0);
	}
	jitperf_enter(fb);
	jitperf_exit(fb);
	jitperf_exit(fa);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "a"), 1);
	ck_assert_int_eq(instr_trace_calls(dir, getpid(), "b"), 1);
	ck_assert_int_eq(instr_trace_calls(dir, child, "a"), 1);
	ck_assert_int_eq(instr_trace_calls(dir, child, "b"), 3);
	{
		struct fork_arg a = { instr_trace_open(dir, child), 0, 0 };
		char err[512];

		ck_assert_int_eq(jpt_for_each_call(a.r, fork_cb, &a, err, sizeof(err)), 0);
		ck_assert_int_eq(a.b_under_a, 3);
		ck_assert_int_eq(a.other, 0);
		jpt_close(a.r);
	}
}
END_TEST

START_TEST(test_sigkill_keeps_calls)
{
	int pfd[2];
	pid_t child;
	char c;
	struct jpt_reader *r;

	ck_assert_int_eq(pipe(pfd), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		jitperf *jp = instr_open(dir, JITPERF_TRACE, 1, NULL);
		jitperf_fn f = jitperf_fn_register(jp, "done", NULL, 0);
		jitperf_fn g = jitperf_fn_register(jp, "open", NULL, 0);

		for (int i = 0; i < 12345; i++) {
			jitperf_enter(f);
			jitperf_exit(f);
		}
		jitperf_enter(g);               /* never completes */
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &c, 1), 1);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(pfd[0]);
	r = instr_trace_open(dir, child);
	ck_assert_int_eq(jpt_info(r)->truncated, 1);
	jpt_close(r);
	ck_assert_int_eq(instr_trace_calls(dir, child, "done"), 12345);
	ck_assert_int_eq(instr_trace_calls(dir, child, "open"), 0);
}
END_TEST

/* ---- Generated code that counts inline and keeps a flag in its frame */

/* What the example JIT emits around a function's body (jitperf_enter(3)). */
static void framed(jitperf_fn fn, void (*body)(void))
{
	volatile int flag = 0;
	unsigned a = (unsigned)jitperf__probe_active;

	if (a) {
		struct jitperf__tls *T = &jitperf__tls;
		struct jitperf__count *c;

		if (T->gen == a && (c = &T->count[fn], c->calls + 1 < c->next)) {
			jitperf__inc(&c->calls);
			jitperf__inc(&T->framed_calls);
		} else {
			flag = 1;
			jitperf__enter_framed(fn);
		}
	}
	body();
	if (flag)
		jitperf__exit_slow(fn);
}

static void leaf_body(void)
{
}

static void mid_body(void)
{
	framed(fb, leaf_body);
	framed(fb, leaf_body);
}

static void top_body(void)
{
	for (int i = 0; i < 1000; i++)
		framed(fa, mid_body);
}

struct framed_arg { struct jpt_reader *r; long b_calls, bad; };

static int framed_cb(const struct jpt_call *c, void *arg)
{
	struct framed_arg *a = arg;

	if (c->fn != fb)
		return 0;
	a->b_calls++;
	/* its callers were only counted: the trace says so with an unknown
	 * caller right below it; above that, only its timed callers */
	if (c->depth < 1 || c->stack[c->depth - 1] != 0)
		a->bad++;
	for (uint32_t d = 0; d + 1 < c->depth; d++)
		if (c->stack[d] != 0 && c->stack[d] != fa && c->stack[d] != fc)
			a->bad++;
	return 0;
}

START_TEST(test_framed_protocol)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, 10, NULL);
	struct framed_arg a = { 0 };
	struct instr_row ra, rb, rc;
	char err[512];

	fa = jitperf_fn_register(jp, "mid", NULL, 0);
	fb = jitperf_fn_register(jp, "leaf", NULL, 0);
	fc = jitperf_fn_register(jp, "top", NULL, 0);
	framed(fc, top_body);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "top", &rc), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "mid", &ra), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "leaf", &rb), 0);
	ck_assert_uint_eq(rc.calls, 1);                 /* exact */
	ck_assert_uint_eq(ra.calls, 1000);
	ck_assert_uint_eq(rb.calls, 2000);
	ck_assert_uint_eq(ra.unbalanced + rb.unbalanced + rc.unbalanced, 0);
	ck_assert_uint_gt(rb.timed, 100);               /* about 1 in 10 */
	ck_assert_uint_lt(rb.timed, 300);
	a.r = instr_trace_open(dir, getpid());
	ck_assert_int_eq(jpt_for_each_call(a.r, framed_cb, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.b_calls, (long)rb.timed);
	ck_assert_int_eq(a.bad, 0);
	jpt_close(a.r);
}
END_TEST

/* ---- Exact counts whatever times the calls */

static const unsigned every_mode[] = {
	JITPERF_SAMPLE_NONE, 1, 7, JITPERF_SAMPLE_ADAPTIVE,
};

static void *pairs(void *arg)
{
	for (int i = 0; i < 5000; i++) {
		jitperf_enter(fa);
		jitperf_exit(fa);
	}
	return arg;
}

static volatile sig_atomic_t nhandled;

static void handler_calls(int sig)
{
	(void)sig;
	jitperf_enter(fc);              /* lands anywhere, in probes too */
	jitperf_exit(fc);
	nhandled++;
}

/* Recursion, longjmp, threads, a signal handler that calls probes and a
 * fork, in each mode: the statistics count every call. */
START_TEST(test_exact_every_mode)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE | JITPERF_STATS, every_mode[_i], NULL);
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct instr_row rf, ra, rb, rc, rr;
	struct sigaction sa;
	pthread_t th[3];
	jitperf_fn fr, fm;
	volatile int k;
	pid_t child;
	int status;

	ffib = jitperf_fn_register(jp, "fib", NULL, 0);
	fa = jitperf_fn_register(jp, "a", NULL, 0);
	fb = jitperf_fn_register(jp, "b", NULL, 0);
	fc = jitperf_fn_register(jp, "c", NULL, 0);
	fr = jitperf_fn_register(jp, "r", NULL, 0);
	fm = jitperf_fn_register(jp, "m", NULL, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler_calls;
	sigaction(SIGPROF, &sa, NULL);
	nhandled = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	for (int i = 0; i < 20 || (nhandled < 50 && i < 2000); i++)
		ck_assert_int_eq(fib(15), 610);         /* 1973 calls each */
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	signal(SIGPROF, SIG_DFL);
	jitperf_enter(fm);
	for (k = 0; k < 50; k++)                        /* 100 calls skipped by longjmp */
		if (!setjmp(out_jb))
			enter_and_jump(fr, fb);
	jitperf_exit(fm);                               /* repairs them */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, pairs, NULL), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		for (int i = 0; i < 7; i++)
			pairs(NULL);
		_exit(jitperf_close(jp) ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "fib", &rf), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "a", &ra), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "b", &rb), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "c", &rc), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "r", &rr), 0);
	ck_assert_uint_eq(rf.calls % 1973, 0);
	ck_assert_uint_ge(rf.calls, 20 * 1973);
	ck_assert_uint_eq(rc.calls, (uint64_t)nhandled); /* every handler's call */
	ck_assert_uint_eq(rb.calls, 50);
	ck_assert_uint_eq(rr.calls, 50);
	ck_assert_uint_eq(rb.unbalanced, 50);
	ck_assert_uint_eq(rr.unbalanced, 50);
	ck_assert_uint_eq(ra.calls, 15000);             /* threads */
	ck_assert_int_eq(instr_stats_row(dir, child, "a", &ra), 0);
	ck_assert_uint_eq(ra.calls, 35000);             /* the child's own */
	if (every_mode[_i] == 1)
		ck_assert_uint_eq(rf.timed, rf.calls);
	else if (every_mode[_i] == JITPERF_SAMPLE_NONE)
		ck_assert_uint_eq(rf.timed + ra.timed + rc.timed, 0);
	else
		ck_assert_uint_lt(rf.timed, rf.calls);
}
END_TEST

static Suite *probe_suite(void)
{
	Suite *s = suite_create("Probes");
	TCase *tc;

	tc = tcase_create("Registration");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_register_ids);
	tcase_add_test(tc, test_one_instrumenting_session);
	suite_add_tcase(s, tc);

	tc = tcase_create("Exact counts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_nested_counts);
	tcase_add_test(tc, test_recursive_fib);
	tcase_add_test(tc, test_threads_exact);
	tcase_add_test(tc, test_close_while_running);
	tcase_add_loop_test(tc, test_exact_every_mode, 0, sizeof(every_mode) / sizeof(every_mode[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("Sampling");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sampling_at_depth);
	tcase_add_test(tc, test_sampling_trace_only);
	tcase_add_test(tc, test_sampling_none);
	tcase_add_test(tc, test_sampling_adaptive);
	tcase_add_test(tc, test_sampling_longjmp_out);
	tcase_add_test(tc, test_sampling_deep_tree);
	tcase_add_test(tc, test_framed_protocol);
	suite_add_tcase(s, tc);

	tc = tcase_create("Unbalanced calls");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_unbalanced_repairs);
	suite_add_tcase(s, tc);

	tc = tcase_create("Not disturbing the program");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_errno_preserved);
	tcase_add_test(tc, test_signal_reentry);
	suite_add_tcase(s, tc);

	tc = tcase_create("Counters");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_software_counters);
	suite_add_tcase(s, tc);

	tc = tcase_create("Processes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fork_child_files);
	tcase_add_test(tc, test_fork_under_open_call);
	tcase_add_test(tc, test_filler_thread_lifetime);
	tcase_add_test(tc, test_sigkill_keeps_calls);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(probe_suite());
}
