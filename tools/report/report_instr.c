/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report: what the instrumentation adds to the table.
 *
 * Calls are counted exactly; times come from the timed calls (all of them,
 * or a sample: the statistics files say which) net of the probes' own
 * cost as the library measured it when the session opened.  A time below
 * what a timed probe costs itself is shown as "<N": it is not measured.
 *
 * Probes counted inline (jitperf.h in C, or generated code) run inside the
 * JIT functions, so perf counts their samples there: each function would
 * look more expensive by its calls times the probe's cost, the short and
 * frequent ones most, and the ranking would not be the program's.  The
 * report estimates those samples (calls x calibrated cost x samples per ns
 * of the run's CPU time), moves them to the "(jitperf probes)" row and
 * ranks the functions by what is left, and says so under the table.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "tools/cmds.h"

void report_run_add(struct runinfo *ri, const struct stats_file *s)
{
	int every = (int)(s->sample_every == STATS_NONE ? -2 : (int)s->sample_every);

	if (!ri->nfiles++) {
		ri->sample_every = every;
		ri->timed_per_sec = s->timed_per_sec;
	} else if (ri->sample_every != every || ri->timed_per_sec != s->timed_per_sec) {
		ri->sample_every = -1;                  /* the processes differ */
	}
	if (s->has_probes) {
		ri->has_probes = 1;
		for (int i = 0; i < STATS_NCOSTS; i++)
			if (s->probe_ns[i] > ri->probe_ns[i])
				ri->probe_ns[i] = s->probe_ns[i];
	}
	stats_sum_add(&ri->sum, s);
	if (s->has_run)
		ri->inline_ns += (double)s->inline_calls * s->probe_ns[STATS_COST_INLINE] +
				 (double)s->framed_calls * s->probe_ns[STATS_COST_FRAMED];
}

void report_row_add(struct fnrow *row, const struct stats_file *s, const struct stats_row *sr)
{
	if (sr->timed) {
		if (!row->timed || sr->min_ns < row->min_ns)
			row->min_ns = sr->min_ns;
		if (sr->max_ns > row->max_ns)
			row->max_ns = sr->max_ns;
		row->total_ns += sr->total_ns;
		row->timed += sr->timed;
	}
	row->has_stats = 1;
	row->calls += sr->calls;
	/* what its inline probes cost: this process's counting, per call */
	if (s->has_run && s->calls)
		row->probe_ns += (double)sr->calls *
			((double)s->inline_calls * s->probe_ns[STATS_COST_INLINE] +
			 (double)s->framed_calls * s->probe_ns[STATS_COST_FRAMED]) / (double)s->calls;
}

void report_probes_move(struct table *t)
{
	double per_ns;

	if (!t->run.sum.cpu_ns || !t->total_samples)
		return;
	per_ns = (double)t->total_samples / (double)t->run.sum.cpu_ns;
	for (size_t i = 0; i < t->n; i++) {
		struct fnrow *r = &t->rows[i];
		uint64_t est = (uint64_t)llround(r->probe_ns * per_ns);

		if (!r->jit)
			continue;
		r->probe_samples = est < r->samples ? est : r->samples;
		t->moved_samples += r->probe_samples;
	}
}

static double resolution(const struct runinfo *ri)
{
	return ri->probe_ns[STATS_COST_SELF] > 1 ? ri->probe_ns[STATS_COST_SELF] : 1;
}

double report_mean_err(const struct fnrow *r)
{
	return r->has_err && r->calls ? sqrt(r->err2) / (double)r->calls : -1;
}

int report_below_resolution(const struct fnrow *r, const struct runinfo *ri)
{
	return r->timed && (double)(r->calls ? r->total_ns / r->calls : 0) < resolution(ri);
}

/* A duration in ns, "<N" below the probes' resolution; with its error
 * (err >= 0.5) as "N±E". */
static void duration(uint64_t ns, double err, const struct runinfo *ri)
{
	double res = resolution(ri);
	char buf[48];

	if ((double)ns < res)
		snprintf(buf, sizeof(buf), "<%.0f", ceil(res));
	else if (err >= 0.5)
		snprintf(buf, sizeof(buf), "%" PRIu64 "\u00b1%.0f", ns, err);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, ns);
	/* the width in characters: "±" is two bytes */
	printf(" %*s", err >= 0.5 && (double)ns >= res ? 13 : 12, buf);
}

