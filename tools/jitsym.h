/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JIT code among the frames perf reports, whoever emitted it (libjitperf,
 * V8, the JVM, CPython, .NET, ...), and the name of each function.
 *
 * perf shows JIT code in two kinds of objects:
 *  - jitted-<pid>-<n>.so, the ELF image `perf inject --jit` made of the
 *    CODE_LOAD with code index <n> of jit-<pid>.dump;
 *  - /tmp/perf-<pid>.map ("[JIT] tid <pid>" in perf report): anonymous
 *    executable memory, named by the process's perf map when it has one.
 * A record directory holds copies of both sources (jit-<pid>.dump,
 * perf-<pid>.map), so a frame is named from the recording itself: a perf
 * map frame by the directory's copy first (the /tmp file perf read may since
 * belong to another process of the same pid, or be gone), then by perf's
 * name; a jitted image by perf's name, else by the code index in the
 * directory's jitdump (the image gone and not in perf's build-id cache).
 */
#ifndef JITPERF_JITSYM_H
#define JITPERF_JITSYM_H

#include <stdint.h>

struct jitsym;

/* dir: the record directory holding the copies, or NULL.  0 or -ENOMEM. */
int jitsym_new(struct jitsym **out, const char *dir);
void jitsym_free(struct jitsym *js);

/*
 * One frame as perf names it: its object (a path, a base name, or perf
 * report's "[JIT] tid <pid>"), its symbol ("[unknown]" or an address
 * "0x..." when perf has none) and its address (absolute for a perf map).
 * 1 if it is JIT code, with *name its function's name or NULL when neither
 * perf nor the recording names it; 0 if it is not JIT code; -ENOMEM.
 * *name lives as long as js.
 */
int jitsym_frame(struct jitsym *js, const char *dso, const char *sym, uint64_t ip,
		 const char **name);

/* The pid of a JIT object's name ("jitted-PID-N.so", "perf-PID.map", "[JIT] tid PID"), else 0. */
uint32_t jitsym_dso_pid(const char *dso);

#endif /* JITPERF_JITSYM_H */
