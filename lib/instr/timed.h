/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The entry and exit of a timed call (what sampling and estimates mean:
 * timed.c).  Inline in the probes' slow paths (probe.c), which are their
 * only callers: with JITPERF_SAMPLE=1 every call comes here, and a call
 * per step (slow path, timed call, trace writer) cost more in saved
 * registers and reloaded state than the work itself.  The rare parts
 * (adaptive sampling, traces with a minimum duration) stay in timed.c.
 * The caller holds busy.  Internal.
 */
#ifndef JITPERF_INSTR_TIMED_H
#define JITPERF_INSTR_TIMED_H

#include "instr.h"
#include "trace_put.h"

/* timed.c */
JP_HIDDEN uint64_t jp_timed_adapt(struct jp_thread *t, struct jp_fstat *st, uint64_t now) JP_NOINSTR;
JP_HIDDEN void jp_timed_write_pending(struct jp_thread *t, uint32_t k, uint64_t now,
				      const uint64_t *ctr, int repaired) JP_NOINSTR;

/* xorshift64*: the gaps between timed calls. */
static inline __attribute__((always_inline, no_instrument_function))
uint64_t jp_rnd(struct jp_thread *t)
{
	uint64_t x = t->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	return x * UINT64_C(2685821657736338717);
}

/* Calls until the next timed one, for a mean of n: uniform in [1, 2n-1]
 * (the high half of a product, not a division: one per timed call). */
static inline __attribute__((always_inline, no_instrument_function))
uint64_t jp_draw(struct jp_thread *t, uint64_t n)
{
	if (n <= 1)
		return 1;
#if defined(__SIZEOF_INT128__)
	return 1 + (uint64_t)((__extension__(unsigned __int128)jp_rnd(t) * (2 * n - 1)) >> 64);
#else
	return 1 + jp_rnd(t) % (2 * n - 1);
#endif
}

/*
 * Call n of fn, counted in c, whose stack entry is sd, starts as a timed
 * call; framed: JITPERF__FRAMED when jitperf__enter_framed entered it.
 * 1, or 0 when it cannot be timed (the caller makes it a counted call).
 * The clock is read last, after the bookkeeping: a timed call is rare,
 * so its bookkeeping runs with cold caches and mispredicted branches, and
 * inside the interval it would cost the call several times what the same
 * code costs calibration, which times every call of one function.
 */
static inline __attribute__((always_inline, no_instrument_function))
int jp_timed_enter(struct jp_thread *t, jitperf_fn fn, uint32_t sd, uint64_t n,
		   struct jitperf__count *c, uint32_t framed)
{
	struct jitperf__tls *T = &jitperf__tls;
	struct jp_fstat *st = NULL;
	struct jp_frame *f;

	/* The function's statistics keep the number of its last timed call
	 * (the next one's weight) and adaptive sampling's state: a trace
	 * with fixed sampling needs neither.  (Id 0 is calibration's: it
	 * costs what any call costs.) */
	if (__builtin_expect(t->ntimed >= JP_STACK_MAX, 0) ||
	    ((t->net_on || t->mode == JP_SAMPLE_ADAPTIVE) && !(st = jp_stat(t, fn))))
		return 0;
	f = &t->frames[t->ntimed];
	f->fn = fn;
	f->sdepth = sd;
	/* entered by code that counts calls without the stack: its callers
	 * may be missing from the stack, unless every call is timed (then
	 * every call came through here) */
	f->framed = framed && (t->mode != JP_SAMPLE_FIXED || t->every > 1);
	f->timed0 = t->timed_calls++;
	/* what its net duration needs (statistics, a trace's minimum) */
	if (t->net_on) {
		f->w = (double)(int64_t)(n - st->last_n);
		f->lib0 = T->lib_calls;
		f->inl0 = T->inline_calls;
		f->frm0 = T->framed_calls;
	}
	if (st)
		st->last_n = n;
	if (__builtin_expect(t->mode == JP_SAMPLE_ADAPTIVE, 0))
		c->next = n + jp_draw(t, jp_timed_adapt(t, st, jp_ticks()));
	else
		c->next = n + jp_draw(t, t->every);
	if (__builtin_expect(t->calibrating, 0))
		c->next = n + 1;        /* every call */
	t->ntimed++;
	if (__builtin_expect(t->nctr != 0, 0))
		jp_counters_read(&t->in->counters, &t->ctrs, f->ctr);
	/* the counters' interval inside the clock's */
	f->start = jp_ticks();
	f->written = 0;
	if (t->trace_on && !t->min_ticks) {
		if (!t->trace_full && !jp_trace_entry_put(t, f))
			f->written = 1;
		else
			t->drop_full++;
		/* The net duration starts after the event is written: a
		 * sampled call writes it cold, and any call may fault in the
		 * next page of the file.  In the file the entry keeps its
		 * time; the trace's calibration adds the writing to the
		 * timed call's own part (jp_calibrate). */
		if (t->net_on) {
			uint64_t start = jp_ticks();

			if (__builtin_expect(t->calibrating, 0))
				t->cal_write = start - f->start;
			f->start = start;
		}
	}
	return 1;
}

