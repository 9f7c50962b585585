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
#include <sys/types.h>
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
	size_t               dumps_copied, maps_copied;
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
/*
 * Without perf.data (record --no-perf): the processes are those whose
 * jitdump, statistics or trace is in dir, each one's perf map brought in
 * as collect_run brings it.  0 or -ENOMEM.
 */
int collect_dir(const char *dir, struct timespec since, struct collect *c);
void collect_free(struct collect *c);

/*
 * A process of the run in a container (its own mount namespace or root:
 * its own /tmp, gone when it ends), watched while it lives: its perf map
 * and the jitdump it maps, opened as it sees them and held open, so that
 * they can be copied after it ended, and after its files are removed
 * (watch.c).
 */
struct collect_held {
	pid_t  pid, nspid;          /* as jitperf and as the process itself know it */
	int    foreign;             /* set once its pid in its namespace is read */
	int    map_fd, dump_fd;     /* -1 until found */
	char  *dump_path;           /* the jitdump's path as the process sees it */
};

struct collect_watch {
	struct collect_held *procs;
	size_t               nprocs;
	struct timespec      since;  /* older files are not the run's */
};

/*
 * Look at pid and every process it started, once: for each one in a
 * container, open what it has written of its perf map and jitdump.  0 or
 * -ENOMEM; a process that ends meanwhile is no error.
 */
int  collect_watch(struct collect_watch *w, pid_t pid);
/*
 * Each held file into dir, as jit-PID.dump and perf-PID.map (pid as
 * perf.data knows the process), where dir has no file of that name: its
 * jitdump written into dir under its own pid is renamed so.  What cannot
 * be is said in one line.  Before inject: it finds them there.
 */
void collect_watch_save(struct collect_watch *w, const char *dir);
void collect_watch_free(struct collect_watch *w);

#endif /* JITPERF_COLLECT_H */
