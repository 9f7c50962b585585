/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trace file and its reader: what a session writes (tables, code
 * events, thread names, size per event) and how the reader handles files
 * that are empty, foreign, truncated at any byte or corrupted at random.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "instr-subr.h"
#include "format/trace.h"

static char *dir;
static char path[4200];

static void setup(void)
{
	dir = make_tmpdir();
	snprintf(path, sizeof(path), "%s/jitperf-%d.trace", dir, (int)getpid());
}

static void teardown(void)
{
	remove_tmpdir(dir);
	dir = NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A trace of pairs calls of a > b, written by a real session. */
static void write_trace(int pairs)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE, 1, NULL);
	jitperf_fn a = jitperf_fn_register(jp, "a", (void *)0x1000, 0x40);
	jitperf_fn b = jitperf_fn_register(jp, "b", (void *)0x2000, 0x80);

	for (int i = 0; i < pairs; i++) {
		jitperf_enter(a);
		jitperf_enter(b);
		jitperf_exit(b);
		jitperf_exit(a);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
}

static unsigned char *load(const char *p, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	FILE *f = fopen(p, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	buf = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*len = (size_t)st.st_size;
	return buf;
}

static void store(const char *p, const unsigned char *buf, size_t len)
{
	FILE *f = fopen(p, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
}

struct walk { long calls; uint64_t last_end; int disorder; };

static int count_cb(const struct jpt_call *c, void *arg)
{
	struct walk *w = arg;

	w->calls++;
	if (c->end_ns < w->last_end || c->start_ns > c->end_ns)
		w->disorder++;
	w->last_end = c->end_ns;
	return 0;
}

/* ---- Contents */

struct code_arg { struct jpt_code c[8]; char names[8][32]; int n; };

static int code_cb(const struct jpt_code *c, void *arg)
{
	struct code_arg *a = arg;

	if (a->n < 8) {
		a->c[a->n] = *c;
		snprintf(a->names[a->n], sizeof(a->names[0]), "%s", c->name ? c->name : "");
		a->n++;
	}
	return 0;
}

START_TEST(test_tables_and_code_events)
{
	static const unsigned char code[64];
	uint64_t t0 = mono_ns(), t1, idx;
	jitperf *jp = instr_open(dir, JITPERF_TRACE, 1, NULL);
	jitperf_fn a = jitperf_fn_register(jp, "alpha", code, sizeof(code));
	struct jpt_reader *r;
	struct code_arg ca = { .n = 0 };
	struct walk w = { 0 };
	char err[512], comm[17] = "";

	ck_assert_int_eq(jitperf_code_load(jp, "jitfn", code, sizeof(code), &idx), 0);
	ck_assert_int_eq(jitperf_code_move(jp, idx, code + 16), 0);
	jitperf_enter(a);
	jitperf_exit(a);
	ck_assert_int_eq(jitperf_code_unload(jp, idx), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	t1 = mono_ns();

	r = instr_trace_open(dir, getpid());
	ck_assert_uint_eq(jpt_info(r)->version, 3);
	ck_assert_uint_eq(jpt_info(r)->pid, (uint32_t)getpid());
	ck_assert_uint_eq(jpt_info(r)->sample_every, 1);
	ck_assert_int_eq(jpt_info(r)->truncated, 0);
	ck_assert(jpt_info(r)->start_ns >= t0 && jpt_info(r)->start_ns <= t1);
	ck_assert_uint_eq(jpt_nfns(r), 1);
	ck_assert_str_eq(jpt_fn(r, 1)->name, "alpha");
	ck_assert_uint_eq(jpt_fn(r, 1)->addr, (uintptr_t)code);
	ck_assert_ptr_null(jpt_fn(r, 2));
	ck_assert_uint_eq(jpt_nthreads(r), 1);
	ck_assert_uint_eq(jpt_thread(r, 0)->tid, (uint32_t)syscall(SYS_gettid));
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	ck_assert_str_eq(jpt_thread(r, 0)->name, comm);

	ck_assert_int_eq(jpt_for_each_code(r, code_cb, &ca, err, sizeof(err)), 0);
	ck_assert_int_eq(ca.n, 3);
	ck_assert_int_eq(ca.c[0].kind, 0);
	ck_assert_str_eq(ca.names[0], "jitfn");
	ck_assert_uint_eq(ca.c[0].index, idx);
	ck_assert_uint_eq(ca.c[0].addr, (uintptr_t)code);
	ck_assert_uint_eq(ca.c[0].len, sizeof(code));
	ck_assert_int_eq(ca.c[1].kind, 1);
	ck_assert_uint_eq(ca.c[1].addr, (uintptr_t)(code + 16));
	ck_assert_int_eq(ca.c[2].kind, 2);
	for (int i = 0; i < 3; i++) {
		ck_assert(ca.c[i].ts_ns >= t0 && ca.c[i].ts_ns <= t1);
		ck_assert_uint_eq(ca.c[i].tid, (uint32_t)syscall(SYS_gettid));
	}
	ck_assert_int_eq(jpt_for_each_call(r, count_cb, &w, err, sizeof(err)), 0);
	ck_assert_int_eq(w.calls, 1);
	/* The call lies between the move and the unload on the CLOCK_MONOTONIC timeline. */
	ck_assert_uint_ge(w.last_end, ca.c[1].ts_ns);
	ck_assert_uint_le(w.last_end, ca.c[2].ts_ns);
	jpt_close(r);
}
END_TEST

static void *named_thread(void *arg)
{
	jitperf_fn f = (jitperf_fn)(uintptr_t)arg;

	pthread_setname_np(pthread_self(), "worker-7");
	jitperf_enter(f);
	jitperf_exit(f);
	return NULL;
}

static pthread_mutex_t rename_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rename_cond = PTHREAD_COND_INITIALIZER;
static int rename_state;

static void *renamed_thread(void *arg)
{
	jitperf_fn f = (jitperf_fn)(uintptr_t)arg;

	pthread_setname_np(pthread_self(), "before");
	jitperf_enter(f);
	jitperf_exit(f);
	pthread_setname_np(pthread_self(), "after");
	pthread_mutex_lock(&rename_lock);
	rename_state = 1;                  /* renamed; stay alive until close */
	pthread_cond_broadcast(&rename_cond);
	while (rename_state != 2)
		pthread_cond_wait(&rename_cond, &rename_lock);
	pthread_mutex_unlock(&rename_lock);
	return NULL;
}

START_TEST(test_thread_names)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE, 1, NULL);
	jitperf_fn f = jitperf_fn_register(jp, "f", NULL, 0);
	pthread_t t1, t2;
	struct jpt_reader *r;
	int found = 0;

	pthread_create(&t1, NULL, named_thread, (void *)(uintptr_t)f);
	pthread_join(t1, NULL);
	pthread_create(&t2, NULL, renamed_thread, (void *)(uintptr_t)f);
	pthread_mutex_lock(&rename_lock);
	while (rename_state != 1)
		pthread_cond_wait(&rename_cond, &rename_lock);
	pthread_mutex_unlock(&rename_lock);
	ck_assert_int_eq(jitperf_close(jp), 0);
	pthread_mutex_lock(&rename_lock);
	rename_state = 2;
	pthread_cond_broadcast(&rename_cond);
	pthread_mutex_unlock(&rename_lock);
	pthread_join(t2, NULL);

	r = instr_trace_open(dir, getpid());
	ck_assert_uint_eq(jpt_nthreads(r), 2);
	for (size_t i = 0; i < 2; i++) {
		found += !strcmp(jpt_thread(r, i)->name, "worker-7");
		found += 2 * !strcmp(jpt_thread(r, i)->name, "after");
	}
	ck_assert_int_eq(found, 3);
	jpt_close(r);
}
END_TEST

/* What the reader says stays of the stack from one call to the next. */
struct same_arg {
	uint32_t prev[8], prev_n, tid;
	uint32_t seen[32];
	int      n, broken;
};

static int same_cb(const struct jpt_call *c, void *arg)
{
	struct same_arg *a = arg;

	if (c->depth >= 8 || c->same_below > c->depth + 1 ||
	    (a->n && c->tid != a->tid && c->same_below) ||
	    (c->same_below > a->prev_n && c->tid == a->tid) ||
	    memcmp(c->stack, a->prev, c->same_below * sizeof(*a->prev)))
		a->broken++;
	if (a->n < 32)
		a->seen[a->n] = c->same_below;
	a->n++;
	a->tid = c->tid;
	memcpy(a->prev, c->stack, (c->depth + 1) * sizeof(*a->prev));
	a->prev_n = c->depth + 1;
	return 0;
}

static void *b_once(void *arg)
{
	jitperf_fn *fn = arg;

	jitperf_enter(fn[0]);
	jitperf_enter(fn[1]);
	jitperf_exit(fn[1]);
	jitperf_exit(fn[0]);
	return NULL;
}

START_TEST(test_same_below)
{
	jitperf *jp = instr_open(dir, JITPERF_TRACE, 1, NULL);
	jitperf_fn fn[3] = { jitperf_fn_register(jp, "a", NULL, 0),
			     jitperf_fn_register(jp, "b", NULL, 0),
			     jitperf_fn_register(jp, "c", NULL, 0) };
	/* per round: b, b again, b in c, c, a; then the other thread's b, a */
	static const uint32_t want[17] = { 0, 1, 1, 2, 1, 0, 1, 1, 2, 1, 0, 1, 1, 2, 1, 0, 1 };
	struct same_arg sa = { .n = 0 };
	struct jpt_reader *r;
	char err[512];
	pthread_t t;

	for (int round = 0; round < 3; round++) {
		jitperf_enter(fn[0]);
		jitperf_enter(fn[1]);
		jitperf_exit(fn[1]);
		jitperf_enter(fn[1]);
		jitperf_exit(fn[1]);
		jitperf_enter(fn[2]);
		jitperf_enter(fn[1]);
		jitperf_exit(fn[1]);
		jitperf_exit(fn[2]);
		jitperf_exit(fn[0]);
	}
	pthread_create(&t, NULL, b_once, fn);
	pthread_join(t, NULL);
	ck_assert_int_eq(jitperf_close(jp), 0);

	r = instr_trace_open(dir, getpid());
	ck_assert_int_eq(jpt_for_each_call(r, same_cb, &sa, err, sizeof(err)), 0);
	jpt_close(r);
	ck_assert_int_eq(sa.n, 17);
	ck_assert_int_eq(sa.broken, 0);
	/* the threads come in either order: compare each thread's part */
	if (sa.seen[0] == 0 && sa.seen[1] == 1 && sa.seen[2] == 0)
		ck_assert_mem_eq(sa.seen + 2, want, 15 * sizeof(*want));
	else
		ck_assert_mem_eq(sa.seen, want, 17 * sizeof(*want));
}
END_TEST

START_TEST(test_bytes_per_event)
{
	struct stat st;
	struct jpt_reader *r;
	struct walk w = { 0 };
	char err[512];

	/* 10000 times a > b: 40000 short events of 4 bytes (160000 bytes) and
	 * one absolute time stamp fill three 64 KiB blocks; one more holds the
	 * tables. */
	write_trace(10000);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, JPT_HEADER_SIZE + 4 * JPT_BLOCK_SIZE);
	r = instr_trace_open(dir, getpid());
	ck_assert_int_eq(jpt_for_each_call(r, count_cb, &w, err, sizeof(err)), 0);
	ck_assert_int_eq(w.calls, 20000);
	ck_assert_int_eq(w.disorder, 0);
	jpt_close(r);
}
END_TEST

