/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a `jitperf record` directory holds (shared by record and report). */
#ifndef JITPERF_RUNDIR_H
#define JITPERF_RUNDIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rundir {
	char  **dumps;     /* DIR/jit-<pid>.dump, sorted */
	size_t  ndumps;
	char  **stats;     /* DIR/jitperf-<pid>.stats */
	size_t  nstats;
	char  **traces;    /* DIR/jitperf-<pid>.trace */
	size_t  ntraces;
	char  **maps;      /* DIR/perf-<pid>.map: copies of the run's perf maps */
	size_t  nmaps;
	int     has_perf_data, has_jit_data;   /* perf.data, perf.jit.data */
};

/*
 * 0, or a negative errno (directory unreadable).  A perf.jit.data that
 * does not open as a perf.data while a perf.data is there counts as
 * absent, said in one line (cmd_err): the readers fall back to perf.data.
 */
int rundir_scan(const char *dir, struct rundir *rd);
void rundir_free(struct rundir *rd);

/* CODE_LOAD records in all jitdumps; stops at a damaged record (counted so far). */
uint64_t rundir_code_loads(const struct rundir *rd);

#endif