/* The net duration of f ending at now: minus the probes inside it; below
 * 0 when the clock's step is longer than the call.  (The counts are
 * differences of a few calls: signed conversions are one instruction,
 * unsigned ones a branch.) */
static inline __attribute__((always_inline, no_instrument_function))
double jp_net_ticks(struct jp_thread *t, const struct jp_frame *f, uint64_t now, double *inside)
{
	const struct jitperf__tls *T = &jitperf__tls;
	const double *c = t->in->cost.c;
	double d = (double)(int64_t)(now - f->start);

	/* the probes of the calls made inside: their price as calibrated */
	*inside = (double)(int64_t)(T->lib_calls - f->lib0) * c[JPT_COST_LIB] +
		  (double)(int64_t)(T->inline_calls - f->inl0) * c[JPT_COST_INLINE] +
		  (double)(int64_t)(T->framed_calls - f->frm0) * c[JPT_COST_FRAMED] +
		  (double)(int64_t)(t->timed_calls - f->timed0 - 1) * c[JPT_COST_TIMED];
	return d - t->in->cost.net_self - *inside;
}

/*
 * The timed call whose stack entry is sd returns at now (repaired: its
 * exit was skipped, or it ends with its thread).  Timed calls above it are
 * gone; a call without a frame here (it could not be timed) is ignored.
 */
static inline __attribute__((always_inline, no_instrument_function))
void jp_timed_exit(struct jp_thread *t, uint32_t sd, int repaired, uint64_t now)
{
	const struct jitperf__tls *T = &jitperf__tls;
	uint64_t cur[JPT_MAX_COUNTERS];
	struct jp_frame *f;
	struct jp_fstat *st;
	uint32_t k = t->ntimed;
	double net, snet, inside = 0;

	/* its frame: frames above it belong to calls that are gone */
	while (k > 0 && t->frames[k - 1].sdepth > sd)
		k--;
	if (__builtin_expect(k == 0 || t->frames[k - 1].sdepth != sd, 0)) {
		t->ntimed = k;
		return;
	}
	f = &t->frames[--k];
	if (__builtin_expect(t->nctr != 0, 0))
		jp_counters_read(&t->in->counters, &t->ctrs, cur);
	if (__builtin_expect(t->calibrating, 0))
		t->cal_raw = now - f->start;
	snet = t->net_on ? jp_net_ticks(t, f, now, &inside) : 0;
	net = snet > 0 ? snet : 0;
	if (t->stats_on && (st = jp_stat(t, f->fn))) {
		int64_t whole = (int64_t)(net + 0.5);

		if (!st->timed || (uint64_t)whole < st->min)
			st->min = (uint64_t)whole;
		if ((uint64_t)whole > st->max)
			st->max = (uint64_t)whole;
		st->timed++;
		/* A call that stands for itself is added as it is; one that
		 * stands for others goes into a window, whose interquartile
		 * mean stands for them all: an interrupt or a fault inside one call must
		 * not be multiplied by the thousands of calls it stands for.
		 * Totals keep durations below 0, so that a mean of calls
		 * shorter than the clock's step is not pushed up by them. */
		/* its caller: not known when the call was entered by code
		 * that keeps no stack (id 0 is calibration's, which prices
		 * this too) */
		uint32_t caller = sd > 0 && !f->framed ? JP_ID(T->stack[sd - 1]) : JP_NO_CALLER;
		struct jp_fstat *cs;

		if (caller > t->nfns)
			caller = JP_NO_CALLER;
		if (f->w <= 1) {
			st->w += f->w;
			st->total += snet * f->w;
			/* the caller's share of time spent in its callees */
			if (caller != JP_NO_CALLER && (cs = jp_stat(t, caller)))
				cs->child += snet * f->w;
		} else {
			/* the window credits the callers when it closes */
			st->win[st->nwin] = (float)snet;
			st->win_wt[st->nwin] = (float)f->w;
			st->win_caller[st->nwin++] = caller;
			st->win_w += f->w;
			if (st->nwin == JP_WINDOW)
				jp_stats_window_close(t, st);
		}
		st->inside += inside * f->w;
		st->unbalanced += (unsigned)repaired;
		st->framed += f->framed;
		for (unsigned i = 0; i < t->nctr; i++)
			st->ctr[i] += (double)(int64_t)(cur[i] - f->ctr[i]) * f->w;
	}
	if (f->written) {
		if (jp_trace_exit_put(t, f, now, t->nctr ? cur : NULL, repaired)) {
			t->traced--;
			t->drop_full++;
		}
	} else if (t->min_ticks && t->trace_on) {
		if (net >= (double)t->min_ticks)
			jp_timed_write_pending(t, k, now, t->nctr ? cur : NULL, repaired);
		else
			t->drop_short++;
	}
	t->ntimed = k;
}

#endif /* JITPERF_INSTR_TIMED_H */
