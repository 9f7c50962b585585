/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The probes: jitperf_enter/jitperf_exit and what they do when a session
 * traces or counts calls.
 *
 * Everything per event is thread-local: the call stack, the statistics and
 * the current trace block.  A thread's state is made at its first event
 * (mmap, async-signal-safe) and linked into the session for good, so the
 * statistics of threads that have exited are still merged at close.  The
 * busy flag is both the re-entry guard (a signal handler interrupting a
 * probe sees it set and records nothing) and the handshake with
 * jitperf_close, which waits until no probe is inside the session before
 * freeing it.
 */
#include "config.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "instr.h"

#define NOINSTR __attribute__((no_instrument_function))
#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

JITPERF_API volatile int jitperf__probe_active;
JITPERF_API __thread struct jitperf__out jitperf__out __attribute__((tls_model("initial-exec")));
struct jp_instr *jp_cur;
unsigned jp_cur_gen = 1;

/* The thread's state and the generation it belongs to, in one TLS block
 * (one TLS offset to load per probe). */
static __thread struct {
	struct jp_thread *t;
	unsigned gen;
} tls __attribute__((tls_model("initial-exec")));

static int attaching;                   /* threads inside attach(): close waits for them */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int membarrier_ok;

static void *map_anon(size_t len) NOINSTR;
static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Pop the top frame at time now; cur holds the counters read at now (or NULL). */
static inline __attribute__((always_inline, no_instrument_function))
void finish(struct jp_thread *t, uint64_t now, const uint64_t *cur, int repaired)
{
	struct jp_frame *f = &t->frames[--t->depth];
	unsigned type = repaired ? JPT_EV_EXIT_REPAIRED : JPT_EV_EXIT;
	uint64_t dur;
	struct jp_fstat *st;

	if (t->stats_on) {
		dur = now > f->start ? now - f->start : 0;
		st = jp_stat(t, f->fn);
		if (__builtin_expect(st != NULL, 1)) {
			st->calls++;
			st->total += dur;
			st->self += dur > f->child ? dur - f->child : 0;
			if (st->calls == 1 || dur < st->min)
				st->min = dur;
			if (dur > st->max)
				st->max = dur;
			st->unbalanced += (unsigned)repaired;
			for (unsigned i = 0; cur && i < t->nctr; i++)
				st->ctr[i] += cur[i] - f->ctr[i];
		}
		if (t->depth)
			f[-1].child += dur;
	}
	if (f->traced)
		jp_trace_event(t, type, f->fn, now, cur);
}

/* Close the frames a thread left open when it ends. */
static void thread_gone(void *unused) NOINSTR;
static void thread_gone(void *unused)
{
	struct jp_thread *t = tls.t;
	int saved = errno;

	(void)unused;
	if (!t || tls.gen != __atomic_load_n(&jp_cur_gen, __ATOMIC_ACQUIRE) || t->busy)
		return;
	t->busy = 1;
	barrier();
	jitperf__out.depth = 0;         /* a sampled-out tree: nothing to record */
	if (__atomic_load_n(&jp_cur, __ATOMIC_RELAXED) == t->in) {
		struct jp_instr *in = t->in;
		uint64_t cur[JPT_MAX_COUNTERS], now;

		if (t->nctr)
			jp_counters_read(&in->counters, &t->ctrs, cur);
		now = jp_ticks();
		while (t->depth)
			finish(t, now, t->nctr ? cur : NULL, 1);
		jp_counters_thread_close(&t->ctrs);
		munmap(t->frames, JP_STACK_MAX * sizeof(struct jp_frame));
		t->frames = NULL;
		t->dead = 1;
	}
	tls.t = NULL;
	barrier();
	t->busy = 0;
	errno = saved;
}

static void make_key(void) NOINSTR;
static void make_key(void)
{
	if (pthread_key_create(&exit_key, thread_gone))
		exit_key = (pthread_key_t)-1;
	membarrier_ok = !syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
}

