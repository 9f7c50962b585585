/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report's tiers table as text: one line per function and tier,
 * "-" where a figure is unknown, then the totals per tier and what the
 * figures are made of.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

#define FUNC_MAX_WIDTH 40

/* "fib file.js:2:13" for V8, else the function; "(anonymous)" for "". */
static void row_name(const struct tier_row *r, char *buf, size_t len)
{
	const char *f = *r->func ? r->func : "(anonymous)";

	if (*r->location)
		snprintf(buf, len, "%s %s", f, r->location);
	else
		snprintf(buf, len, "%s", f);
}

/* A name longer than the column keeps its start and its end. */
static void print_func(const char *name, int width)
{
	size_t len = strlen(name);
	const int head = FUNC_MAX_WIDTH - 3 - 15;

	if (len <= FUNC_MAX_WIDTH)
		printf("%-*s", width, name);
	else
		printf("%.*s...%s", head, name, name + len - (FUNC_MAX_WIDTH - 3 - head));
}

static void cell_ms(double ms, int width)
{
	if (ms < 0)
		printf(" %*s", width, "-");
	else
		printf(" %*.3f", width, ms);
}

static void print_row(const struct tiers *tt, const struct tier_row *r, int width)
{
	char name[1024];
	double ns = report_tier_ns_per_call(r);

	row_name(r, name, sizeof(name));
	print_func(name, width);
	printf(" %4d %-12.12s", r->tier, r->tag);
	if (r->has_compiles) {
		printf(" %8zu %6zu", r->c.compiles, r->c.failed);
		if (r->c.compiles && r->c.unfinished == r->c.compiles)
			printf(" %10s %10s", "unfinished", "-");
		else if (r->c.compiles)
			printf(" %10.3f %10.3f", (double)r->c.compile_ns / 1e6,
			       (double)r->c.compile_max_ns / 1e6);
		else
			printf(" %10s %10s", "-", "-");
		if (r->c.compiles)
			printf(" %7" PRIu32, r->c.compile_tid);
		else
			printf(" %7s", "-");
		cell_ms(r->c.queue_ns == TM_NO_TIME ? -1 : (double)r->c.queue_ns / 1e6, 9);
		cell_ms(r->install_ms, 10);
	} else {
		printf(" %8s %6s %10s %10s %7s %9s %10s", "-", "-", "-", "-", "-", "-", "-");
	}
	if (tt->sampled)
		printf(" %7" PRIu64, r->samples);
	else
		printf(" %7s", "-");
	cell_ms(report_tier_self_ms(tt, r), 9);
	if (r->has_stats)
		printf(" %10" PRIu64, r->calls);
	else
		printf(" %10s", "-");
	if (ns >= 0)
		printf(" %10.1f", ns);
	else
		printf(" %10s", "-");
	if (r->has_break_even)
		printf(" %10.0f", r->break_even);
	else
		printf(" %10s", "-");
	if (r->has_after)
		printf(" %10" PRIu64, r->after);
	else
		printf(" %10s", "-");
	printf("  %s\n", *r->verdict ? r->verdict : "-");
}

static void print_totals(const struct tiers *tt)
{
	for (size_t i = 0; i < tt->ntotals; i++) {
		const struct tier_total *t = &tt->totals[i];

		printf("# tier %d (%s): compiles took %.3f ms on background threads, %.3f ms on "
		       "threads that run JIT code", t->tier, t->tag, t->bg_ms, t->query_ms);
		if (tt->sampled && tt->time_period)
			printf(" (CPU in perf's samples: %.3f ms, %.3f ms)", t->bg_cpu_ms,
			       t->query_cpu_ms);
		if (t->tierup_median_ms >= 0)
			printf("; request to install: median %.3f ms, max %.3f ms",
			       t->tierup_median_ms, t->tierup_max_ms);
		putchar('\n');
	}
}

void report_tiers_print(const struct tiers *tt)
{
	int width = 8;          /* "function" */

	for (size_t i = 0; i < tt->n; i++) {
		char name[1024];
		int len;

		row_name(&tt->rows[i], name, sizeof(name));
		len = (int)strlen(name);
		if (len > width)
			width = len > FUNC_MAX_WIDTH ? FUNC_MAX_WIDTH : len;
	}
	printf("# tiers: %zu function tier%s", tt->n, tt->n == 1 ? "" : "s");
	if (tt->nmodels)
		printf(", compiles from %zu tiers file%s", tt->nmodels, tt->nmodels == 1 ? "" : "s");
	putchar('\n');
	printf("%-*s %4s %-12s %8s %6s %10s %10s %7s %9s %10s %7s %9s %10s %10s %10s %10s  %s\n",
	       width, "function", "tier", "tag", "compiles", "failed", "compile_ms", "max_ms",
	       "tid", "queue_ms", "install_ms", "samples", "self_ms", "calls", "ns/call",
	       "break_even", "after", "verdict");
	for (size_t i = 0; i < tt->n; i++)
		print_row(tt, &tt->rows[i], width);
	print_totals(tt);
	if (tt->foreign)
		printf("# compile times are unknown for V8 and .NET code: their tiers come "
		       "from the marks in its names, and only libjitperf records compiles\n");
	if (tt->nmodels)
		printf("# install_ms: since the process opened its jitdump; queue_ms: request "
		       "to compile begin; after: calls in the tier, all after its install\n");
	if (tt->sampled && !tt->time_period)
		printf("# self_ms: only for cpu-clock or task-clock samples\n");
}
