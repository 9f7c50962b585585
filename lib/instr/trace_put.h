/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trace writer's part that runs inside the probes (trace_write.c has
 * the rest): appending an event word to the thread's current block.
 * Inline, so that a timed call's entry or exit writes its event without a
 * call: the common event is one 8-byte word, stored and committed.
 * Anything else (a context of untraced callers, counters, a full block, a
 * function whose name is not yet in the file) goes to jp_trace_entry or
 * jp_trace_exit.  Internal.
 */
#ifndef JITPERF_INSTR_TRACE_PUT_H
#define JITPERF_INSTR_TRACE_PUT_H

#include "instr.h"

/* One event word (and a TIME event first when the delta does not fit). */
static inline __attribute__((always_inline, no_instrument_function))
uint64_t *jp_trace_put(struct jp_thread *t, uint64_t *w, unsigned type, uint32_t fn,
		       uint64_t tick, const uint64_t *ctr)
{
	uint64_t delta = tick - t->last_tick;   /* a clock going back wraps: > max too */

	if (__builtin_expect(delta > JPT_EV_DELTA_MAX, 0)) {
		*w++ = JPT_EV_X;                /* JPT_X_TIME */
		*w++ = tick;
		delta = 0;
	}
	t->last_tick = tick;
	*w++ = type | (uint64_t)fn << 2 | delta << JPT_EV_DELTA_SHIFT;
	for (unsigned i = 0; ctr && i < t->nctr; i++)
		*w++ = ctr[i];
	return w;
}

/* The block has room for bytes more (and a TIME event). */
static inline __attribute__((always_inline, no_instrument_function))
int jp_trace_fits(const struct jp_thread *t, size_t bytes)
{
	return (size_t)(t->end - t->pos) >= bytes + 16u;
}

/* The events up to w are the block's: one release store a reader after a
 * kill trusts. */
static inline __attribute__((always_inline, no_instrument_function))
void jp_trace_commit(struct jp_thread *t, uint64_t *w)
{
	t->pos = (char *)w;
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
		jp_trace_commit(t, jp_trace_put(t, (uint64_t *)t->pos, JPT_EV_ENTER, f->fn,
						 f->start, NULL));
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
		jp_trace_commit(t, jp_trace_put(t, (uint64_t *)t->pos,
						repaired ? JPT_EV_EXIT_REPAIRED : JPT_EV_EXIT,
						f->fn, now, NULL));
		return 0;
	}
	return jp_trace_exit(t, f, now, ctr, repaired);
}

#endif /* JITPERF_INSTR_TRACE_PUT_H */