/* The events that do not fit a short one: an id above 4095, a gap of
 * 131072 ticks or more, a repaired exit. */
struct long_arg { struct jpt_reader *r; char seen[8][64]; uint64_t dur[8]; int n; };

static int long_cb(const struct jpt_call *c, void *arg)
{
	struct long_arg *a = arg;

	if (a->n < 8) {
		snprintf(a->seen[a->n], sizeof(a->seen[0]), "%s@%u", jpt_fn(a->r, c->fn)->name,
			 c->depth);
		a->dur[a->n] = c->end_ns - c->start_ns;
	}
	a->n++;
	return 0;
}

START_TEST(test_long_events)
{
	static const char *const want[] = { "f4100@1", "f4101@2", "f4100@1", "f1@0" };
	jitperf *jp;
	jitperf_fn fn[4102];
	struct long_arg a = { 0 };
	struct timespec gap = { 0, 2000000 };   /* 2 ms: millions of ticks */
	char name[32], err[512];

	setenv("JITPERF_CLOCK", "monotonic", 1);
	jp = instr_open(dir, JITPERF_TRACE, 1, NULL);
	unsetenv("JITPERF_CLOCK");
	for (int i = 1; i <= 4101; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		fn[i] = jitperf_fn_register(jp, name, NULL, 0);
		ck_assert_uint_eq(fn[i], (unsigned)i);
	}
	jitperf_enter(fn[1]);
	jitperf_enter(fn[4100]);        /* id 4100: an event word */
	nanosleep(&gap, NULL);
	jitperf_enter(fn[4101]);        /* after 2 ms */
	jitperf_exit(fn[4101]);
	jitperf_exit(fn[4100]);
	jitperf_enter(fn[4100]);
	jitperf_enter(fn[4101]);
	jitperf_exit(fn[4100]);         /* 4101's exit skipped: repaired */
	jitperf_exit(fn[1]);
	ck_assert_int_eq(jitperf_close(jp), 0);

	a.r = instr_trace_open(dir, getpid());
	ck_assert_int_eq(jpt_for_each_call(a.r, long_cb, &a, err, sizeof(err)), 0);
	jpt_close(a.r);
	ck_assert_int_eq(a.n, 5);
	ck_assert_str_eq(a.seen[0], "f4101@2");
	for (int i = 0; i < 4; i++)
		ck_assert_str_eq(a.seen[i + 1], want[i]);
	ck_assert_uint_ge(a.dur[1], 2000000);   /* the gap is in the first f4100 */
	ck_assert_uint_lt(a.dur[0], 2000000);
}
END_TEST

