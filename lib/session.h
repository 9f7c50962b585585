/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The session object and the hooks between the library's parts.  Internal.
 *
 * lib/session.c (open/close/default/env), lib/perfmap.c and lib/jitdump.c
 * own the code-registration side; lib/instr/instrument.c and the files beside it
 * own the instrumentation side (probes, trace, statistics, counters, wrap)
 * and keep their state behind jp->instr.
 */
#ifndef JITPERF_SESSION_H
#define JITPERF_SESSION_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "jitperf.h"
#include "lib/compiler.h"
#include "format/trace.h"   /* enum jpt_code_kind */


struct jp_perfmap;
struct jp_jitdump;
struct jp_instr;
struct jp_codetab;
struct jp_tiers;

struct jitperf {
	unsigned            outputs;       /* JITPERF_* bits in force */
	char               *dir;           /* output directory (malloc'ed) */
	unsigned            sample_every;  /* N >= 1, JITPERF_SAMPLE_ADAPTIVE or _NONE */
	char               *counters;      /* malloc'ed copy, or NULL */
	pid_t               pid;           /* pid the files were opened for */
	pthread_mutex_t     lock;          /* serialises code registration records */
	struct jp_perfmap  *perfmap;
	struct jp_jitdump  *jitdump;
	struct jp_instr    *instr;         /* owned by lib/instr/instrument.c */
	char               *clock;         /* $JITPERF_CLOCK ("tsc"/"monotonic") or NULL */
	int                 debug;         /* $JITPERF_DEBUG set: explain errors on stderr */
	int                 is_default;    /* static storage of jitperf_default(): never freed */
	int                 closed;        /* jitperf_close ran (the default session stays readable) */
	struct jp_codetab  *codes;         /* index -> addr/len/name, for move/unload (lib/codetab.c) */
	struct jitperf     *next_open;     /* list of open sessions, for fork (lib/session.c) */
	uint64_t            opened_ns;     /* standby: when it opened, the jitdump header's time */
	struct jp_tiers    *tiers;         /* tiers and compiles (lib/tiers.c), made at first use */
	int                 tier_tags;     /* code of a compile is named func[tag] (1) or func (0) */
	/* instrumentation settings, resolved by jp_instr_setup */
	unsigned            timed_per_sec; /* adaptive sampling budget */
	uint64_t            trace_max;     /* bytes; JITPERF_UNLIMITED: none of its own */
	uint64_t            trace_ring;    /* bytes per thread, 0: off */
	uint64_t            trace_min_ns;
};

/* CLOCK_MONOTONIC in ns: the timeline of perf record -k 1. */
JP_HIDDEN uint64_t jp_monotonic_ns(void);

/*
 * The instrumentation settings of jp (sample_every, timed_per_sec,
 * trace_*) from the options, else from the environment (JITPERF_SAMPLE,
 * JITPERF_TRACE_MAX, JITPERF_TRACE_RING, JITPERF_TRACE_MIN), else the
 * defaults; lib/instr/settings.c.  0 or -EINVAL.
 */
JP_HIDDEN int jp_instr_setup(struct jitperf *jp, const struct jitperf_options *o);

/*
 * Instrumentation hooks, implemented in lib/instr/instrument.c, called by
 * lib/session.c with jp fully set up (outputs, dir, sample_every, counters).
 *  - jp_instr_open: after the perf map and jitdump are open; returns 0 or -errno.
 *  - jp_instr_close: flush the trace, write statistics; before CODE_CLOSE.
 *  - jp_instr_atfork_prepare/_parent: around fork() in the parent, the
 *    session's lock held: our threads are stopped across it, so no child
 *    inherits one mid-way (holding a lock of libc or of a sanitizer).
 *  - jp_instr_atfork_child: in a child after fork(), once the session has
 *    reopened its own perf map and jitdump under the child's pid.
 *  - jp_instr_code_event: every successful code load/move/unload, so the
 *    trace can put it on the timeline (kind: 0 load, 1 move, 2 unload).
 */
JP_HIDDEN int  jp_instr_open(struct jitperf *jp);
JP_HIDDEN int  jp_instr_close(struct jitperf *jp);
JP_HIDDEN void jp_instr_atfork_prepare(struct jitperf *jp);
JP_HIDDEN void jp_instr_atfork_parent(struct jitperf *jp);
JP_HIDDEN void jp_instr_atfork_child(struct jitperf *jp);
JP_HIDDEN void jp_instr_code_event(struct jitperf *jp, enum jpt_code_kind kind, uint64_t index,
				   uint64_t addr, uint64_t len, const char *name);

#endif /* JITPERF_SESSION_H */
