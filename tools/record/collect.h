/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `jitperf record` gathers into the record directory after the run, so
 * the recording is complete on its own (after /tmp is cleaned, or on
 * another machine): the jitdump of every process wherever its emitter put
 * it (perf's mmap records name the file: the marker every jitdump writer
 * maps), the tiers file beside it (jitperf-tiers(5)), the ELF images perf
 * inject made of it, and the perf map /tmp/perf-<pid>.map of every process
 * of the run.
 */
#ifndef JITPERF_COLLECT_H
#define JITPERF_COLLECT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* One process of the run that left JIT code behind. */
struct collect_proc {
	uint32_t pid;
	char     comm[32];          /* its command name, as perf recorded it last */
	int      has_dump, has_map; /* DIR/jit-<pid>.dump, DIR/perf-<pid>.map */
	uint64_t loads;             /* CODE_LOAD records of its jitdump */
	size_t   syms;              /* functions its perf map names */
};

struct collect {
	struct collect_proc *procs;
	size_t               nprocs;
	size_t               dumps_copied, maps_copied, images_moved;
	size_t               removed;  /* of the files copied, those removed where they were */
	int                  read;     /* perf.data was read whole */
	uint64_t             samples;  /* its PERF_RECORD_SAMPLE records */
};

/*
 * Read perfdata (the run's perf.data, read/perfdata.h) for the run's
 * processes, their jitdumps and its samples, and bring what lies outside
 * dir into it.  since: when the run began; older files belong to earlier
 * processes of the same pid.  What cannot be copied is said in one line
 * each (cmd_err) and skipped.  A file copied is removed where it was once
 * the copy is safe: its process has ended, the file is this user's and
 * was copied whole; a file of a process still running (record -p) stays.  0 or -ENOMEM; another negative errno when
 * perfdata cannot be read, said in one line naming the file and where.
 */
int collect_run(const char *dir, const char *perfdata, struct timespec since,
		struct collect *c);
void collect_free(struct collect *c);

#endif /* JITPERF_COLLECT_H */
