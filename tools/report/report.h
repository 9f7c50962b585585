/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report's table (tools/report/report.c) and what the
 * instrumentation adds to it (tools/report/report_instr.c): the timed
 * calls' figures, the probes' cost, what the trace's limits left out.
 */
#ifndef JITPERF_REPORT_H
#define JITPERF_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "read/stats_read.h"

struct fnrow {
	char     *name;                 /* key: perf's symbol name */
	char     *label;                /* shown instead of name, or NULL */
	int       jit;                  /* named by a CODE_LOAD or a stats row */
	uint64_t  samples;              /* perf's, in this function's code */
	uint64_t  probe_samples;        /* of them, estimated in its inline probes */
	double    children;             /* percent of all periods, < 0 without call graphs */
	uint64_t  child_period;         /* period of the samples with it in their call graph */
	uint64_t  seen;                 /* the last sample that counted it */
	int       has_stats;
	uint64_t  calls, timed;         /* counted exactly; timed */
	uint64_t  total_ns, min_ns, max_ns;  /* estimated from the timed calls */
	double    probe_ns;             /* estimated cost of the probes inside its code */
	uint64_t *ctr;                  /* summed per counter, STATS_NO_VALUE if unsupported */
};

/* The instrumentation of the whole run: every statistics file summed. */
struct runinfo {
	int      nfiles;
	int      sample_every;          /* the first file's, or -1 if the files differ */
	uint32_t timed_per_sec;
	int      has_probes;
	double   probe_ns[STATS_NCOSTS]; /* the largest of each cost */
	struct stats_sum sum;           /* the runs' calls, costs and trace */
	double   inline_ns;             /* of sum.run_probe_ns, inside the JIT code */
};

struct table {
	struct fnrow  *rows;
	size_t         n, cap;
	size_t        *slot;            /* hash: index + 1, 0 = empty */
	size_t         nslot;
	size_t         ncounters;
	char         **counters;        /* names, from the first stats file */
	uint64_t       total_samples;
	uint64_t       probe_samples;   /* in libjitperf's own probes */
	uint64_t       moved_samples;   /* estimated in the JIT code's inline probes */
	int            have_perf, have_children;
	int            bad_input;       /* a file could not be read: exit 1 after the table */
	size_t         nstats;          /* stats files read: processes with instrumented calls */
	struct runinfo run;
};

/* A statistics file into the run's figures, and one of its rows into row. */
void report_run_add(struct runinfo *ri, const struct stats_file *s);
void report_row_add(struct fnrow *row, const struct stats_file *s, const struct stats_row *sr);

/* Move each JIT function's share of the probes' estimated samples from its
 * row to the probes' (fnrow.probe_samples, table.moved_samples). */
void report_probes_move(struct table *t);

/* The calls, timed, mean, min and max cells of a row with statistics. */
void report_print_times(const struct fnrow *r, const struct runinfo *ri);

/* The lines under the table: how times were measured, what the probes
 * cost, what the trace left out. */
void report_print_notes(const struct table *t);

#endif
