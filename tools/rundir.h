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

/* 0, or a negative errno (directory unreadable). */
int rundir_scan(const char *dir, struct rundir *rd);
void rundir_free(struct rundir *rd);

/* CODE_LOAD records in all jitdumps; stops at a damaged record (counted so far). */
uint64_t rundir_code_loads(const struct rundir *rd);

/*
 * One jitdump at path, as rundir_trim_dumps treats each: cut to its
 * records if its process is gone and the file ends in zeros or in a record
 * with an id and size of zero (a writer that stored into a mapping of the
 * file; libjitperf writes whole records).  -1 when path is not a jitdump
 * it can read.
 */
struct rundir_fix {
	int   dump_cut;         /* path was cut to its records */
	pid_t pid;              /* the writer: jit-PID.dump's PID, else the header's */
	int   gone;             /* ... is no longer running */
};
int rundir_fix_dump(const char *path, struct rundir_fix *fx);

/*
 * The jitdumps of DIR whose process is gone, each cut so that it ends on
 * its last record (see rundir_fix_dump).  A process still running keeps
 * its file untouched: it may still write.  Returns how many files were cut.
 */
size_t rundir_trim_dumps(const struct rundir *rd);

/*
 * The same for a perf map at path (a copy: no process writes it): a map
 * written through a mapping of the file may end with its last line
 * followed by zeros, or with no newline.  Cut at the first NUL and end
 * the last line; 1 if changed.
 */
int rundir_trim_map(const char *path);

#endif
