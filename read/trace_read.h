/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader of jitperf-<pid>.trace files (format: man/jitperf-trace.5).
 * Internal: built into the convenience library libjitperf-read.la that the
 * tools and tests link; not part of libjitperf.so.
 */
#ifndef JITPERF_TRACE_READ_H
#define JITPERF_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "format/trace.h"   /* enum jpt_code_kind */

struct jpt_reader;

struct jpt_info {
	uint32_t           version;       /* format version of the file */
	uint32_t           pid;
	const char        *clock;         /* "tsc" or "monotonic": what the probes read */
	uint64_t           start_ns;      /* CLOCK_MONOTONIC ns at session open */
	size_t             ncounters;
	const char *const *counter_names; /* ncounters names, as requested */
	uint32_t           sample_every;  /* about 1 call in N timed and traced (1 = every
					     call); 0 = adaptive, UINT32_MAX = none */
	uint32_t           timed_per_sec; /* adaptive: the budget per thread */
	int                truncated;     /* 1 if the file ended inside a block (killed writer) */
	int                closed;        /* the writer closed it: the counts below are set */
	uint64_t           max_bytes;     /* the file's size limit (0: version 1, none) */
	uint64_t           ring_bytes;    /* per-thread ring, 0 = off */
	uint64_t           min_ns;        /* timed calls shorter than this were not written */
	double             probe_ns[5];   /* calibration: enum jpt_probe_cost (ns) */
	uint64_t           calls, timed;  /* closed: calls counted and timed, all threads */
	uint64_t           dropped_full;  /* closed: timed calls not written, file full */
	uint64_t           dropped_short; /* closed: ... shorter than min_ns */
	uint64_t           dropped_ring;  /* closed: calls written, then overwritten */
	uint64_t           ring_blocks;   /* blocks the rings had overwritten (seen by the reader) */
};

struct jpt_fn {
	uint32_t    id;                   /* jitperf_fn value; 1-based */
	uint64_t    addr;
	uint64_t    len;
	const char *name;                 /* never NULL */
};

struct jpt_thread {
	uint32_t    tid;
	const char *name;                 /* "" if unknown */
};

/*
 * One completed call, delivered when its exit is read.  With sampling its
 * callers need not be traced: stack still names them (the writer records
 * the untraced calls between traced ones), with id 0 for callers it did
 * not list (deeper than it lists) and one id 0 where callers that were
 * only counted, never seen by the writer, may lie (generated code using
 * jitperf__enter_framed).
 */
struct jpt_call {
	uint32_t        tid;
	uint32_t        fn;               /* id into the function table */
	uint32_t        depth;            /* 0 = root of this thread's call tree */
	uint64_t        start_ns;         /* CLOCK_MONOTONIC ns (same timeline as perf record -k 1) */
	uint64_t        end_ns;
	uint64_t        self_ns;          /* end - start minus the time of traced callees */
	const uint64_t *counters;         /* ncounters deltas (NULL if ncounters == 0) */
	const uint32_t *stack;            /* depth + 1 fn ids, root first, this call last */
	uint32_t        traced_depth;     /* traced calls below it on the stack */
	/*
	 * stack[0 .. same_below) are the ids the previous call of this walk
	 * had there, in the same thread (0 for a thread's first call): a
	 * reader that keeps something per stack position redoes only the
	 * rest.  It may be depth + 1: a caller ends after its callees.
	 */
	uint32_t        same_below;
};

/*
 * Open and validate a trace.  On error returns a negative errno and, if
 * errbuf is not NULL, a one-line message naming path and the byte offset.
 */
int jpt_open(struct jpt_reader **out, const char *path, char *errbuf, size_t errlen);
void jpt_close(struct jpt_reader *r);

const struct jpt_info   *jpt_info(const struct jpt_reader *r);
size_t                   jpt_nfns(const struct jpt_reader *r);
const struct jpt_fn     *jpt_fn(const struct jpt_reader *r, uint32_t id);   /* NULL if unknown */
size_t                   jpt_nthreads(const struct jpt_reader *r);
const struct jpt_thread *jpt_thread(const struct jpt_reader *r, size_t i);

/*
 * Call cb for every completed call, thread by thread, in exit order within
 * a thread.  cb returning non-zero stops the walk and is returned.  Returns
 * 0, or a negative errno with errbuf filled (corrupt block: offset named).
 * In a ring-mode trace whose rings wrapped, the exits of calls entered in
 * overwritten blocks are skipped.
 */
int jpt_for_each_call(struct jpt_reader *r,
		      int (*cb)(const struct jpt_call *call, void *arg), void *arg,
		      char *errbuf, size_t errlen);

/* A code load, move or unload that the session saw (for the timeline). */
struct jpt_code {
	enum jpt_code_kind kind;
	uint64_t    ts_ns;                /* CLOCK_MONOTONIC ns */
	uint32_t    tid;
	uint64_t    index;                /* code index (as in the jitdump) */
	uint64_t    addr;
	uint64_t    len;
	const char *name;
};

/* Call cb for every code event in time order; as jpt_for_each_call. */
int jpt_for_each_code(struct jpt_reader *r,
		      int (*cb)(const struct jpt_code *code, void *arg), void *arg,
		      char *errbuf, size_t errlen);

#endif /* JITPERF_TRACE_READ_H */
