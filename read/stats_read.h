/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader of jitperf-<pid>.stats files (format: jitperf-stats(5)), used by
 * jitperf report and the record summary.
 */
#ifndef JITPERF_STATS_READ_H
#define JITPERF_STATS_READ_H

#include <stddef.h>
#include <stdint.h>

#define STATS_NO_VALUE UINT64_MAX   /* shown as "-": no timed call, counter not supported */
#define STATS_ADAPTIVE 0u           /* sample_every: adaptive, timed_per_sec per thread */
#define STATS_NONE     UINT32_MAX   /* sample_every: no call timed */

struct stats_row {
	char     *name;
	uint64_t  calls, timed, unbalanced;
	/* estimated from the timed calls; STATS_NO_VALUE when none was timed */
	uint64_t  total_ns, self_ns, min_ns, mean_ns, max_ns;
	uint64_t *counters;         /* ncounters values, STATS_NO_VALUE if "-" */
};

enum stats_cost { STATS_COST_SELF, STATS_COST_LIB, STATS_COST_INLINE, STATS_COST_TIMED,
		  STATS_COST_FRAMED, STATS_NCOSTS };

struct stats_file {
	uint32_t          version;      /* 1 or 2 */
	uint32_t          pid;
	char              clock[16];
	uint32_t          sample_every; /* about 1 call in N timed; STATS_ADAPTIVE, STATS_NONE */
	uint32_t          timed_per_sec;
	size_t            ncounters;
	char            **counters;     /* names from the column header */
	/* version 2: "# probes:", "# run:" and "# trace:" lines */
	int               has_probes;
	double            probe_ns[STATS_NCOSTS]; /* enum stats_cost: subtracted from timed calls */
	int               has_run;
	uint64_t          calls, lib_calls, inline_calls, framed_calls, timed, cpu_ns;
	double            run_probe_ns; /* what the probes cost the run, estimated */
	int               has_trace;
	uint64_t          trace_max, trace_ring, trace_min_ns, traced;
	uint64_t          dropped_full, dropped_short, dropped_ring;
	size_t            nrows;
	struct stats_row *rows;
};

/*
 * Read one statistics file.  0, or a negative errno with a one-line message
 * in errbuf naming the file and the line.
 */
int stats_read(const char *path, struct stats_file **out, char *errbuf, size_t errlen);
void stats_free(struct stats_file *s);

/* What the statistics files of a recording say of their runs, summed
 * (zero-initialised, then one stats_sum_add per file). */
struct stats_sum {
	size_t   functions;             /* rows */
	int      has_run, has_trace;    /* some file had a "# run:", a "# trace:" line */
	uint64_t calls, timed, cpu_ns;
	double   run_probe_ns;          /* what the probes cost the runs */
	uint64_t traced, dropped_full, dropped_short, dropped_ring;
	uint64_t trace_max, trace_ring, trace_min_ns;   /* the largest */
};
void stats_sum_add(struct stats_sum *sum, const struct stats_file *s);

#endif