/* ---- The minimum duration: shorter calls are timed, not traced */

static void spin_us(int us)
{
	for (uint64_t t0 = mono_ns(); mono_ns() - t0 < (uint64_t)us * 1000;)
		;
}

struct min_arg { struct jpt_reader *r; long outer, lng, shrt, bad; };

static int min_cb(const struct jpt_call *c, void *arg)
{
	struct min_arg *a = arg;
	const char *name = jpt_fn(a->r, c->fn)->name;

	if (!strcmp(name, "outer") && c->depth == 0)
		a->outer++;
	else if (!strcmp(name, "long") && c->depth == 1 &&
		 !strcmp(jpt_fn(a->r, c->stack[0])->name, "outer") && c->end_ns - c->start_ns >= 50000)
		a->lng++;
	else if (!strcmp(name, "short") && c->end_ns - c->start_ns >= 50000)
		a->shrt++;      /* an empty call that lost the CPU: long, so traced */
	else
		a->bad++;
	return 0;
}

START_TEST(test_min_duration)
{
	struct jitperf_options o = { .outputs = JITPERF_TRACE | JITPERF_STATS, .sample_every = 1,
				     .trace_min_ns = 50000 };
	jitperf *jp = instr_open_opts(dir, &o);
	jitperf_fn outer = jitperf_fn_register(jp, "outer", NULL, 0);
	jitperf_fn lng = jitperf_fn_register(jp, "long", NULL, 0);
	jitperf_fn shrt = jitperf_fn_register(jp, "short", NULL, 0);
	struct min_arg a = { 0 };
	struct instr_row rs;
	char err[512], *text;
	unsigned long long traced, dropped_short;

	/* outer's entry is written only when long, inside it, proves long */
	jitperf_enter(outer);
	for (int i = 0; i < 10; i++) {
		for (int k = 0; k < 100; k++) {
			jitperf_enter(shrt);
			jitperf_exit(shrt);
		}
		jitperf_enter(lng);
		spin_us(80);
		jitperf_exit(lng);
	}
	jitperf_exit(outer);
	for (int k = 0; k < 100; k++) {         /* outside any long call */
		jitperf_enter(shrt);
		jitperf_exit(shrt);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(instr_stats_row(dir, getpid(), "short", &rs), 0);
	ck_assert_uint_eq(rs.calls, 1100);
	ck_assert_uint_eq(rs.timed, 1100);              /* timed into the statistics */
	a.r = instr_trace_open(dir, getpid());
	ck_assert_uint_eq(jpt_info(a.r)->min_ns, 50000);
	ck_assert_int_eq(jpt_for_each_call(a.r, min_cb, &a, err, sizeof(err)), 0);
	/* each short call is dropped or, preempted for 50 us or more, traced */
	ck_assert_int_le(a.shrt, 10);
	ck_assert_uint_eq(jpt_info(a.r)->dropped_short, 1100 - (unsigned long long)a.shrt);
	ck_assert_int_eq(a.outer, 1);
	ck_assert_int_eq(a.lng, 10);
	ck_assert_int_eq(a.bad, 0);
	jpt_close(a.r);
	snprintf(err, sizeof(err), "%s/jitperf-%d.stats", dir, (int)getpid());
	text = instr_slurp(err);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "# trace: "));
	ck_assert_int_eq(sscanf(strstr(text, " traced="), " traced=%llu dropped_full=0 dropped_short=%llu",
				&traced, &dropped_short), 2);
	ck_assert_uint_eq(traced, 11 + (unsigned long long)a.shrt);
	ck_assert_uint_eq(dropped_short, 1100 - (unsigned long long)a.shrt);
	free(text);
}
END_TEST

