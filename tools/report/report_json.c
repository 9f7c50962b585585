/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report --json: the table and the tiers as one JSON object, the
 * field names jitperf-report(1) documents.  An unknown figure is null,
 * never a made-up 0, so a CI job can tell "none" from "not measured".
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "tools/convert/textesc.h"

static void str(const char *s)
{
	char buf[1024], *d;
	size_t n;

	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (n = strlen(s); n;) {
		/* in pieces, split where no UTF-8 sequence is cut */
		size_t k = n < 128 ? n : 128;

		while (k < n && k > 124 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
		d = textesc_json(buf, s, k);
		fwrite(buf, 1, (size_t)(d - buf), stdout);
		s += k;
		n -= k;
	}
	putchar('"');
}

static void key(const char *k, int *first)
{
	printf("%s\"%s\": ", *first ? "" : ", ", k);
	*first = 0;
}

/* a number, null when below zero (unknown) */
static void num(const char *k, double v, int *first)
{
	key(k, first);
	if (v < 0)
		fputs("null", stdout);
	else
		printf("%.6g", v);
}

static void fixed(const char *k, double v, int *first)
{
	key(k, first);
	if (v < 0)
		fputs("null", stdout);
	else
		printf("%.3f", v);
}

static void u64(const char *k, uint64_t v, int known, int *first)
{
	key(k, first);
	if (known)
		printf("%" PRIu64, v);
	else
		fputs("null", stdout);
}

static void text(const char *k, const char *v, int *first)
{
	key(k, first);
	str(v);
}

static void function(const struct table *t, const struct fnrow *r)
{
	int first = 1;
	uint64_t own = r->samples - r->probe_samples;

	putchar('{');
	text("name", r->name, &first);
	text("label", r->label, &first);
	u64("samples", own, t->have_perf, &first);
	fixed("self_percent", t->have_perf && t->total_samples ?
	      100.0 * (double)own / (double)t->total_samples : t->have_perf ? 0 : -1, &first);
	fixed("children_percent", r->children, &first);
	u64("calls", r->calls, r->has_stats, &first);
	u64("timed", r->timed, r->has_stats, &first);
	u64("mean_ns", r->calls ? r->total_ns / r->calls : 0, r->has_stats && r->timed, &first);
	fixed("mean_err_ns", r->has_stats && r->timed ? report_mean_err(r) : -1, &first);
	key("below_resolution", &first);
	fputs(r->has_stats && r->timed && report_below_resolution(r, &t->run) ? "true" : "false",
	      stdout);
	u64("min_ns", r->min_ns, r->has_stats && r->timed, &first);
	u64("max_ns", r->max_ns, r->has_stats && r->timed, &first);
	key("counters_per_call", &first);
	putchar('{');
	for (size_t k = 0; k < t->ncounters; k++) {
		int f = !k;
		uint64_t v = r->ctr ? r->ctr[k] : STATS_NO_VALUE;

		key(t->counters[k], &f);
		if (v == STATS_NO_VALUE || !r->calls)
			fputs("null", stdout);
		else
			printf("%" PRIu64, v / r->calls);
	}
	fputs("}}", stdout);
}

static void table(const struct table *t, int *first)
{
	size_t n = 0, quiet = 0;

	u64("samples", t->total_samples, t->have_perf, first);
	fixed("jit_percent", t->have_perf && t->total_samples ?
	      100.0 * (double)t->jit_samples / (double)t->total_samples : t->have_perf ? 0 : -1,
	      first);
	u64("processes_with_calls", t->nstats, 1, first);
	u64("probe_samples", t->shown_probes, t->have_perf, first);
	u64("other_samples", t->total_samples - t->jit_samples - t->shown_probes, t->have_perf,
	    first);
	key("functions", first);
	putchar('[');
	for (size_t i = 0; i < t->n; i++) {
		const struct fnrow *r = &t->rows[i];

		if (!r->jit)
			continue;
		if (report_row_quiet(r)) {
			quiet++;
			continue;
		}
		fputs(n++ ? ",\n  " : "\n  ", stdout);
		function(t, r);
	}
	fputs(n ? "\n]" : "]", stdout);
	u64("quiet_functions", quiet, 1, first);
	key("warnings", first);
	putchar('[');
	for (size_t i = 0; i < t->nwarnings; i++) {
		if (i)
			putchar(',');
		str(t->warnings[i]);
	}
	putchar(']');
}

static const char *runtime(enum tm_kind k)
{
	return k == TM_V8 ? "v8" : k == TM_DOTNET ? "dotnet" : "jitperf";
}

static void tier_row(const struct tiers *tt, const struct tier_row *r)
{
	/* compile figures: only libjitperf records compiles */
	int known = r->kind == TM_JITPERF && tt->nmodels, ended;
	int first = 1;

	ended = known && r->c.compiles > r->c.unfinished;
	putchar('{');
	text("func", r->func, &first);
	text("location", r->kind == TM_V8 ? r->location : NULL, &first);
	u64("tier", (uint64_t)r->tier, 1, &first);
	text("tag", r->tag, &first);
	text("runtime", runtime(r->kind), &first);
	u64("compiles", r->c.compiles, known, &first);
	u64("failed", r->c.failed, known, &first);
	u64("unfinished", r->c.unfinished, known, &first);
	fixed("compile_ms", ended ? (double)r->c.compile_ns / 1e6 : -1, &first);
	fixed("compile_max_ms", ended ? (double)r->c.compile_max_ns / 1e6 : -1, &first);
	u64("compile_tid", r->c.compile_tid, known && r->c.compiles, &first);
	fixed("queue_ms", r->c.queue_ns == TM_NO_TIME ? -1 : (double)r->c.queue_ns / 1e6, &first);
	fixed("install_ms", r->install_ms, &first);
	u64("samples", r->samples, tt->sampled, &first);
	fixed("self_ms", report_tier_self_ms(tt, r), &first);
	u64("calls", r->calls, r->has_stats, &first);
	num("ns_per_call", report_tier_ns_per_call(r), &first);
	u64("break_even_calls", (uint64_t)r->break_even, r->has_break_even, &first);
	u64("calls_after_install", r->after, r->has_after, &first);
	text("verdict", *r->verdict ? r->verdict : NULL, &first);
	putchar('}');
}

static void tiers(const struct tiers *tt, int *first)
{
	key("tiers", first);
	if (!tt->n) {
		fputs("null", stdout);
		return;
	}
	putchar('[');
	for (size_t i = 0; i < tt->n; i++) {
		fputs(i ? ",\n  " : "\n  ", stdout);
		tier_row(tt, &tt->rows[i]);
	}
	fputs("\n]", stdout);
	key("tier_totals", first);
	putchar('[');
	for (size_t i = 0; i < tt->ntotals; i++) {
		const struct tier_total *t = &tt->totals[i];
		int f = 1;

		fputs(i ? ",\n  {" : "\n  {", stdout);
		u64("tier", (uint64_t)t->tier, 1, &f);
		text("tag", t->tag, &f);
		fixed("compile_bg_ms", t->bg_ms, &f);
		fixed("compile_query_ms", t->query_ms, &f);
		/* CPU in perf's samples: known for time samples only */
		fixed("compile_bg_cpu_ms", tt->sampled && tt->time_period ? t->bg_cpu_ms : -1, &f);
		fixed("compile_query_cpu_ms", tt->sampled && tt->time_period ? t->query_cpu_ms : -1,
		      &f);
		fixed("tierup_median_ms", t->tierup_median_ms, &f);
		fixed("tierup_max_ms", t->tierup_max_ms, &f);
		putchar('}');
	}
	fputs(tt->ntotals ? "\n]" : "]", stdout);
	key("compile_times_known", first);
	fputs(tt->foreign ? "false" : "true", stdout);
}

void report_json(const struct table *t, const struct tiers *tt, const char *dir, int tiers_only)
{
	int first = 1;

	putchar('{');
	text("dir", dir, &first);
	if (!tiers_only)
		table(t, &first);
	tiers(tt, &first);
	fputs("}\n", stdout);
}
