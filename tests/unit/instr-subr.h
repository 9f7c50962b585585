/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the instrumentation Check suites. */
#ifndef JITPERF_TESTS_INSTR_SUBR_H
#define JITPERF_TESTS_INSTR_SUBR_H

#include <stdint.h>
#include <sys/types.h>

#include "jitperf.h"
#include "read/trace_read.h"
#include "tests/check-subr.h"


/* Open a session writing outputs into dir; aborts the test on error. */
jitperf *instr_open(const char *dir, unsigned outputs, unsigned sample_every,
		    const char *counters);

/* The same with every option given (size and dir are filled in). */
jitperf *instr_open_opts(const char *dir, struct jitperf_options *o);

/* One row of <dir>/jitperf-<pid>.stats. */
struct instr_row {
	char     name[256];
	uint64_t calls, timed, total, self, min, mean, max, unbalanced;
	int      timing;                  /* the time columns are not "-" */
	char     ctr[8][32];              /* counter columns as text ("-" = unsupported) */
	int      nctr;
};
/* The row of function name; returns 0, or -1 if there is no such row. */
int instr_stats_row(const char *dir, pid_t pid, const char *name, struct instr_row *row);
/* Whole stats file as text (malloc'ed) or NULL. */
char *instr_slurp(const char *path);

/* Traced calls of function name (all threads), or -1 if the trace is unreadable. */
long instr_trace_calls(const char *dir, pid_t pid, const char *name);
/* Open <dir>/jitperf-<pid>.trace; aborts the test on error. */
struct jpt_reader *instr_trace_open(const char *dir, pid_t pid);

#endif