/* ---- Bad input */

static void expect_error(const char *p, int want_err, const char *want_msg)
{
	struct jpt_reader *r = NULL;
	char err[512] = "";
	int ret = jpt_open(&r, p, err, sizeof(err));

	ck_assert_int_eq(ret, want_err);
	ck_assert_ptr_null(r);
	ck_assert_msg(strstr(err, p) == err, "error does not start with the path: %s", err);
	ck_assert_msg(strstr(err, want_msg) != NULL, "error '%s' lacks '%s'", err, want_msg);
}

START_TEST(test_bad_headers)
{
	char p[4300];
	unsigned char *buf;
	size_t len;

	snprintf(p, sizeof(p), "%s/bad.trace", dir);
	store(p, (const unsigned char *)"", 0);
	expect_error(p, -EINVAL, "file too short for the 4096-byte header at offset 0");
	write_trace(3);
	buf = load(path, &len);
	buf[0] = 'X';
	store(p, buf, len);
	expect_error(p, -EINVAL, "not a jitperf trace (bad magic) at offset 0");
	buf[0] = 'J';
	buf[8] = 99;
	store(p, buf, len);
	expect_error(p, -EOPNOTSUPP, "unsupported version 99 at offset 8");
	buf[8] = 1;
	buf[JPT_HEADER_SIZE] ^= 0xff;                  /* first block's magic */
	store(p, buf, len);
	expect_error(p, -EINVAL, "bad block magic");
	expect_error(p, -EINVAL, "at offset 4096");
	buf[JPT_HEADER_SIZE] ^= 0xff;
	buf[JPT_HEADER_SIZE + 20 + 2] = 0x7f;          /* used: far beyond the block */
	store(p, buf, len);
	expect_error(p, -EINVAL, "larger than the block at offset 4116");
	free(buf);
	snprintf(p, sizeof(p), "%s/none.trace", dir);
	expect_error(p, -ENOENT, "No such file");
}
END_TEST

