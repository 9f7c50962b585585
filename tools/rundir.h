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
 * A perf map or jitdump at path that libjitperf was writing when its
 * process was killed: the records its ring (<path>.ring) still held are
 * put in, the file cut to its records, the ring removed (ring_recover).
 * A running process's file is left alone; a ring that is not what it
 * should be is reported in one line and left.  1 if records were put in.
 */
int rundir_recover(const char *path);

/*
 * One jitdump at path, as rundir_trim_dumps treats each: its ring put in,
 * cut to its records if its process is gone, and the ring of that
 * process's perf map put in.  -1 when path is not a jitdump it can read
 * (its ring was still tried).
 */
struct rundir_fix {
	int   dump_put;         /* records from path's ring were put in */
	int   dump_cut;         /* path was cut to its records */
	pid_t pid;              /* the writer, from the header */
	int   gone;             /* ... is no longer running */
	char  map[64];          /* /tmp/perf-<pid>.map */
	int   map_put;          /* records from its ring were put in */
};
int rundir_fix_dump(const char *path, struct rundir_fix *fx);

/*
 * The jitdumps of DIR whose process is gone (killed before libjitperf
 * closed the file): the records of their rings put in (rundir_recover),
 * as are those of the same processes' /tmp/perf-<pid>.map, and the
 * zero-filled tail they were grown with cut off, so each file ends on its
 * last record.  A process still running keeps its file untouched:
 * it may still write.  Returns how many files were cut.
 */
size_t rundir_trim_dumps(const struct rundir *rd);

/*
 * The same for a perf map at path (a copy: no process writes it): a map
 * libjitperf wrote ends, until it is closed, with its last line followed
 * by zeros, or with no newline.  Cut at the first NUL and end the last
 * line; 1 if changed.
 */
int rundir_trim_map(const char *path);

#endif
