/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report's table (tools/report/report.c) and what the
 * instrumentation adds to it (tools/report/report_instr.c): the timed
 * calls' figures, the probes' cost, what the trace's limits left out;
 * the tiers table (tools/report/report_tiers.c, report_tiers_print.c) and
 * the JSON of both (tools/report/report_json.c).
 */
#ifndef JITPERF_REPORT_H
#define JITPERF_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "read/pdscript.h"
#include "read/stats_read.h"
#include "read/tiers_model.h"
#include "tools/rundir.h"

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
	int       has_err;              /* the files say the error of total_ns: */
	double    err2;                 /* its square, summed over the processes */
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
	char         **warnings;        /* figures that contradict each other */
	size_t         nwarnings;
	/* set by report_table_sort: */
	uint64_t       jit_samples;     /* in JIT code, its probes moved out */
	uint64_t       shown_probes;    /* the probes' row, 0: none */
	int            has_stats;       /* some JIT row has instrumented calls */
	size_t         nstats;          /* stats files read: processes with instrumented calls */
	struct runinfo run;
};

/* A JIT function perf never saw and nothing instrumented: a runtime
 * registers thousands, counted in one line rather than shown. */
static inline int report_row_quiet(const struct fnrow *r)
{
	return !r->samples && r->children <= 0 && !r->has_stats;
}

/* A statistics file into the run's figures, and one of its rows into row. */
void report_run_add(struct runinfo *ri, const struct stats_file *s);
void report_row_add(struct fnrow *row, const struct stats_file *s, const struct stats_row *sr);

/* What a statistics file says beside its rows (tools/report/report_check.c):
 * per row the error of its total and the time of its callees (< 0: not
 * said), and how long its threads could run. */
struct report_check {
	double *err_ns, *callee_ns;
	double  run_ns;
	int     has_run;
};
/* Read them from path, whose rows stats_read read (nrows).  0 or -ENOMEM;
 * a file without them leaves them unknown. */
int report_check_read(const char *path, struct report_check *c, size_t nrows);
void report_check_free(struct report_check *c);
/* A warning into t for each of s's figures that contradicts another
 * beyond their errors.  0 or -ENOMEM. */
int report_check_run(struct table *t, const struct stats_file *s, const struct report_check *c);
/* The warnings, one line each, under the table. */
void report_print_warnings(const struct table *t);
/* The error of r's mean, ns; < 0 not known. */
double report_mean_err(const struct fnrow *r);
/* Whether r's mean is below the probes' resolution. */
int report_below_resolution(const struct fnrow *r, const struct runinfo *ri);

/* Move each JIT function's share of the probes' estimated samples from its
 * row to the probes' (fnrow.probe_samples, table.moved_samples). */
void report_probes_move(struct table *t);

/* The calls, timed, mean, min and max cells of a row with statistics. */
void report_print_times(const struct fnrow *r, const struct runinfo *ri);

/* The lines under the table: how times were measured, what the probes
 * cost, what the trace left out. */
void report_print_notes(const struct table *t);

/* Move the probes' samples out, rank the rows, sum what the header shows. */
void report_table_sort(struct table *t);

/* ---- tiers: one row per logical function and tier (doc/tiers.md, "Report") */
struct tier_row {
	char        *key;               /* func, location, tier and tag: the row's identity */
	char        *func, *location, *tag;     /* location "" but for V8 */
	int          tier;
	enum tm_kind kind;
	int          has_compiles;      /* a tiers file knows the function */
	struct tm_row c;                /* its compiles, summed over the files (c.func unused) */
	double       install_ms;        /* since its process started, < 0 never installed */
	uint64_t     samples, period;   /* perf's in this tier's code (and under its trampoline) */
	int          has_stats;
	uint64_t     calls, timed, total_ns;
	int          has_break_even;
	double       break_even;        /* calls, to pay the compile back over the tier below */
	int          has_after;
	uint64_t     after;             /* calls that ran in this tier, after its install */
	char         verdict[96];       /* "" none */
};