void report_print_times(const struct fnrow *r, const struct runinfo *ri)
{
	char timed[32];

	printf(" %10" PRIu64, r->calls);
	if (!r->timed)
		snprintf(timed, sizeof(timed), "-");
	else if (r->timed >= r->calls)
		snprintf(timed, sizeof(timed), "all");
	else if ((double)r->calls / (double)r->timed < 9.95)  /* most: 1/1.1, not 1/1 */
		snprintf(timed, sizeof(timed), "1/%.1f", (double)r->calls / (double)r->timed);
	else
		snprintf(timed, sizeof(timed), "1/%.0f", (double)r->calls / (double)r->timed);
	printf(" %8s", timed);
	if (!r->timed) {
		printf(" %12s %12s %12s", "-", "-", "-");
		return;
	}
	duration(r->calls ? r->total_ns / r->calls : 0, report_mean_err(r), ri);
	duration(r->min_ns, -1, ri);
	duration(r->max_ns, -1, ri);
}

static void note_timing(const struct runinfo *ri)
{
	printf("# timed: ");
	if (ri->sample_every == 1)
		printf("every call");
	else if (ri->sample_every == -2)
		printf("no call (counted only)");
	else if (ri->sample_every == 0)
		printf("adaptively, about %u calls a second per thread, frequent functions "
		       "least often", ri->timed_per_sec);
	else if (ri->sample_every > 1)
		printf("about 1 call in %d of each function", ri->sample_every);
	else
		printf("differently in each process");
	if (ri->sample_every != -2) {
		printf("; mean, min and max %s the timed calls, net of the probes' cost",
		       ri->sample_every == 1 ? "of" : "estimated from");
		if (ri->has_probes)
			printf(" (%.1f ns in a timed call; \"<%.0f\": shorter than that)",
			       ri->probe_ns[STATS_COST_SELF], ceil(resolution(ri)));
		printf("; \"\u00b1E\": the mean's error, from the spread of the timed "
		       "calls and the price of the probes inside them");
	}
	putchar('\n');
}

static void note_cost(const struct table *t)
{
	const struct runinfo *ri = &t->run;

	if (!ri->sum.has_run || !ri->sum.cpu_ns)
		return;
	printf("# probes: about %.1f ms of the run's %.1f ms of CPU time (%.1f%%)",
	       ri->sum.run_probe_ns / 1e6, (double)ri->sum.cpu_ns / 1e6,
	       100.0 * ri->sum.run_probe_ns / (double)ri->sum.cpu_ns);
	if (t->moved_samples)
		printf("; the %" PRIu64 " samples they are estimated to have taken inside the "
		       "JIT code are counted under (jitperf probes), not under the functions",
		       t->moved_samples);
	putchar('\n');
}

static void note_trace(const struct runinfo *ri)
{
	char size[32];

	if (!ri->sum.has_trace)
		return;
	printf("# trace: %" PRIu64 " calls", ri->sum.traced);
	if (ri->sum.dropped_full)
		printf("; %" PRIu64 " timed calls left out, the trace was full at %s "
		       "(record with --trace-max)", ri->sum.dropped_full,
		       cmd_size_text(ri->sum.trace_max, size, sizeof(size)));
	if (ri->sum.dropped_short)
		printf("; %" PRIu64 " shorter than %" PRIu64 " ns left out (--trace-min)",
		       ri->sum.dropped_short, ri->sum.trace_min_ns);
	if (ri->sum.dropped_ring)
		printf("; %" PRIu64 " overwritten, each thread kept its last %s (--trace-ring)",
		       ri->sum.dropped_ring, cmd_size_text(ri->sum.trace_ring, size, sizeof(size)));
	putchar('\n');
}

void report_print_notes(const struct table *t)
{
	if (!t->run.nfiles)
		return;
	note_timing(&t->run);
	note_cost(t);
	note_trace(&t->run);
}