/* The clock of the fast paths: rdtsc inline, or 0 when it is not the clock. */
#if defined(__x86_64__)
# define FAST_CLOCK jp_clock_is_tsc
static inline __attribute__((always_inline, no_instrument_function))
uint64_t fast_ticks(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#else
# define FAST_CLOCK 0
# define fast_ticks() jp_ticks()
#endif

/*
 * t->fast selects the fast paths of probe_enter/probe_exit, which read the
 * clock before they look at the frames: trace only, rdtsc, and no frame
 * below that is known to be untraced (a spilled sampled-out tree, a full
 * trace), whose events would pay for a clock they do not use.  Clearing
 * it is always safe; exits of the slow paths set it again at depth 0.
 */
static inline __attribute__((always_inline, no_instrument_function))
void fast_reset(struct jp_thread *t)
{
	t->fast = t->trace_only && FAST_CLOCK && !t->trace_full;
}

static struct jp_thread *attach_to(struct jp_instr *in, unsigned gen) NOINSTR;

/*
 * A thread's first event in this session: make and link its state.  The
 * thread has no busy flag close() could see yet, so it announces itself in
 * attaching first; close() clears jp_cur and then waits for attaching to
 * drop to 0 (both sequentially consistent: one of them sees the other).
 */
static struct jp_thread *attach(void) NOINSTR;
static struct jp_thread *attach(void)
{
	struct jp_thread *t = NULL;
	struct jp_instr *in;
	sigset_t all, old;
	unsigned gen;

	/* No signal handler's probe may run inside: it would make a second
	 * state, or wait forever in the pthread_once this thread is in. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	__atomic_fetch_add(&attaching, 1, __ATOMIC_SEQ_CST);
	gen = __atomic_load_n(&jp_cur_gen, __ATOMIC_SEQ_CST);
	in = __atomic_load_n(&jp_cur, __ATOMIC_SEQ_CST);
	if (in && in->gen == gen && !(tls.t && tls.gen == gen))
		t = attach_to(in, gen);
	__atomic_fetch_sub(&attaching, 1, __ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return t;
}

static struct jp_thread *attach_to(struct jp_instr *in, unsigned gen)
{
	struct jp_thread *t;

	if (!(t = map_anon(sizeof(*t))))
		return NULL;
	if (!(t->frames = map_anon(JP_STACK_MAX * sizeof(struct jp_frame)))) {
		munmap(t, sizeof(*t));
		return NULL;
	}
	t->in = in;
	t->busy = 1;
	t->stats_on = (uint8_t)in->stats;
	t->trace_on = in->trace != NULL;
	t->nctr = (uint8_t)in->counters.n;
	t->sample_every = in->sample_every;
	t->event_size = 8 + 8 * t->nctr;
	t->trace_only = t->trace_on && !t->stats_on && !t->nctr;
	fast_reset(t);
	t->tid = (uint32_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
	t->ctrs.leader = -1;
	for (unsigned i = 0; i < JPT_MAX_COUNTERS; i++)
		t->ctrs.fd[i] = -1;
	t->serial = __atomic_fetch_add(&in->nthreads, 1, __ATOMIC_RELAXED);
	t->next = __atomic_load_n(&in->threads, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&in->threads, &t->next, t, 1,
					    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
	/* Closed meanwhile: t stays linked and is freed with the session. */
	if (__atomic_load_n(&jp_cur, __ATOMIC_SEQ_CST) != in) {
		t->busy = 0;
		return NULL;
	}
	if (in->counters.n)
		jp_counters_thread_open(&in->counters, &t->ctrs);
	pthread_once(&exit_once, make_key);
	if (exit_key != (pthread_key_t)-1)
		pthread_setspecific(exit_key, t);
	tls.t = t;
	tls.gen = gen;
	barrier();
	t->busy = 0;
	return t;
}

/* Enter the probe: the thread's state, busy set, or NULL (nothing to do). */
static inline __attribute__((always_inline, no_instrument_function))
struct jp_thread *probe_begin(void)
{
	struct jp_thread *t = tls.t;
	unsigned gen = tls.gen;

	if (__builtin_expect(gen != __atomic_load_n(&jp_cur_gen, __ATOMIC_RELAXED) || !t, 0)) {
		int saved = errno;

		t = attach();
		errno = saved;
		if (!t)
			return NULL;
		gen = tls.gen;
	}
	if (t->busy)
		return NULL;
	t->busy = 1;
	barrier();
	/* Closed since the test above?  (jitperf_close changes the generation,
	 * then waits for busy threads: see jp_probe_quiesce.) */
	if (__builtin_expect(gen != __atomic_load_n(&jp_cur_gen, __ATOMIC_RELAXED), 0)) {
		barrier();
		t->busy = 0;
		return NULL;
	}
	return t;
}

static inline __attribute__((always_inline, no_instrument_function))
void probe_end(struct jp_thread *t)
{
	barrier();
	t->busy = 0;
}

/*
 * Sampled-out trees (tracing only) live in jitperf__out, root included,
 * where the inline probes of jitperf.h and the top of jp_probe_enter/exit
 * push and pop their calls without the rest of the probe.  Any other event
 * of the thread first moves them onto the thread's (then empty) frames
 * ("spills"), so the rest of the probe sees one call stack and repairs it
 * as usual.
 */
/*
 * A tree starts in jitperf__out only while the thread has no frames, and
 * the next event of the thread that reaches the library past the fast
 * paths (all of them while it has no frames) spills it: so jitperf__out is
 * empty whenever t->depth != 0, which the fast paths rely on.
 */
static inline __attribute__((always_inline, no_instrument_function))
void out_start(jitperf_fn root)
{
	jitperf__out.gen = tls.gen;
	jitperf__out.fn[0] = root;
	barrier();
	jitperf__out.depth = 1;
}

static void out_spill(struct jp_thread *t) NOINSTR;
static void out_spill(struct jp_thread *t)
{
	unsigned d = jitperf__out.depth;

	jitperf__out.depth = 0;
	barrier();
	/* Only a tree this thread started in this session, with no frames below. */
	if (jitperf__out.gen != tls.gen || t->depth != 0)
		return;
	t->fast = 0;                    /* untraced frames now: see fast_reset */
	for (unsigned i = 0; i < d && i < JITPERF__OUT_MAX; i++) {
		if (t->depth >= JP_STACK_MAX) {
			t->overflow++;
			continue;
		}
		t->frames[t->depth].fn = jitperf__out.fn[i];
		t->frames[t->depth].traced = 0;
		t->depth++;
	}
}

/* Is fn a registered id?  Refreshes the thread's copy of the table size. */
static int known_fn(struct jp_thread *t, jitperf_fn fn) NOINSTR;
static int known_fn(struct jp_thread *t, jitperf_fn fn)
{
	t->nfns = __atomic_load_n(&t->in->nfns, __ATOMIC_ACQUIRE);
	return fn - 1 < t->nfns;
}

/* Trace this root call?  One in sample_every of each function, counted down. */
static inline __attribute__((always_inline, no_instrument_function))
int root_traced(struct jp_thread *t, jitperf_fn fn)
{
	struct jp_fstat *st = jp_stat(t, fn);

	if (__builtin_expect(!st, 0))
		return 0;
	if (st->skip) {
		st->skip--;
		return 0;
	}
	st->skip = t->sample_every - 1;
	return t->trace_on;
}

/* Entry, past the test for a sampled-out tree. */
static void jp_probe_enter_full(struct jp_thread *t, jitperf_fn fn) NOINSTR;
static void jp_probe_enter_full(struct jp_thread *t, jitperf_fn fn)
{
	struct jp_frame *f;
	uint32_t d = t->depth;

	if (__builtin_expect(fn - 1 >= t->nfns, 0) && !known_fn(t, fn))
		return;
	if (__builtin_expect(d >= JP_STACK_MAX, 0)) {
		t->overflow++;
		return;
	}
	f = &t->frames[d];
	f->fn = fn;
	/* Sampling is decided at the root: a whole call tree or nothing. */
	f->traced = d ? f[-1].traced : (uint32_t)root_traced(t, fn);
	t->depth = d + 1;
	if (!f->traced && !t->stats_on) {
		/* sampled out, nothing to count: no clock; a root's tree
		 * goes to jitperf__out */
		if (!d && t->trace_only) {
			t->depth = 0;
			out_start(fn);
		}
		return;
	}
	if (__builtin_expect(t->nctr != 0, 0))
		jp_counters_read(&t->in->counters, &t->ctrs, f->ctr);
	f->child = 0;
	f->start = jp_ticks();
	if (f->traced)
		f->traced = !jp_trace_event(t, JPT_EV_ENTER, fn, f->start, t->nctr ? f->ctr : NULL);
}

/* Entry with busy set, past the trace-only fast path of probe_enter; ends the probe. */
static void jp_probe_enter_busy(struct jp_thread *t, jitperf_fn fn) NOINSTR __attribute__((noinline));
static void jp_probe_enter_busy(struct jp_thread *t, jitperf_fn fn)
{
	uint32_t d;

	if (__builtin_expect(jitperf__out.depth != 0, 0))
		out_spill(t);
	d = t->depth;
	if (t->trace_only && fn - 1 < t->nfns && d - 1 < JP_STACK_MAX - 1) {
		struct jp_frame *f = &t->frames[d];

		f->fn = fn;
		t->depth = d + 1;
		/* Inside a sampled-out tree: only keep its shape, no clock. */
		if ((f->traced = f[-1].traced)) {
			f->start = jp_ticks();
			f->traced = !jp_trace_event(t, JPT_EV_ENTER, fn, f->start, NULL);
		}
	} else if (d && !t->frames[d - 1].traced && !t->stats_on && fn - 1 < t->nfns &&
		   d < JP_STACK_MAX) {
		/* sampled out with counters: no clock, no counters either */
		t->frames[d].fn = fn;
		t->frames[d].traced = 0;
		t->depth = d + 1;
	} else {
		jp_probe_enter_full(t, fn);
	}
	probe_end(t);
}

/* A root call of a trace-only session (no frames, fn known): sampling
 * decides whether its tree is traced or goes to jitperf__out.  Ends the probe. */
static void jp_probe_enter_root(struct jp_thread *t, jitperf_fn fn) NOINSTR __attribute__((noinline));
static void jp_probe_enter_root(struct jp_thread *t, jitperf_fn fn)
{
	struct jp_frame *f = &t->frames[0];

	if (root_traced(t, fn)) {
		f->fn = fn;
		f->traced = 1;
		f->child = 0;
		t->depth = 1;
		f->start = jp_ticks();
		f->traced = !jp_trace_event(t, JPT_EV_ENTER, fn, f->start, NULL);
	} else {
		out_start(fn);
	}
	probe_end(t);
}

/* A thread's first event in the session (or one racing with a close). */
static void jp_probe_enter_attach(jitperf_fn fn) NOINSTR __attribute__((noinline));
static void jp_probe_enter_attach(jitperf_fn fn)
{
	struct jp_thread *t = probe_begin();

	if (t)
		jp_probe_enter_busy(t, fn);
}

/* An event the fast paths could not write in place (block full, TIME
 * event due): f is the entry's frame, NULL for an exit.  Ends the probe. */
static void jp_probe_event_slow(struct jp_thread *t, struct jp_frame *f, unsigned type,
		       jitperf_fn fn, uint64_t now) NOINSTR __attribute__((noinline));
static void jp_probe_event_slow(struct jp_thread *t, struct jp_frame *f, unsigned type,
		       jitperf_fn fn, uint64_t now)
{
	int err = jp_trace_event(t, type, fn, now, NULL);

	if (f)
		f->traced = !err;
	probe_end(t);
}

/* Append a trace-only event if it fits the block with no TIME event before
 * it; 0 if it does not (nothing written). */
static inline __attribute__((always_inline, no_instrument_function))
int fast_event(struct jp_thread *t, uint64_t word, uint64_t now)
{
	uint64_t *w = (uint64_t *)t->pos;
	uint64_t delta = now - t->last_tick;

	if (__builtin_expect(t->end - t->pos < 8 + 16 || delta > JPT_EV_DELTA_MAX, 0))
		return 0;
	t->last_tick = now;
	*w++ = word | delta << JPT_EV_DELTA_SHIFT;
	t->pos = (char *)w;
	__atomic_store_n(&t->blk->used,
			 (uint32_t)(t->pos - (char *)(t->blk + 1)), __ATOMIC_RELEASE);
	return 1;
}

/*
 * The probes past the sampled-out-tree test.  The common case, a nested
 * call of a trace-only session, is written here in a leaf function (no
 * registers to save); everything else is a tail call.
 */
static inline __attribute__((always_inline, no_instrument_function))
void probe_enter(jitperf_fn fn)
{
	struct jp_thread *t = tls.t;
	unsigned gen = tls.gen;
	struct jp_frame *f;
	uint32_t d;
	uint64_t now;

	if (__builtin_expect(gen != __atomic_load_n(&jp_cur_gen, __ATOMIC_RELAXED) || !t, 0)) {
		jp_probe_enter_attach(fn);
		return;
	}
	if (t->busy)
		return;
	t->busy = 1;
	barrier();
	if (__builtin_expect(gen != __atomic_load_n(&jp_cur_gen, __ATOMIC_RELAXED), 0)) {
		barrier();                      /* closed meanwhile: see probe_begin */
		t->busy = 0;
		return;
	}
	d = t->depth;
	/* (d != 0 here implies jitperf__out is empty: see out_start) */
	if (__builtin_expect(!t->fast || fn - 1 >= t->nfns || d - 1 >= JP_STACK_MAX - 1, 0)) {
		if (d == 0 && t->fast && fn - 1 < t->nfns && !jitperf__out.depth) {
			struct jp_fstat *c = t->stats[fn / JP_FN_CHUNK];

			/* a root sampling leaves out: its tree goes to jitperf__out */
			if (c && c[fn % JP_FN_CHUNK].skip) {
				c[fn % JP_FN_CHUNK].skip--;
				out_start(fn);
				probe_end(t);
			} else {
				jp_probe_enter_root(t, fn);
			}
		} else
			jp_probe_enter_busy(t, fn);
		return;
	}
	now = fast_ticks();
	f = &t->frames[d];
	f->fn = fn;
	t->depth = d + 1;
	if ((f->traced = f[-1].traced)) {
		f->start = now;
		if (__builtin_expect(!fast_event(t, JPT_EV_ENTER | (uint64_t)fn << 2, now), 0)) {
			jp_probe_event_slow(t, f, JPT_EV_ENTER, fn, now);
			return;
		}
	}
	probe_end(t);
}

void jp_probe_enter(jitperf_fn fn)
{
	if (!jitperf__out_enter(jp_cur_gen, fn))
		probe_enter(fn);
}

/*
 * Exits that are not the plain return of the top call, and calls with
 * counters.  unwind: the matched frame was skipped too (longjmp over a
 * thunk), so it ends as repaired like the frames above it.
 */
static void jp_probe_exit_general(struct jp_thread *t, jitperf_fn fn, int unwind) NOINSTR;
static void jp_probe_exit_general(struct jp_thread *t, jitperf_fn fn, int unwind)
{
	uint64_t now, cur[JPT_MAX_COUNTERS];
	uint32_t i;
	/* Sampled out and no statistics: the frame only keeps the tree's shape. */
	int need = t->stats_on || (t->depth && t->frames[t->depth - 1].traced);

	now = need ? jp_ticks() : 0;
	if (fn - 1 >= t->nfns && !known_fn(t, fn))
		return;
	if (t->overflow > 0) {
		t->overflow--;
		return;
	}
	/* The matching frame; above it, frames whose exit was skipped (longjmp, exception). */
	for (i = t->depth; i > 0 && t->frames[i - 1].fn != fn; i--)
		;
	if (i == 0) {
		struct jp_fstat *st = t->stats_on ? jp_stat(t, fn) : NULL;

		if (st)
			st->unbalanced++;       /* exit without entry */
		return;
	}
	if (need && t->nctr)
		jp_counters_read(&t->in->counters, &t->ctrs, cur);
	while (t->depth > i)
		finish(t, now, t->nctr ? cur : NULL, 1);
	finish(t, now, t->nctr ? cur : NULL, unwind);
}

/* Exit with busy set, past the trace-only fast path of probe_exit; ends the probe. */
static void jp_probe_exit_busy(struct jp_thread *t, jitperf_fn fn) NOINSTR __attribute__((noinline));
static void jp_probe_exit_busy(struct jp_thread *t, jitperf_fn fn)
{
	uint32_t d;

	if (__builtin_expect(jitperf__out.depth != 0, 0))
		out_spill(t);
	d = t->depth;
	if (__builtin_expect(d && t->frames[d - 1].fn == fn && !t->overflow && !t->nctr, 1)) {
		if (t->trace_only) {
			t->depth = d - 1;
			if (t->frames[d - 1].traced)
				jp_trace_event(t, JPT_EV_EXIT, fn, jp_ticks(), NULL);
		} else if (t->stats_on || t->frames[d - 1].traced)
			finish(t, jp_ticks(), NULL, 0);
		else
			t->depth = d - 1;       /* sampled out: no clock */
	} else {
		jp_probe_exit_general(t, fn, 0);
	}
	if (__builtin_expect(!t->depth && !t->fast && t->trace_only, 0))
		fast_reset(t);
	probe_end(t);
}

static void jp_probe_exit_attach(jitperf_fn fn) NOINSTR __attribute__((noinline));
static void jp_probe_exit_attach(jitperf_fn fn)
{
	struct jp_thread *t = probe_begin();

	if (t)
		jp_probe_exit_busy(t, fn);
}

static inline __attribute__((always_inline, no_instrument_function))
void probe_exit(jitperf_fn fn)
{
	struct jp_thread *t = tls.t;
	unsigned gen = tls.gen;
	uint32_t d;
	uint64_t now;

	if (__builtin_expect(gen != __atomic_load_n(&jp_cur_gen, __ATOMIC_RELAXED) || !t, 0)) {
		jp_probe_exit_attach(fn);
		return;
	}
	if (t->busy)
		return;
	t->busy = 1;
	barrier();
	if (__builtin_expect(gen != __atomic_load_n(&jp_cur_gen, __ATOMIC_RELAXED), 0)) {
		barrier();
		t->busy = 0;
		return;
	}
	if (__builtin_expect(!t->fast, 0)) {
		jp_probe_exit_busy(t, fn);
		return;
	}
	now = fast_ticks();
	d = t->depth;
	if (__builtin_expect(!d || t->frames[d - 1].fn != fn || t->overflow, 0)) {
		jp_probe_exit_busy(t, fn);
		return;
	}
	t->depth = d - 1;
	if (t->frames[d - 1].traced) {
		if (__builtin_expect(!fast_event(t, JPT_EV_EXIT | (uint64_t)fn << 2, now), 0)) {
			jp_probe_event_slow(t, NULL, JPT_EV_EXIT, fn, now);
			return;
		}
	}
	probe_end(t);
}

void jp_probe_exit(jitperf_fn fn)
{
	if (!jitperf__out_exit(jp_cur_gen, fn))
		probe_exit(fn);
}

void jp_probe_unwind(jitperf_fn fn)
{
	struct jp_thread *t = probe_begin();

	if (!t)
		return;
	if (jitperf__out.depth)
		out_spill(t);
	jp_probe_exit_general(t, fn, 1);
	if (!t->depth)
		fast_reset(t);
	probe_end(t);
}

/* The slow paths of jitperf.h's inline probes (and libjitperf-cyg's): the
 * caller has tested jitperf__probe_active and jitperf__out already. */
void jitperf__enter_slow(jitperf_fn fn) NOINSTR;
void jitperf__enter_slow(jitperf_fn fn)
{
	probe_enter(fn);
}

void jitperf__exit_slow(jitperf_fn fn) NOINSTR;
void jitperf__exit_slow(jitperf_fn fn)
{
	probe_exit(fn);
}

void jitperf_enter(jitperf_fn fn)
{
	unsigned a = (unsigned)jitperf__probe_active;

	if (__builtin_expect(a != 0, 0) && !jitperf__out_enter(a, fn))
		probe_enter(fn);
}

void jitperf_exit(jitperf_fn fn)
{
	unsigned a = (unsigned)jitperf__probe_active;

	if (__builtin_expect(a != 0, 0) && !jitperf__out_exit(a, fn))
		probe_exit(fn);
}

/*
 * jp_cur has been cleared: wait until no probe still works on in.  A probe
 * sets busy and then loads jp_cur_gen; the membarrier makes every running
 * thread pass a full barrier, so either it saw the new generation or we
 * see its busy.  Threads still making their state are counted in attaching.
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

void jp_thread_free(struct jp_thread *t)
{
	jp_counters_thread_close(&t->ctrs);
	for (unsigned c = 0; c < JP_FN_CHUNKS; c++)
		if (t->stats[c])
			munmap(t->stats[c], JP_FN_CHUNK * sizeof(struct jp_fstat));
	if (t->frames)
		munmap(t->frames, JP_STACK_MAX * sizeof(struct jp_frame));
	munmap(t, sizeof(*t));
}

/*
 * In a child after fork(): only the forking thread is left.  It keeps its
 * open frames (they return in the child too) but starts counting and
 * tracing afresh; the others' states are copies of the parent's and go.
 * Its frames keep their traced flags until jp_probe_fork_trace.
 */
void jp_probe_fork_child(struct jp_instr *in)
{
	struct jp_thread *me = tls.gen == jp_cur_gen && tls.t && tls.t->in == in ? tls.t : NULL;
	struct jp_thread *t, *next;

	attaching = 0;                  /* threads that were attaching are gone */
	for (t = in->threads; t; t = next) {
		next = t->next;
		if (t != me)
			jp_thread_free(t);
	}
	in->threads = me;
	in->nthreads = me ? 1 : 0;
	if (!me)
		return;
	me->next = NULL;
	me->serial = 0;
	me->tid = (uint32_t)syscall(SYS_gettid);
	for (unsigned c = 0; c < JP_FN_CHUNKS; c++)
		if (me->stats[c])
			memset(me->stats[c], 0, JP_FN_CHUNK * sizeof(struct jp_fstat));
	me->blk = NULL;
	me->pos = me->end = NULL;
	me->blkseq = 0;
	me->trace_full = 0;
	fast_reset(me);
	me->last_tick = 0;
	/* The inherited counters count the parent's thread: open ours. */
	jp_counters_thread_close(&me->ctrs);
	if (in->counters.n) {
		uint64_t cur[JPT_MAX_COUNTERS];

		jp_counters_thread_open(&in->counters, &me->ctrs);
		jp_counters_read(&in->counters, &me->ctrs, cur);
		for (uint32_t i = 0; i < me->depth; i++)
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
	for (uint32_t i = 0; i < me->depth; i++) {
		struct jp_frame *f = &me->frames[i];

		if (f->traced && in->trace)
			f->traced = !jp_trace_event(me, JPT_EV_ENTER, f->fn, f->start,
						    me->nctr ? f->ctr : NULL);
		else
			f->traced = 0;
	}
}
