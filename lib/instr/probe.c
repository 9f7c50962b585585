/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The probes: jitperf_enter/jitperf_exit, the slow paths behind them and
 * behind jitperf.h's inline code, and the life of a thread's state.
 *
 * A call costs the counting path: count it in the thread's counter of
 * the function and push its id on the thread's stack (struct
 * jitperf__tls); its exit pops it.  The counter also holds the number of
 * the function's next call to time, so the one comparison that keeps a
 * call on the counting path is also the sampling decision.  The slow path
 * (a call to time, a thread's first call, a mismatched exit) counts and
 * pushes the same way and times the calls sampling picks (timed.h, inline
 * here); a timed call's stack entry carries JITPERF__TIMED, so its exit
 * never matches the counting path's test and comes here too.
 *
 * Signals: the count is one increment a handler cannot split, the stack
 * depth is raised before the entry is written, so a handler's calls,
 * counted and pushed above, leave the interrupted call intact whatever
 * instruction they land on.  Counts are exact with handlers that call
 * probes.  The slow path's own state (timed calls, trace, statistics) is
 * guarded by busy: a handler that interrupts a slow path counts its calls
 * but times none of them.
 *
 * Lifetime: a thread's state (struct jp_thread and the arrays of its
 * jitperf__tls) is its own, made at its first call and kept until it
 * exits, so the counting path needs no handshake with jitperf_close.  The
 * slow path sets busy before it looks at the session and jitperf_close
 * waits for busy to drop after changing the generation; a thread that
 * exits inside a live session hands its state to the session, which frees
 * it after reading it.
 */
#include "config.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "instr.h"
#include "timed.h"

#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define COUNT_BYTES ((size_t)JITPERF__FN_LIMIT * sizeof(struct jitperf__count))
/*
 * Where the arrays start in their pages.  Both mappings are page-aligned;
 * with the first counters and the first stack entries at the same offset
 * in a page, a load of one after a store to the other waits for the store
 * (4 KiB aliasing: the counting path ran 3 times slower).
 */
#define COUNT_SKEW  0x840u
#define STACK_SKEW  0x100u
#define COUNT_MAP   (COUNT_BYTES + 4096)
#define STACK_MAP   (JP_STACK_MAX * sizeof(uint32_t) + 4096)

JITPERF_API volatile int jitperf__probe_active;
JITPERF_API __thread struct jitperf__tls jitperf__tls __attribute__((tls_model("initial-exec")));

/* Layout 1 of the inline path (JITPERF__LAYOUT, jitperf.h): a change here
 * is a new layout, its number, and its version node in libjitperf.map. */
_Static_assert(JITPERF__LAYOUT == 1 && sizeof(struct jitperf__count) == 16 &&
	       offsetof(struct jitperf__count, next) == 8 && sizeof(struct jitperf__tls) == 48 &&
	       offsetof(struct jitperf__tls, depth) == 4 && offsetof(struct jitperf__tls, stack) == 8 &&
	       offsetof(struct jitperf__tls, count) == 16 &&
	       offsetof(struct jitperf__tls, inline_calls) == 24 &&
	       offsetof(struct jitperf__tls, lib_calls) == 32 &&
	       offsetof(struct jitperf__tls, framed_calls) == 40 && JITPERF__STACK_MAX == 4096 &&
	       JITPERF__TIMED == 0x80000000u && JITPERF__FRAMED == 0x40000000u &&
	       JITPERF__FN_LIMIT == 0x400000u,
	       "the inline path's layout changed: a new JITPERF__LAYOUT and version node");
struct jp_instr *jp_cur;
/* Serialises choosing (and dropping) the instrumenting session, jp_cur. */
static pthread_mutex_t active_lock = PTHREAD_MUTEX_INITIALIZER;

/* This thread's state, kept across sessions; and whether it is exiting. */
static __thread struct jp_thread *self __attribute__((tls_model("initial-exec")));
static __thread int exiting __attribute__((tls_model("initial-exec")));

static int attaching;                   /* threads inside attach(): close waits for them */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int membarrier_ok;