START_TEST(test_truncated_anywhere)
{
	char p[4300], err[512];
	unsigned char *buf;
	size_t len;
	long full;

	write_trace(5000);
	buf = load(path, &len);
	full = 10000;
	snprintf(p, sizeof(p), "%s/cut.trace", dir);
	for (size_t cut = 0; cut < len; cut += 1531) {
		struct jpt_reader *r = NULL;
		struct walk w = { 0 };
		int ret;

		store(p, buf, cut);
		ret = jpt_open(&r, p, err, sizeof(err));
		if (ret) {
			ck_assert_msg(strstr(err, " at offset ") != NULL, "no offset in: %s", err);
			continue;
		}
		ck_assert_int_eq(jpt_info(r)->truncated, 1);
		ck_assert_int_eq(jpt_for_each_call(r, count_cb, &w, err, sizeof(err)), 0);
		ck_assert_int_le(w.calls, full);
		ck_assert_int_eq(w.disorder, 0);
		jpt_close(r);
	}
	free(buf);
}
END_TEST

/*
 * A closed trace is read to its final block count: the blocks its writer
 * grew ahead (cut just after the flag is set) are never looked at, even
 * when they are still there, and whatever they hold.
 */
START_TEST(test_closed_tail)
{
	char p[4300], err[512];
	unsigned char *buf;
	size_t len;
	struct jpt_reader *r = NULL;
	struct walk w = { 0 };

	write_trace(5000);
	buf = load(path, &len);
	ck_assert_ptr_nonnull(buf = realloc(buf, len + (1 << 20)));
	memset(buf + len, 0xa5, 1 << 20);
	snprintf(p, sizeof(p), "%s/tail.trace", dir);
	store(p, buf, len + (1 << 20));
	ck_assert_msg(jpt_open(&r, p, err, sizeof(err)) == 0, "jpt_open: %s", err);
	ck_assert_int_eq(jpt_info(r)->truncated, 0);
	ck_assert_int_eq(jpt_for_each_call(r, count_cb, &w, err, sizeof(err)), 0);
	ck_assert_int_eq(w.calls, 10000);
	ck_assert_int_eq(w.disorder, 0);
	jpt_close(r);
	free(buf);
}
END_TEST

