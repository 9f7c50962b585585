/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a `jitperf record` directory holds (shared by record and report). */
#ifndef JITPERF_RUNDIR_H
#define JITPERF_RUNDIR_H

#include <stddef.h>
#include <stdint.h>

struct rundir {
	char  **dumps;     /* DIR/jit-<pid>.dump, sorted */
	size_t  ndumps;
	char  **stats;     /* DIR/jitperf-<pid>.stats */
	size_t  nstats;
	char  **traces;    /* DIR/jitperf-<pid>.trace */
	size_t  ntraces;
	int     has_perf_data, has_jit_data;   /* perf.data, perf.jit.data */
};

/* 0, or a negative errno (directory unreadable). */
int rundir_scan(const char *dir, struct rundir *rd);
void rundir_free(struct rundir *rd);

/* CODE_LOAD records in all jitdumps; stops at a damaged record (counted so far). */
uint64_t rundir_code_loads(const struct rundir *rd);

/*
 * Cut the zero-filled tail off the jitdumps of DIR whose process is gone
 * (killed before libjitperf closed the file: it was written through a
 * shared mapping, grown ahead), so the file ends on its last record.  A
 * process still running keeps its file untouched: it may still write.
 * Returns how many files were cut.
 */
size_t rundir_trim_dumps(const struct rundir *rd);

/*
 * PERF_RECORD_SAMPLE records in a perf.data file, read from its headers
 * without perf.  0, or a negative errno (not a perf.data file we can walk).
 */
int perfdata_samples(const char *path, uint64_t *n);

#endif