static void *map_anon(size_t len, int flags) JP_NOINSTR;
static void *map_anon(size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void jp_active_lock(void)
{
	pthread_mutex_lock(&active_lock);
}

void jp_active_unlock(void)
{
	pthread_mutex_unlock(&active_lock);
}

/* In a fork child, where only the forking thread runs: free whoever held it. */
void jp_active_lock_reset(void)
{
	pthread_mutex_init(&active_lock, NULL);
}

static inline __attribute__((always_inline, no_instrument_function))
void push(struct jitperf__tls *T, uint32_t d, uint32_t entry)
{
	T->depth = d + 1;
	barrier();
	T->stack[d] = entry;
}

/* Enter the slow path's own state: 0 if nested in one (a signal handler)
 * or if the session went away.  Pairs with busy_leave. */
static inline __attribute__((always_inline, no_instrument_function))
int busy_enter(struct jp_thread *t)
{
	int b = t->busy;

	t->busy = b + 1;
	barrier();
	if (__builtin_expect(b != 0, 0) ||
	    jitperf__tls.gen != (unsigned)__atomic_load_n(&jitperf__probe_active, __ATOMIC_RELAXED)) {
		barrier();
		t->busy = b;
		return 0;
	}
	return 1;
}

static inline __attribute__((always_inline, no_instrument_function))
void busy_leave(struct jp_thread *t)
{
	barrier();
	t->busy = t->busy - 1;
}

/* ---- a thread's state */

void jp_thread_free(struct jp_thread *t)
{
	jp_counters_thread_close(&t->ctrs);
	for (unsigned c = 0; c < JP_FN_CHUNKS; c++)
		if (t->stats[c])
			munmap(t->stats[c], JP_FN_CHUNK * sizeof(struct jp_fstat));
	jp_trace_thread_reset(t);
	if (t->frames)
		munmap(t->frames, JP_STACK_MAX * sizeof(struct jp_frame));
	if (t->stack)
		munmap((char *)t->stack - STACK_SKEW, STACK_MAP);
	if (t->count)
		munmap((char *)t->count - COUNT_SKEW, COUNT_MAP);
	munmap(t, sizeof(*t));
}

/* mmap only: the first call may come from a signal handler. */
static struct jp_thread *thread_new(void) JP_NOINSTR;
static struct jp_thread *thread_new(void)
{
	struct jp_thread *t = map_anon(sizeof(*t), 0);

	if (!t)
		return NULL;
	t->ctrs.leader = -1;
	for (unsigned i = 0; i < JPT_MAX_COUNTERS; i++)
		t->ctrs.fd[i] = -1;
	t->frames = map_anon(JP_STACK_MAX * sizeof(struct jp_frame), MAP_NORESERVE);
	if ((t->stack = map_anon(STACK_MAP, 0)))
		t->stack = (uint32_t *)((char *)t->stack + STACK_SKEW);
	/* every id has its counter: the counting path checks no table size;
	 * only the pages of the ids a thread calls are ever touched */
	if ((t->count = map_anon(COUNT_MAP, MAP_NORESERVE)))
		t->count = (struct jitperf__count *)((char *)t->count + COUNT_SKEW);
	if (!t->frames || !t->stack || !t->count) {
		jp_thread_free(t);
		return NULL;
	}
	return t;
}

/* Forget what the thread recorded for an earlier session (or process). */
static void thread_reset(struct jp_thread *t) JP_NOINSTR;
static void thread_reset(struct jp_thread *t)
{
	/* zero pages again: counts and next-timed numbers of every id */
	madvise((char *)t->count - COUNT_SKEW, COUNT_MAP, MADV_DONTNEED);
	for (unsigned c = 0; c < JP_FN_CHUNKS; c++)
		if (t->stats[c]) {
			munmap(t->stats[c], JP_FN_CHUNK * sizeof(struct jp_fstat));
			t->stats[c] = NULL;
		}
	jp_trace_thread_reset(t);
	jp_counters_thread_close(&t->ctrs);
	t->in = NULL;                   /* the earlier session may be gone */
	t->ntimed = 0;
	t->timed_calls = t->traced = 0;
	t->drop_full = t->drop_short = t->drop_ring = 0;
	t->lib_calls = t->inline_calls = t->framed_calls = 0;
	t->dead = 0;
	t->busy = 0;
}

/* Copy the session's settings into the thread. */
static void thread_settings(struct jp_thread *t, struct jp_instr *in) JP_NOINSTR;
static void thread_settings(struct jp_thread *t, struct jp_instr *in)
{
	t->in = in;
	t->gen = in->gen;
	t->nfns = 0;
	t->stats_on = (uint8_t)in->stats;
	t->trace_on = in->trace != NULL;
	t->nctr = (uint8_t)in->counters.n;
	t->event_size = 8 + 8 * t->nctr;
	t->mode = (uint8_t)in->mode;
	t->every = in->every ? in->every : 1;
	t->min_ticks = in->trace_min_ns ?
		(uint64_t)((double)in->trace_min_ns * (double)in->ticks_per_sec / 1e9) : 0;
	if (in->trace_min_ns && !t->min_ticks)
		t->min_ticks = 1;
	t->net_on = t->stats_on || t->min_ticks;
	jp_sampling_reset(t);
}

static void thread_gone(void *unused) JP_NOINSTR;

static void make_key(void) JP_NOINSTR;
static void make_key(void)
{
	if (pthread_key_create(&exit_key, thread_gone))
		exit_key = (pthread_key_t)-1;
	membarrier_ok = !syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
}

static int attach_to(struct jp_instr *in, unsigned gen) JP_NOINSTR;
static int attach_to(struct jp_instr *in, unsigned gen)
{
	struct jitperf__tls *T = &jitperf__tls;
	struct jp_thread *t = self;

	if (!t && !(t = self = thread_new()))
		return 0;
	thread_reset(t);
	thread_settings(t, in);
	t->tid = (uint32_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
	t->tls = T;
	t->next = __atomic_load_n(&in->threads, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&in->threads, &t->next, t, 1,
					    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
	/* Closed meanwhile: t stays linked (not dead), the session leaves it. */
	if (__atomic_load_n(&jp_cur, __ATOMIC_SEQ_CST) != in)
		return 0;
	if (in->counters.n)
		jp_counters_thread_open(&in->counters, &t->ctrs);
	pthread_once(&exit_once, make_key);
	if (exit_key != (pthread_key_t)-1)
		pthread_setspecific(exit_key, t);
	T->stack = t->stack;
	T->count = t->count;
	T->depth = 0;
	T->lib_calls = T->inline_calls = T->framed_calls = 0;
	barrier();
	T->gen = gen;
	return 1;
}

/*
 * A thread's first call in the session of generation gen: make or reset
 * its state and link it.  The thread has no busy flag close() could see
 * yet, so it announces itself in attaching first; close() clears jp_cur
 * and then waits for attaching to drop to 0 (both sequentially
 * consistent: one of them sees the other).
 */
static int attach(unsigned gen) JP_NOINSTR;
static int attach(unsigned gen)
{
	struct jp_instr *in;
	sigset_t all, old;
	int saved = errno, ok = 0;

	/* No signal handler's probe may run inside: it would make a second
	 * state, or wait forever in the pthread_once this thread is in. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	__atomic_fetch_add(&attaching, 1, __ATOMIC_SEQ_CST);
	in = __atomic_load_n(&jp_cur, __ATOMIC_SEQ_CST);
	if (in && in->gen == gen && jitperf__tls.gen != gen && !exiting)
		ok = attach_to(in, gen);
	__atomic_fetch_sub(&attaching, 1, __ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return ok;
}

struct jp_thread *jp_attach_self(void)
{
	unsigned a = (unsigned)__atomic_load_n(&jitperf__probe_active, __ATOMIC_ACQUIRE);

	if (!a || (jitperf__tls.gen != a && !attach(a)))
		return NULL;
	return self;
}

/* Is fn a registered id?  Refreshes the thread's copy of the table size. */
static int known_fn(struct jp_thread *t, jitperf_fn fn) JP_NOINSTR;
static int known_fn(struct jp_thread *t, jitperf_fn fn)
{
	t->nfns = __atomic_load_n(&t->in->nfns, __ATOMIC_ACQUIRE);
	return fn - 1 < t->nfns || (fn == 0 && t->calibrating);
}

/* A repair or an exit without entry; busy held. */
static void unbalanced(struct jp_thread *t, uint32_t fn) JP_NOINSTR;
static void unbalanced(struct jp_thread *t, uint32_t fn)
{
	struct jp_fstat *st;

	if (t->stats_on && fn && fn - 1 < t->nfns && (st = jp_stat(t, fn)))
		st->unbalanced++;
}

/* ---- the slow paths */

/* framed: JITPERF__FRAMED (jitperf__enter_framed) or 0; a constant in
 * each of the two functions below */
static inline __attribute__((always_inline, no_instrument_function))
void enter_any(jitperf_fn fn, uint32_t framed)
{
	struct jitperf__tls *T = &jitperf__tls;
	unsigned a = (unsigned)__atomic_load_n(&jitperf__probe_active, __ATOMIC_RELAXED);
	struct jitperf__count *c;
	struct jp_thread *t;
	uint64_t n;
	uint32_t d;

	if (!a || (T->gen != a && !attach(a)))
		return;
	t = self;
	if (fn >= JITPERF__FN_LIMIT || (fn - 1 >= t->nfns && !known_fn(t, fn)))
		return;                 /* not an id of this session: ignored */
	c = &T->count[fn];
	n = c->calls + 1;               /* its number (a handler's calls in between only */
	jitperf__inc(&c->calls);        /* shift which call is timed; the count stays exact) */
	d = T->depth;
	if (__builtin_expect(d >= JP_STACK_MAX, 0)) {
		T->depth = d + 1;       /* too deep: counted, its exit only lowers depth */
		return;
	}
	if (__builtin_expect(!c->next, 0))
		c->next = jp_first_next(t, n);
	if (n < c->next || !busy_enter(t)) {
		push(T, d, fn | framed);
		jitperf__inc(&T->lib_calls);    /* priced as a counted call */
		return;
	}
	push(T, d, fn | framed | JITPERF__TIMED);
	if (!jp_timed_enter(t, fn, d, n, c, framed))
		T->stack[d] = fn | framed;
	busy_leave(t);
}

static void enter_slow(jitperf_fn fn) JP_NOINSTR __attribute__((noinline));
static void enter_slow(jitperf_fn fn)
{
	enter_any(fn, 0);
}

/* The timed call at stack entry sd ends at now, out of line: repairs,
 * thread exits. */
static void timed_exit_cold(struct jp_thread *t, uint32_t sd, int repaired, uint64_t now)
	JP_NOINSTR __attribute__((noinline));
static void timed_exit_cold(struct jp_thread *t, uint32_t sd, int repaired, uint64_t now)
{
	jp_timed_exit(t, sd, repaired, now);
}

/* An exit that is not the return of the timed call on top of the stack:
 * the thread's first event, the exit of a call too deep to be pushed, a
 * mismatched exit.  unwind: the matched call did not return either
 * (longjmp over a thunk). */
static void exit_other(jitperf_fn fn, int unwind) JP_NOINSTR __attribute__((noinline));
static void exit_other(jitperf_fn fn, int unwind)
{
	struct jitperf__tls *T = &jitperf__tls;
	unsigned a = (unsigned)__atomic_load_n(&jitperf__probe_active, __ATOMIC_RELAXED);
	struct jp_thread *t;
	uint32_t d, i, e;
	uint64_t now = 0;

	if (!a)
		return;
	if (T->gen != a) {
		/* the thread's first event: an exit without entry */
		if (attach(a) && busy_enter(self)) {
			if (fn - 1 >= self->nfns)
				known_fn(self, fn);
			unbalanced(self, fn);
			busy_leave(self);
		}
		return;
	}
	t = self;
	d = T->depth;
	if (d > JP_STACK_MAX) {
		T->depth = d - 1;       /* the exit of a call too deep to be pushed */
		return;
	}
	/* The innermost call of fn; above it, calls whose exit was skipped
	 * (longjmp, exception). */
	for (i = d; i > 0 && (T->stack[i - 1] & ~(JITPERF__TIMED | JITPERF__FRAMED)) != fn; i--)
		;
	if (!busy_enter(t)) {           /* a signal handler inside a slow path */
		if (i)
			T->depth = i - 1;
		return;
	}
	if (fn - 1 >= t->nfns)
		known_fn(t, fn);
	if (i == 0) {
		unbalanced(t, fn);      /* exit without entry */
		busy_leave(t);
		return;
	}
	for (uint32_t j = i - 1; j < d; j++)
		if (T->stack[j] & JITPERF__TIMED) {
			now = jp_ticks();
			break;
		}
	while (d > i) {
		e = T->stack[--d];
		if (e & JITPERF__TIMED)
			timed_exit_cold(t, d, 1, now);
		else
			unbalanced(t, e & ~JITPERF__FRAMED);
	}
	e = T->stack[i - 1];
	if (e & JITPERF__TIMED)
		timed_exit_cold(t, i - 1, unwind, now);
	else if (unwind)
		unbalanced(t, fn);
	T->depth = i - 1;
	busy_leave(t);
}

/* The exit the caller's counting path did not take: mostly a timed call
 * that returns (its entry has JITPERF__TIMED). */
static void exit_slow(jitperf_fn fn) JP_NOINSTR __attribute__((noinline));
static void exit_slow(jitperf_fn fn)
{
	struct jitperf__tls *T = &jitperf__tls;
	unsigned a = (unsigned)__atomic_load_n(&jitperf__probe_active, __ATOMIC_RELAXED);
	uint32_t d = T->depth;
	struct jp_thread *t;
	uint64_t now;

	if (__builtin_expect(!a || T->gen != a || d - 1 >= JP_STACK_MAX ||
			     (T->stack[d - 1] & ~JITPERF__FRAMED) != (fn | JITPERF__TIMED), 0)) {
		exit_other(fn, 0);
		return;
	}
	now = jp_ticks();
	t = self;
	if (busy_enter(t)) {
		jp_timed_exit(t, d - 1, 0, now);
		busy_leave(t);
	}
	T->depth = d - 1;
}

/* ---- the probes */

/*
 * The counting path is a leaf without a frame of its own: everything else
 * is a tail call.  (A perf -g sample that lands in it unwinds from the JIT
 * function's caller on, as in any frameless leaf.)
 */
#define FASTPATH __attribute__((optimize("omit-frame-pointer")))

void jitperf_enter(jitperf_fn fn) FASTPATH;
void jitperf_enter(jitperf_fn fn)
{
	unsigned a = (unsigned)jitperf__probe_active;

	if (__builtin_expect(a != 0, 0)) {
		if (jitperf__enter_fast(a, fn))
			jitperf__inc(&jitperf__tls.lib_calls);
		else
			enter_slow(fn);
	}
}

void jitperf_exit(jitperf_fn fn) FASTPATH;
void jitperf_exit(jitperf_fn fn)
{
	unsigned a = (unsigned)jitperf__probe_active;

	if (__builtin_expect(a != 0, 0) && !jitperf__exit_fast(a, fn))
		exit_slow(fn);
}

/* The slow paths of jitperf.h's inline code (and of libjitperf-cyg and
 * generated code): the caller's counting path did not take the call. */
void jitperf__enter_slow(jitperf_fn fn) JP_NOINSTR;
void jitperf__enter_slow(jitperf_fn fn)
{
	enter_slow(fn);
}

void jitperf__enter_framed(jitperf_fn fn) JP_NOINSTR;
void jitperf__enter_framed(jitperf_fn fn)
{
	enter_any(fn, JITPERF__FRAMED);
}

void jitperf__exit_slow(jitperf_fn fn) JP_NOINSTR;
void jitperf__exit_slow(jitperf_fn fn)
{
	exit_slow(fn);
}

void jp_probe_enter(jitperf_fn fn)
{
	jitperf_enter(fn);
}

void jp_probe_exit(jitperf_fn fn)
{
	jitperf_exit(fn);
}

void jp_probe_unwind(jitperf_fn fn)
{
	exit_other(fn, 1);
}

/* ---- thread exit, close, fork */

/* Close the calls a thread left open when it ends, and give its state to
 * the session (or free it when no live session knows it). */
static void thread_gone(void *unused)
{
	struct jitperf__tls *T = &jitperf__tls;
	struct jp_thread *t = self;
	int saved = errno;

	(void)unused;
	if (!t)
		return;
	exiting = 1;
	t->busy++;
	barrier();
	if (T->gen && T->gen == (unsigned)__atomic_load_n(&jitperf__probe_active, __ATOMIC_SEQ_CST) &&
	    t->in == __atomic_load_n(&jp_cur, __ATOMIC_RELAXED)) {
		uint32_t d = T->depth > JP_STACK_MAX ? JP_STACK_MAX : T->depth;
		uint64_t now = jp_ticks();

		while (d > 0) {
			uint32_t e = T->stack[--d];

			if (e & JITPERF__TIMED)
				timed_exit_cold(t, d, 1, now);
			else
				unbalanced(t, e & ~JITPERF__FRAMED);
		}
		T->depth = 0;
		t->lib_calls = T->lib_calls;
		t->inline_calls = T->inline_calls;
		t->framed_calls = T->framed_calls;
		jp_counters_thread_close(&t->ctrs);
		T->gen = 0;
		t->tls = NULL;
		t->dead = 1;            /* the session frees it now */
		self = NULL;
		barrier();
		t->busy--;
	} else {
		T->gen = 0;
		t->tls = NULL;
		self = NULL;
		barrier();
		t->busy--;
		/* a closing session may still read it: wait for the close */
		jp_active_lock();
		jp_thread_free(t);
		jp_active_unlock();
	}
	errno = saved;
}

/*
 * jp_cur has been cleared and the generation changed: wait until no slow
 * path still works on in.  A slow path sets busy and then loads the
 * generation; the membarrier makes every running thread pass a full
 * barrier, so either it saw the new generation or we see its busy.
 * Threads still making their state are counted in attaching.
 */
void jp_probe_quiesce(struct jp_instr *in)
{
	pthread_once(&exit_once, make_key);
	if (!membarrier_ok || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned n = 0; __atomic_load_n(&attaching, __ATOMIC_SEQ_CST) && n < 1000000; n++)
		sched_yield();
	for (struct jp_thread *t = __atomic_load_n(&in->threads, __ATOMIC_ACQUIRE); t; t = t->next)
		for (unsigned n = 0; t->busy && n < 1000000; n++)
			sched_yield();
}

/* The session is done with its threads: free those that exited.  The
 * others are their threads' own, and find the next session themselves. */
void jp_threads_release(struct jp_instr *in)
{
	struct jp_thread *t, *next;

	for (t = in->threads; t; t = next) {
		next = t->next;
		if (t->dead)
			jp_thread_free(t);
	}
	in->threads = NULL;
}

/*
 * In a child after fork(): only the forking thread is left.  It keeps its
 * open calls (they return in the child too) but counts and times afresh;
 * the other threads' states are copies of the parent's and go.  Its timed
 * calls keep their entries until jp_probe_fork_trace.
 */
void jp_probe_fork_child(struct jp_instr *in)
{
	struct jitperf__tls *T = &jitperf__tls;
	struct jp_thread *me = self && T->gen == in->gen && self->in == in ? self : NULL;
	struct jp_thread *t, *next;

	attaching = 0;                  /* threads that were attaching are gone */
	for (t = in->threads; t; t = next) {
		next = t->next;
		if (t != me)
			jp_thread_free(t);
	}
	in->threads = me;
	in->nthreads = 0;               /* trace serials start again in the child's file */
	if (!me)
		return;
	me->next = NULL;
	me->busy = 0;
	me->tid = (uint32_t)syscall(SYS_gettid);
	madvise((char *)me->count - COUNT_SKEW, COUNT_MAP, MADV_DONTNEED);
	for (unsigned c = 0; c < JP_FN_CHUNKS; c++)
		if (me->stats[c])
			memset(me->stats[c], 0, JP_FN_CHUNK * sizeof(struct jp_fstat));
	jp_trace_thread_reset(me);
	me->timed_calls = me->traced = 0;
	me->drop_full = me->drop_short = me->drop_ring = 0;
	T->lib_calls = T->inline_calls = T->framed_calls = 0;
	jp_sampling_reset(me);
	/* The inherited counters count the parent's thread: open ours. */
	jp_counters_thread_close(&me->ctrs);
	if (in->counters.n) {
		uint64_t cur[JPT_MAX_COUNTERS];

		jp_counters_thread_open(&in->counters, &me->ctrs);
		jp_counters_read(&in->counters, &me->ctrs, cur);
		for (uint32_t i = 0; i < me->ntimed; i++)
			memcpy(me->frames[i].ctr, cur, sizeof(cur));
	}
}

/*
 * In a child, once its own trace file is open (or failed to open): the
 * forking thread's open calls that were traced in the parent begin the
 * child's trace too, with their entry times, so that the calls the child
 * makes under them (every call of a forking -finstrument-functions
 * program: main is open) are traced and the trace stays well nested.
 */
void jp_probe_fork_trace(struct jp_instr *in)
{
	struct jp_thread *me = in->threads;

	if (!me)
		return;
	me->trace_on = in->trace != NULL;
	for (uint32_t i = 0; i < me->ntimed; i++) {
		struct jp_frame *f = &me->frames[i];
		int was = f->written;

		f->written = 0;         /* not yet in this file: the context starts below it */
		f->written = was && me->trace_on && !jp_trace_entry(me, f);
	}
}