START_TEST(test_random_corruption)
{
	char p[4300], err[512];
	unsigned char *buf, *copy;
	size_t len;
	unsigned seed = 12345;
	int opened = 0;

	write_trace(3000);
	buf = load(path, &len);
	copy = malloc(len);
	ck_assert_ptr_nonnull(copy);
	snprintf(p, sizeof(p), "%s/rnd.trace", dir);
	for (int iter = 0; iter < 400; iter++) {
		struct jpt_reader *r = NULL;
		struct walk w = { 0 };
		int nflip = 1 + rand_r(&seed) % 8;

		memcpy(copy, buf, len);
		for (int k = 0; k < nflip; k++) {
			/* Mostly hit headers and tables, where damage is interesting. */
			size_t at = rand_r(&seed) % 2 ? (size_t)rand_r(&seed) % len :
				    (size_t)rand_r(&seed) % (JPT_HEADER_SIZE + 256);
			size_t blk = rand_r(&seed) % 3;

			if (rand_r(&seed) % 2 && JPT_HEADER_SIZE + blk * JPT_BLOCK_SIZE + 64 < len)
				at = JPT_HEADER_SIZE + blk * JPT_BLOCK_SIZE + (size_t)rand_r(&seed) % 256;
			copy[at % len] = (unsigned char)rand_r(&seed);
		}
		store(p, copy, len);
		if (jpt_open(&r, p, err, sizeof(err))) {
			ck_assert_msg(strstr(err, " at offset ") != NULL, "no offset in: %s", err);
			continue;
		}
		opened++;
		if (jpt_for_each_call(r, count_cb, &w, err, sizeof(err)))
			ck_assert_msg(strstr(err, " at offset ") != NULL, "no offset in: %s", err);
		jpt_close(r);
	}
	ck_assert_int_gt(opened, 0);
	free(copy);
	free(buf);
}
END_TEST

START_TEST(test_random_bytes)
{
	char p[4300], err[512];
	unsigned char *buf = malloc(JPT_HEADER_SIZE + 3 * JPT_BLOCK_SIZE);
	unsigned seed = 777;
	size_t len = JPT_HEADER_SIZE + 3 * JPT_BLOCK_SIZE;

	write_trace(1);
	{
		size_t hl;
		unsigned char *h = load(path, &hl);

		memcpy(buf, h, JPT_HEADER_SIZE);   /* a valid header over random blocks */
		free(h);
	}
	snprintf(p, sizeof(p), "%s/noise.trace", dir);
	for (int iter = 0; iter < 50; iter++) {
		struct jpt_reader *r = NULL;

		for (size_t i = JPT_HEADER_SIZE; i < len; i++)
			buf[i] = (unsigned char)rand_r(&seed);
		if (iter % 2)    /* sometimes a plausible block header */
			memcpy(buf + JPT_HEADER_SIZE, &(uint32_t){ JPT_BLOCK_MAGIC }, 4);
		store(p, buf, len);
		if (jpt_open(&r, p, err, sizeof(err)) == 0) {
			struct walk w = { 0 };

			jpt_for_each_call(r, count_cb, &w, err, sizeof(err));
			jpt_close(r);
		} else {
			ck_assert_msg(strstr(err, " at offset ") != NULL, "no offset in: %s", err);
		}
	}
	free(buf);
}
END_TEST

static Suite *trace_suite(void)
{
	Suite *s = suite_create("Trace file");
	TCase *tc;

	tc = tcase_create("Contents");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tables_and_code_events);
	tcase_add_test(tc, test_thread_names);
	tcase_add_test(tc, test_same_below);
	tcase_add_test(tc, test_bytes_per_event);
	tcase_add_test(tc, test_long_events);
	tcase_add_test(tc, test_min_duration);
	suite_add_tcase(s, tc);

	tc = tcase_create("Bad input");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_bad_headers);
	tcase_add_test(tc, test_truncated_anywhere);
	tcase_add_test(tc, test_closed_tail);
	tcase_add_test(tc, test_random_corruption);
	tcase_add_test(tc, test_random_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(trace_suite());
}
