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
 * duration x weight, scaled to the exact count at the end (stats.c);
 * calls of weight above 1 go through windows, whose middle mean stands
 * for them (stats.c, jp_stats_window_close), so that an interrupt in one
 * is not multiplied by the calls it stands for.  A
 * timed call's duration is net of the probes: its own clock reads and
 * the probes of the calls it made, counted exactly and priced by the
 * calibration (calibrate.c).  Self time is total minus the estimated time
 * of the calls made directly from the function (its caller is the entry
 * below it on the thread's stack).
 *
 * The entry and exit themselves are inline in the probes (timed.h).
 */
#include "config.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "instr.h"
#include "timed.h"

#define EPOCH_PER_SEC 20                 /* the period is adjusted every 50 ms */

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
		return t->every <= 1 ? n : n + jp_rnd(t) % t->every;
	}
}

/* The mean gap after a timed call of st at now (adaptive sampling). */
uint64_t jp_timed_adapt(struct jp_thread *t, struct jp_fstat *st, uint64_t now)
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

/* min_ticks: write the pending timed calls below f (outermost first),
 * then f itself; a long call makes its timed callers long too. */
void jp_timed_write_pending(struct jp_thread *t, uint32_t k, uint64_t now,
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

