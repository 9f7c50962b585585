/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trace writer's part that runs inside the probes (trace_write.c has
 * the rest): appending an event word to the thread's current block.
 * Inline, so that a timed call's entry or exit writes its event without a
 * call: the common event is one 32-bit short event, stored and committed.
 * Anything else (a context of untraced callers, counters, a full block, a
 * function whose name is not yet in the file) goes to jp_trace_entry or
 * jp_trace_exit.  Internal.
 */
#ifndef JITPERF_INSTR_TRACE_PUT_H
#define JITPERF_INSTR_TRACE_PUT_H

#include <string.h>

#include "instr.h"

/* Stores at w, which is 4-byte aligned (events are 4 or 8 bytes). */
static inline __attribute__((always_inline, no_instrument_function))
char *jp_trace_put64(char *w, uint64_t v)
{
	memcpy(w, &v, 8);
	return w + 8;
}

/*
 * One entry or exit event at w (exit: 0 or 1): a short event when it
 * carries no counters and its id and delta fit, else an event word and
 * the counters.  First a TIME event when the delta does not fit even an
 * event word, and a REPAIRED one before a repaired exit.
 */
static inline __attribute__((always_inline, no_instrument_function))
char *jp_trace_put(struct jp_thread *t, char *w, unsigned exit, int repaired, uint32_t fn,
		   uint64_t tick, const uint64_t *ctr)
{
	uint64_t delta = tick - t->last_tick;   /* a clock going back wraps: > max too */

	if (__builtin_expect(delta > JPT_EV_DELTA_MAX, 0)) {
		w = jp_trace_put64(w, JPT_EV_X | (uint64_t)JPT_X_TIME << 2);
		w = jp_trace_put64(w, tick);
		delta = 0;
	}
	t->last_tick = tick;
	if (__builtin_expect(repaired, 0))
		w = jp_trace_put64(w, JPT_EV_X | (uint64_t)JPT_X_REPAIRED << 2);
	if (__builtin_expect(!ctr && fn <= JPT_SHORT_FN_MAX && delta <= JPT_SHORT_DELTA_MAX, 1)) {
		uint32_t u = JPT_SHORT_WORD(exit, fn, delta);

		memcpy(w, &u, 4);
		return w + 4;
	}
	w = jp_trace_put64(w, (exit ? JPT_EV_EXIT : JPT_EV_ENTER) | (uint64_t)fn << 2 |
				      delta << JPT_EV_DELTA_SHIFT);
	for (unsigned i = 0; ctr && i < t->nctr; i++)
		w = jp_trace_put64(w, ctr[i]);
	return w;
}

/* The block has room for bytes more (and a TIME and a REPAIRED event). */
static inline __attribute__((always_inline, no_instrument_function))
int jp_trace_fits(const struct jp_thread *t, size_t bytes)
{
	return (size_t)(t->end - t->pos) >= bytes + 24u;
}

/* The events up to w are the block's: one release store a reader after a
 * kill trusts. */
static inline __attribute__((always_inline, no_instrument_function))
void jp_trace_commit(struct jp_thread *t, char *w)
{
	t->pos = w;
	__atomic_store_n(&t->blk->used, (uint32_t)(t->pos - (char *)(t->blk + 1)),
			 __ATOMIC_RELEASE);
}

/*
 * The entry of frame f (see jp_trace_entry).  In place when it needs no
 * context: it is the thread's first open timed call at the bottom of the
 * stack, or the one below it is written and is its direct caller; and
 * when it has no counters, fits the block, and its function's name is in
 * the file (t->meta_fns, the thread's copy, refreshed by jp_trace_entry).
 */
static inline __attribute__((always_inline, no_instrument_function))
int jp_trace_entry_put(struct jp_thread *t, const struct jp_frame *f)
{
	if (__builtin_expect(!f->framed && !t->nctr && f->fn <= t->meta_fns && jp_trace_fits(t, 8) &&
			     (f == t->frames ? f->sdepth == 0 :
			      f[-1].written && f[-1].sdepth + 1 == f->sdepth), 1)) {
		jp_trace_commit(t, jp_trace_put(t, t->pos, 0, 0, f->fn, f->start, NULL));
		t->blk_calls++;
		t->traced++;
		return 0;
	}
	return jp_trace_entry(t, f);
}

/* The exit of f at now (see jp_trace_exit), in place when it fits. */
static inline __attribute__((always_inline, no_instrument_function))
int jp_trace_exit_put(struct jp_thread *t, const struct jp_frame *f, uint64_t now,
		      const uint64_t *ctr, int repaired)
{
	if (__builtin_expect(!t->nctr && jp_trace_fits(t, 8), 1)) {
		jp_trace_commit(t, jp_trace_put(t, t->pos, 1, repaired, f->fn, now, NULL));
		return 0;
	}
	return jp_trace_exit(t, f, now, ctr, repaired);
}

#endif /* JITPERF_INSTR_TRACE_PUT_H */
