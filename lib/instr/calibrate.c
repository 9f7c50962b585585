/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calibration: what the probes themselves cost, measured on the thread
 * that opens the session, right after it is activated (as Tracy does).
 * A timed call's duration is net of these costs (timed.c):
 *
 *   JPT_COST_SELF    the part of a timed probe between its two clock reads
 *                    (net durations start after the entry's trace event:
 *                    the trace's part is that plus its writing);
 *   JPT_COST_LIB     a counted call through jitperf_enter/jitperf_exit,
 *                    call instructions included;
 *   JPT_COST_INLINE  a counted call through the inline code of jitperf.h;
 *   JPT_COST_FRAMED  a counted call of generated code that counts inline
 *                    and keeps a flag in its frame (jitperf__enter_framed);
 *   JPT_COST_TIMED   a whole timed call of an empty function, as its
 *                    caller sees it.
 *
 * The loops run the real probes on id 0, which no function has: the
 * counting path counts it in a counter nobody reads, the slow path times
 * every call of it while calibrating, with statistics (in a slot nobody
 * reads) and trace events (into a scratch block, not the file), so that
 * it costs what a timed call costs in this session.  Everything is reset
 * afterwards.  Each cost is the least of its rounds (other work on the
 * machine only adds), per call, minus the same loop without probes.  The
 * rounds go on for 3 ms when the costs are subtracted (statistics, a
 * trace's minimum duration): a core that was idle runs its first
 * millisecond or two of work slower (its clock rises with the load), and
 * costs measured then would be subtracted, too large, from every timed
 * call of the run.  A trace alone only records them: eight rounds.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "instr.h"

#define MIN_ROUNDS  8
#define MAX_ROUNDS  256
#define CAL_NS      3000000   /* rounds go on for this long (see above) */
#define NCOUNT  2000        /* counted pairs per round */
#define NTIMED  300         /* timed pairs per round */

#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* Called through pointers, as generated code calls them. */
static void (*volatile enter_p)(jitperf_fn) = jitperf_enter;
static void (*volatile exit_p)(jitperf_fn) = jitperf_exit;

static uint64_t loop_empty(int n) JP_NOINSTR __attribute__((noinline));
static uint64_t loop_empty(int n)
{
	uint64_t t0 = jp_ticks();

	for (int i = 0; i < n; i++)
		barrier();
	return jp_ticks() - t0;
}

/* Each loop starts a page of its own: measured next to the probes, they ran
 * faster than the same loops in a caller's code. */
#define LOOP JP_NOINSTR __attribute__((noinline, aligned(4096)))

static uint64_t loop_lib(int n) LOOP;
static uint64_t loop_lib(int n)
{
	void (*en)(jitperf_fn) = enter_p, (*ex)(jitperf_fn) = exit_p;
	uint64_t t0 = jp_ticks();

	for (int i = 0; i < n; i++) {
		en(0);
		ex(0);
		barrier();
	}
	return jp_ticks() - t0;
}

/* What jitperf.h's jitperf_enter_inline_/jitperf_exit_inline_ do. */
static uint64_t loop_inline(int n) LOOP;
static uint64_t loop_inline(int n)
{
	uint64_t t0 = jp_ticks();

	for (int i = 0; i < n; i++) {
		unsigned a = (unsigned)jitperf__probe_active;

		if (__builtin_expect(a != 0, 0)) {
			if (jitperf__enter_fast(a, 0))
				jitperf__inc(&jitperf__tls.inline_calls);
			else
				jitperf__enter_slow(0);
		}
		barrier();
		a = (unsigned)jitperf__probe_active;
		if (__builtin_expect(a != 0, 0) && !jitperf__exit_fast(a, 0))
			jitperf__exit_slow(0);
		barrier();
	}
	return jp_ticks() - t0;
}

/* Timed calls of id 0; raw gets what each measured of itself.  They run
 * inside a counted call of id 0, as the timed calls whose price is
 * subtracted run inside their caller (which gets their time as its
 * callees'). */
static uint64_t loop_timed(struct jp_thread *t, struct jitperf__count *c0, int n, uint64_t *raw,
			   uint64_t *write) LOOP;
static uint64_t loop_timed(struct jp_thread *t, struct jitperf__count *c0, int n, uint64_t *raw,
			   uint64_t *write)
{
	void (*en)(jitperf_fn) = enter_p, (*ex)(jitperf_fn) = exit_p;
	uint64_t t0, t1;

	c0->next = UINT64_MAX;          /* the caller: counted */
	en(0);
	c0->next = c0->calls + 1;       /* the calls inside: each timed */
	t0 = jp_ticks();
	for (int k = 0; k < n; k++) {
		en(0);
		ex(0);
		raw[k] = t->cal_raw;
		write[k] = t->cal_write;
	}
	t1 = jp_ticks();
	c0->next = UINT64_MAX;
	ex(0);
	c0->next = c0->calls + 1;
	return t1 - t0;
}

/* What generated code using jitperf__enter_framed does (the example JIT):
 * the count inline, a flag in the frame says whether to call at exit. */
static uint64_t loop_framed(int n) LOOP;
static uint64_t loop_framed(int n)
{
	uint64_t t0 = jp_ticks();

	for (int i = 0; i < n; i++) {
		volatile char flag = 0;
		unsigned a = (unsigned)jitperf__probe_active;

		if (__builtin_expect(a != 0, 0)) {
			struct jitperf__tls *T = &jitperf__tls;
			struct jitperf__count *c;

			if (T->gen == a && (c = &T->count[0], c->calls + 1 < c->next)) {
				jitperf__inc(&c->calls);
				jitperf__inc(&T->framed_calls);
			} else {
				flag = 1;
				jitperf__enter_framed(0);
			}
		}
		barrier();
		if (flag)
			jitperf__exit_slow(0);
	}
	return jp_ticks() - t0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void least(uint64_t *min, uint64_t v)
{
	if (v < *min)
		*min = v;
}

static double per_call(uint64_t with, uint64_t without, int n)
{
	return with > without ? (double)(with - without) / n : 0;
}

void jp_calibrate(struct jp_instr *in)
{
	struct jitperf__count *c0;
	struct jp_thread *t = jp_attach_self();
	void *scratch = NULL;
	/* least times over the rounds, each loop apart */
	uint64_t empty = UINT64_MAX, lib = UINT64_MAX, inl = UINT64_MAX, frm = UINT64_MAX;
	uint64_t empty_t = UINT64_MAX, timed = UINT64_MAX, self = UINT64_MAX, write = UINT64_MAX;
	uint64_t raw[NTIMED], wr[NTIMED], t0, cal_ns;

	memset(&in->cost, 0, sizeof(in->cost));
	if (!t)
		return;                 /* no memory for a thread: nothing subtracted */
	c0 = &jitperf__tls.count[0];
	t->calibrating = 1;
	if (t->trace_on && !(scratch = jp_trace_scratch(t)))
		t->trace_on = 0;
	/* only statistics and a trace's minimum duration subtract the prices;
	 * a trace alone records them for its readers, roughly */
	cal_ns = in->stats || in->trace_min_ns ? CAL_NS : 0;
	t0 = jp_monotonic_ns();
	for (int r = 0; r < MAX_ROUNDS && (r < MIN_ROUNDS || jp_monotonic_ns() - t0 < cal_ns); r++) {
		/* counted: id 0 never reaches its next timed call */
		c0->next = UINT64_MAX;
		least(&empty, loop_empty(NCOUNT));
		least(&lib, loop_lib(NCOUNT));
		least(&inl, loop_inline(NCOUNT));
		least(&frm, loop_framed(NCOUNT));
		/* timed: every call of id 0 */
		c0->next = c0->calls + 1;
		least(&empty_t, loop_empty(NTIMED));
		if (scratch)
			jp_trace_scratch_rewind(t, scratch);
		t->cal_write = 0;
		least(&timed, loop_timed(t, c0, NTIMED, raw, wr));
		qsort(raw, NTIMED, sizeof(raw[0]), by_value);
		least(&self, raw[NTIMED / 2]);
		qsort(wr, NTIMED, sizeof(wr[0]), by_value);
		least(&write, wr[NTIMED / 2]);
	}
	in->cost.c[JPT_COST_LIB] = per_call(lib, empty, NCOUNT);
	in->cost.c[JPT_COST_INLINE] = per_call(inl, empty, NCOUNT);
	in->cost.c[JPT_COST_FRAMED] = per_call(frm, empty, NCOUNT);
	in->cost.c[JPT_COST_TIMED] = per_call(timed, empty_t, NTIMED);
	/* the timed call's own part is inside its whole cost; the trace's
	 * clock reads hold the writing of the entry's event too */
	in->cost.net_self = (double)self < in->cost.c[JPT_COST_TIMED] ?
		(double)self : in->cost.c[JPT_COST_TIMED];
	in->cost.c[JPT_COST_SELF] = in->cost.net_self + (write != UINT64_MAX ? (double)write : 0);
	/* leave no trace of id 0 */
	memset(c0, 0, sizeof(*c0));
	if (t->stats[0])
		memset(&t->stats[0][0], 0, sizeof(t->stats[0][0]));
	jitperf__tls.lib_calls = jitperf__tls.inline_calls = jitperf__tls.framed_calls = 0;
	t->timed_calls = t->traced = 0;
	t->drop_full = t->drop_short = t->drop_ring = 0;
	if (scratch) {
		jp_trace_thread_reset(t);
		munmap(scratch, JPT_BLOCK_SIZE);
	}
	t->trace_on = in->trace != NULL;
	t->calibrating = 0;
	jp_sampling_reset(t);
}
