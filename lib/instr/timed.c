/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timed calls: the calls sampling picks, at any depth.  Their entry and
 * exit read the clock (and the counters), add the call to the function's
 * statistics and write it to the trace.
 *
 * Sampling.  Each function of each thread has the number of its next call
 * to time (struct jitperf__count.next).  The gap to the next one is drawn
 * uniformly from 1 to 2N-1 around the mean N, so that calls that repeat
 * in a pattern (the leaves of a recursion) are not picked in step with it.
 * N is fixed (JITPERF_SAMPLE=N) or adaptive: each function aims at one
 * timed call per period, so a function called less often than that is
 * timed every call and a frequent one rarely; every epoch the thread
 * scales the period so that its timed calls stay within the budget
 * (timed_per_sec).
 *
 * Estimates.  A timed call stands for the calls of its function since the
 * function's previous timed call (its weight).  Totals are sums of
 * duration x weight, scaled to the exact count at the end (stats.c).  A
 * timed call's duration is net of the probes: its own clock reads and
 * the probes of the calls it made, counted exactly and priced by the
 * calibration (calibrate.c).  Self time is total minus the estimated time
 * of the calls made directly from the function (its caller is the entry
 * below it on the thread's stack).
 */
#include "config.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "instr.h"

#define EPOCH_PER_SEC 20                 /* the period is adjusted every 50 ms */

/* xorshift64*: the gaps between timed calls. */
static inline __attribute__((always_inline, no_instrument_function))
uint64_t rnd(struct jp_thread *t)
{
	uint64_t x = t->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	return x * UINT64_C(2685821657736338717);
}

/* Calls until the next timed one, for a mean of n: uniform in [1, 2n-1]. */
static inline __attribute__((always_inline, no_instrument_function))
uint64_t draw(struct jp_thread *t, uint64_t n)
{
	return n <= 1 ? 1 : 1 + rnd(t) % (2 * n - 1);
}

void jp_sampling_reset(struct jp_thread *t)
{
	struct jp_instr *in = t->in;
	uint64_t tps = in ? in->ticks_per_sec : 1000000000u;
	unsigned rate = in && in->rate ? in->rate : JP_DEFAULT_RATE;

	t->rng = (uint64_t)syscall(SYS_gettid) * UINT64_C(0x9e3779b97f4a7c15) ^ jp_ticks();
	if (!t->rng)
		t->rng = 1;
	/* one function at the whole budget, to begin with */
	t->period = (double)tps / rate;
	t->epoch_len = tps / EPOCH_PER_SEC ? tps / EPOCH_PER_SEC : 1;
	t->epoch_budget = rate / EPOCH_PER_SEC ? rate / EPOCH_PER_SEC : 1;
	t->epoch_start = 0;
	t->epoch_timed = 0;
}

uint64_t jp_first_next(struct jp_thread *t, uint64_t n)
{
	switch (t->mode) {
	case JP_SAMPLE_NONE:
		return UINT64_MAX;
	case JP_SAMPLE_ADAPTIVE:
		return n;               /* a function's first call is timed */
	default:
		/* the first timed call lies within the first N calls */
		return t->every <= 1 ? n : n + rnd(t) % t->every;
	}
}

/* The mean gap after a timed call of st at now (adaptive sampling). */
static uint64_t adapt(struct jp_thread *t, struct jp_fstat *st, uint64_t now) JP_NOINSTR;
static uint64_t adapt(struct jp_thread *t, struct jp_fstat *st, uint64_t now)
{
	double prev = st->interval ? (double)st->interval : 1.0, n = 1.0;
	double min_period = (double)t->in->ticks_per_sec / (t->in->rate ? t->in->rate : JP_DEFAULT_RATE);

	if (st->last_tick && now > st->last_tick) {
		/* prev calls took now - last_tick: as many as fit in a period */
		n = prev * t->period / (double)(now - st->last_tick);
		if (n > prev * 8)
			n = prev * 8;   /* grow by steps: a burst is not one sample */
		if (n < 1)
			n = 1;
		if (n > 1e12)
			n = 1e12;
	}
	st->interval = (uint64_t)n;
	st->last_tick = now;
	/* Keep the thread's timed calls within the budget: every epoch (or
	 * as soon as an epoch's share is spent four times over) scale the
	 * period by how far the rate was from the budget. */
	t->epoch_timed++;
	if (now - t->epoch_start >= t->epoch_len || t->epoch_timed > 4 * t->epoch_budget) {
		if (t->epoch_start && now > t->epoch_start) {
			double rate = (double)t->epoch_timed * (double)t->epoch_len /
				      (double)(now - t->epoch_start);
			double f = rate / (double)t->epoch_budget;

			if (f < 0.25)
				f = 0.25;
			if (f > 4)
				f = 4;
			t->period *= f;
			if (t->period < min_period)
				t->period = min_period;
			if (t->period > 1e15)
				t->period = 1e15;
		}
		t->epoch_start = now;
		t->epoch_timed = 0;
	}
	return st->interval;
}

int jp_timed_enter(struct jp_thread *t, jitperf_fn fn, uint32_t sd, uint64_t n,
		   struct jitperf__count *c)
{
	struct jitperf__tls *T = &jitperf__tls;
	struct jp_fstat *st = NULL;
	struct jp_frame *f;
	uint64_t now;

	/* (id 0 is calibration's: it costs what any call costs) */
	if (t->ntimed >= JP_STACK_MAX || !(st = jp_stat(t, fn)))
		return 0;
	f = &t->frames[t->ntimed];
	f->fn = fn;
	f->sdepth = sd;
	f->written = 0;
	/* entered by code that counts calls without the stack: its callers
	 * may be missing from the stack, unless every call is timed (then
	 * every call came through here) */
	f->framed = (T->stack[sd] & JITPERF__FRAMED) && (t->mode != JP_SAMPLE_FIXED || t->every > 1);
	f->w = (double)(n - st->last_n);
	if (__builtin_expect(t->nctr != 0, 0))
		jp_counters_read(&t->in->counters, &t->ctrs, f->ctr);
	f->lib0 = T->lib_calls;
	f->inl0 = T->inline_calls;
	f->frm0 = T->framed_calls;
	f->timed0 = t->timed_calls++;
	now = jp_ticks();
	f->start = now;
	st->last_n = n;
	c->next = n + draw(t, t->mode == JP_SAMPLE_ADAPTIVE ? adapt(t, st, now) : t->every);
	if (__builtin_expect(t->calibrating, 0))
		c->next = n + 1;        /* every call */
	t->ntimed++;
	if (t->trace_on && !t->min_ticks) {
		if (!t->trace_full && !jp_trace_entry(t, f))
			f->written = 1;
		else
			t->drop_full++;
	}
	return 1;
}

/* The net duration of f ending at now: minus the probes inside it. */
static inline __attribute__((always_inline, no_instrument_function))
double net_ticks(struct jp_thread *t, const struct jp_frame *f, uint64_t now)
{
	const struct jitperf__tls *T = &jitperf__tls;
	const double *c = t->in->cost.c;
	double d = now > f->start ? (double)(now - f->start) : 0;

	d -= c[JPT_COST_SELF] + (double)(T->lib_calls - f->lib0) * c[JPT_COST_LIB] +
	     (double)(T->inline_calls - f->inl0) * c[JPT_COST_INLINE] +
	     (double)(T->framed_calls - f->frm0) * c[JPT_COST_FRAMED] +
	     (double)(t->timed_calls - f->timed0 - 1) * c[JPT_COST_TIMED];
	return d > 0 ? d : 0;
}

/* min_ticks: write the pending timed calls below f (outermost first),
 * then f itself; a long call makes its timed callers long too. */
static void write_pending(struct jp_thread *t, uint32_t k, uint64_t now,
			  const uint64_t *ctr, int repaired) JP_NOINSTR;
static void write_pending(struct jp_thread *t, uint32_t k, uint64_t now,
			  const uint64_t *ctr, int repaired)
{
	for (uint32_t j = 0; j <= k; j++) {
		struct jp_frame *g = &t->frames[j];

		if (g->written)
			continue;
		if (t->trace_full || jp_trace_entry(t, g)) {
			t->drop_full++;
			return;
		}
		g->written = 1;
	}
	if (jp_trace_exit(t, &t->frames[k], now, ctr, repaired))
		t->drop_full++;
}

void jp_timed_exit(struct jp_thread *t, uint32_t sd, int repaired, uint64_t now)
{
	const struct jitperf__tls *T = &jitperf__tls;
	uint64_t cur[JPT_MAX_COUNTERS];
	struct jp_frame *f;
	struct jp_fstat *st;
	uint32_t k = t->ntimed;
	double net;

	/* its frame: frames above it belong to calls that are gone */
	while (k > 0 && t->frames[k - 1].sdepth > sd)
		k--;
	if (k == 0 || t->frames[k - 1].sdepth != sd) {
		t->ntimed = k;
		return;
	}
	f = &t->frames[--k];
	if (__builtin_expect(t->nctr != 0, 0))
		jp_counters_read(&t->in->counters, &t->ctrs, cur);
	net = net_ticks(t, f, now);
	if (__builtin_expect(t->calibrating, 0))
		t->cal_raw = now - f->start;
	if (t->stats_on && (st = jp_stat(t, f->fn))) {
		uint64_t whole = (uint64_t)(net + 0.5);

		if (!st->timed || whole < st->min)
			st->min = whole;
		if (whole > st->max)
			st->max = whole;
		st->timed++;
		st->w += f->w;
		st->total += net * f->w;
		st->unbalanced += (unsigned)repaired;
		st->framed += f->framed;
		for (unsigned i = 0; i < t->nctr; i++)
			st->ctr[i] += (double)(cur[i] - f->ctr[i]) * f->w;
		/* the caller's share of time spent in its callees (not known
		 * when the call was entered by code that keeps no stack) */
		if (sd > 0 && !f->framed) {
			uint32_t caller = JP_ID(T->stack[sd - 1]);
			struct jp_fstat *cs;

			if (caller && caller - 1 < t->nfns && (cs = jp_stat(t, caller)))
				cs->child += net * f->w;
		}
	}
	if (f->written) {
		if (jp_trace_exit(t, f, now, t->nctr ? cur : NULL, repaired)) {
			t->traced--;
			t->drop_full++;
		}
	} else if (t->min_ticks && t->trace_on) {
		if (net >= (double)t->min_ticks)
			write_pending(t, k, now, t->nctr ? cur : NULL, repaired);
		else
			t->drop_short++;
	}
	t->ntimed = k;
}
