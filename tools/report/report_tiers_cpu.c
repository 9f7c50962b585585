/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CPU a tier's compiles took, as perf sampled it: the samples of the
 * compiling thread between an outermost compile's begin and end (a nested
 * compile is inside its parent's).  A compile's wall time counts the time
 * its thread waited or was preempted; these samples do not.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "report.h"

struct tier_span {
	uint32_t pid, tid;
	uint64_t begin, end;
	unsigned tier;
	uint64_t period;                /* of the samples inside it */
};

static int by_thread_time(const void *x, const void *y)
{
	const struct tier_span *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->begin < b->begin ? -1 : a->begin > b->begin;
}

int report_tiers_spans(struct tiers *tt)
{
	size_t n = 0;

	for (size_t k = 0; k < tt->nmodels; k++)
		n += tt->models[k].ncompiles;
	if (!n)
		return 0;
	if (!(tt->spans = calloc(n, sizeof(*tt->spans))))
		return -ENOMEM;
	for (size_t k = 0; k < tt->nmodels; k++) {
		const struct tm_model *m = &tt->models[k];

		for (size_t i = 0; i < m->ncompiles; i++) {
			const struct tm_compile *c = &m->compiles[i];

			if (!c->parent && c->end != TM_NO_TIME)
				tt->spans[tt->nspans++] = (struct tier_span){
					m->pid, c->tid, c->begin, c->end, c->tier, 0 };
		}
	}
	qsort(tt->spans, tt->nspans, sizeof(*tt->spans), by_thread_time);
	return 0;
}

void report_tiers_span_sample(struct tiers *tt, uint32_t pid, uint32_t tid, uint64_t time,
			      uint64_t period)
{
	struct tier_span key = { .pid = pid, .tid = tid, .begin = time };
	size_t lo = 0, hi = tt->nspans;

	/* the last span of the thread that began at or before time */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (by_thread_time(&tt->spans[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		struct tier_span *s = &tt->spans[lo - 1];

		if (s->pid == pid && s->tid == tid && time <= s->end)
			s->period += period;
	}
}

void report_tiers_span_totals(struct tiers *tt, int (*on_query_thread)(const struct tiers *, uint32_t))
{
	for (size_t i = 0; i < tt->nspans; i++) {
		const struct tier_span *s = &tt->spans[i];

		for (size_t t = 0; t < tt->ntotals; t++) {
			struct tier_total *tot = &tt->totals[t];

			if (tot->tier != (int)s->tier)
				continue;
			if (on_query_thread(tt, s->tid))
				tot->query_cpu_ms += (double)s->period / 1e6;
			else
				tot->bg_cpu_ms += (double)s->period / 1e6;
		}
	}
}

void report_tiers_spans_free(struct tiers *tt)
{
	free(tt->spans);
	tt->spans = NULL;
	tt->nspans = 0;
}