struct tier_total {                     /* one per tier that was compiled */
	int      tier;
	char     tag[JPTIERS_TAG_MAX + 1];
	double   bg_ms, query_ms;       /* compile time on threads without/with JIT samples */
	double   bg_cpu_ms, query_cpu_ms;   /* the same in perf's samples of those threads */
	double   tierup_median_ms, tierup_max_ms;   /* request to install, < 0 none */
};

struct tier_span;                       /* an outermost compile (report_tiers_cpu.c) */

struct tier_alias {                     /* a registered function inside tier code */
	char *name;                     /* as registered */
	char *code;                     /* the tier code's name; NULL: in two tiers */
};

struct tiers {
	struct tier_row   *rows;
	size_t             n, cap;
	size_t            *slot;        /* hash of keys: index + 1 */
	size_t             nslot;
	struct tm_model   *models;      /* one per jit-<pid>.tiers */
	uint64_t          *starts;      /* each model's process start, ns */
	size_t             nmodels;
	uint32_t          *qtids;       /* threads with samples in JIT code */
	size_t             nqtids;
	int                time_period; /* every sample's period is ns (cpu-clock, task-clock) */
	int                sampled;     /* samples were read */
	int                foreign;     /* V8 or .NET marks: no compile data */
	struct tier_total *totals;
	size_t             ntotals;
	struct tier_alias *aliases;
	size_t             naliases;
	struct tier_span  *spans;       /* outermost compiles by thread and time */
	size_t             nspans;
};

/* The tiers files of DIR, each into a model.  0 or -ENOMEM; a damaged file
 * is said in one line and sets *bad. */
int report_tiers_load(struct tiers *tt, const char *dir, const struct rundir *rd, int *bad);
/* One perf sample into the row of the tier it ran in.  0 or -ENOMEM. */
int report_tiers_sample(struct tiers *tt, const struct pd_raw *s);
/* The instrumented calls of functions in tier code, the compiles of the
 * models; break-even, verdicts, totals.  0 or -ENOMEM. */
int report_tiers_finish(struct tiers *tt, const struct table *t, const struct rundir *rd);
/* The tier whose code name is, its mark into *mk, or -1: a name without
 * a mark the recording knows (tools/report/report_tiers_mark.c). */
int report_tier_of_name(const struct tiers *tt, const char *name, struct tm_mark *mk);
/* Whether name is the name of tier code. */
int report_is_tier_code(const struct tiers *tt, const char *name);
/* The functions the traces of rd place inside tier code
 * (tools/report/report_tiers_addr.c).  0 or -ENOMEM. */
int report_tiers_aliases(struct tiers *tt, const struct rundir *rd);
/* The tier code that holds the function registered as name, or NULL. */
const char *report_tiers_alias(const struct tiers *tt, const char *name);
void report_tiers_free(struct tiers *tt);
/* The compiles' CPU in perf's samples (tools/report/report_tiers_cpu.c):
 * the outermost compiles of the models, by thread and time (0 or
 * -ENOMEM); a sample of pid, tid at time into the one it falls in; the
 * samples into the totals of their tiers, by the kind of thread. */
int report_tiers_spans(struct tiers *tt);
void report_tiers_span_sample(struct tiers *tt, uint32_t pid, uint32_t tid, uint64_t time,
			      uint64_t period);
void report_tiers_span_totals(struct tiers *tt,
			      int (*on_query_thread)(const struct tiers *, uint32_t));
void report_tiers_spans_free(struct tiers *tt);

/* self ms of a row, < 0 unknown */
double report_tier_self_ms(const struct tiers *tt, const struct tier_row *r);
/* ns per call, < 0 none timed */
double report_tier_ns_per_call(const struct tier_row *r);

void report_tiers_print(const struct tiers *tt);

/* The report as one JSON object on stdout (jitperf-report(1)): the table
 * unless tiers_only, the tiers when tt has rows. */
void report_json(const struct table *t, const struct tiers *tt, const char *dir, int tiers_only);

#endif
