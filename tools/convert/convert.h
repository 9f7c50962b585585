/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `jitperf convert`: inputs (perf script text, perf.data through perf script,
 * traces, jitdumps) are read once and every event is handed to each output
 * writer through one small callback table, as uftrace's dump ops do.
 */
#ifndef JITPERF_CONVERT_H
#define JITPERF_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "cvtiers.h"
#include "outfile.h"
#include "read/perfscript.h"
#include "read/trace_read.h"

enum cv_source { CV_SAMPLES, CV_CALLS };

struct cv_opts {
	unsigned       ps_flags;    /* PS_PID, PS_TID, ... (root and frame names) */
	enum cv_source source;      /* what folded and SVG stacks are made of */
	int            has_calls;   /* the input has instrumented calls */
	const char    *title;       /* SVG title */
	/* Chrome trace size: at most max_bytes (0 = no cap), calls shorter than
	 * min_call_ns left out (chosen by tools/convert/chrome_budget.c) */
	uint64_t       chrome_max_bytes;
	uint64_t       chrome_min_call_ns;
	/* the input's tiers files (never NULL; empty without them), and
	 * --merge-tiers: frames of tier code named func, not func[tag] */
	const struct cv_tiers *tiers;
	int            merge_tiers;
};

/* One instrumented call (from a trace), names already resolved. */
struct cv_call {
	uint32_t           input;      /* which trace of the conversion: ids are per trace */
	uint32_t           pid, tid;
	const char        *thread;     /* thread name, "" if unknown */
	uint64_t           start_ns, end_ns, self_ns;
	/*
	 * For stacks (folded, SVG, pprof; set when a writer asked for them):
	 * the calls this traced call stands for (its function's exact count
	 * shared out over its traced calls, 1 without statistics), and what it
	 * adds to its stack's estimated self time.  A call adds its estimated
	 * time to its own stack and a correction (est_ns < 0, calls 0, the
	 * stack of its caller) takes it from its caller's: a stack's sum is its
	 * calls' time less their callees', which may come out below zero, and
	 * writers then show 0.
	 */
	uint64_t           calls;
	int64_t            est_ns;
	int                correction; /* only the caller's share: no call of its own */
	size_t             depth;      /* stack[depth] is this call */
	const char *const *stack;      /* function names, root first */
	uint32_t           path;       /* its stack of function ids, numbered in its
					  input (tools/convert/callpath.h); 0: none
					  (no writer asked for stacks) */
	size_t             ncounters;
	const char *const *counter_names;
	const uint64_t    *counters;
};

/* A JIT code load (or move/unload) for the timeline. */
struct cv_code {
	enum jpt_code_kind kind;
	uint32_t    pid, tid;
	uint64_t    ts_ns;
	uint64_t    addr, len, index;
	const char *name;
};

struct cv_thread {
	uint32_t    pid, tid;
	const char *name;
};

/* What a writer needs from the input (struct cv_ops.flags). */
enum cv_writer_flags {
	CV_CALL_STACKS = 1u << 0,   /* instrumented calls with every frame's name, not
				       only their own (stacks, rather than slices) */
	CV_ALWAYS_CALL_STACKS = 1u << 1,  /* ... whatever --source says */
	CV_RAW_FRAMES = 1u << 2,    /* perf.data samples with their places unfolded (PS_RAW) */
	CV_CALL_BOUND = 1u << 3,    /* writes calls within --chrome-max: those shorter
				       than cv_opts.chrome_min_call_ns are left out */
	CV_STACKS_ONLY = 1u << 4,   /* made of stacks alone: an input without stacks of
				       the source chosen is an error, not an empty file */
	CV_DEFAULT = 1u << 5,       /* the output, to standard output, when none is asked */
};

/* One output format: its option name, what it needs, and its callbacks. */
struct cv_ops {
	const char *what;              /* --WHAT FILE */
	unsigned    flags;             /* enum cv_writer_flags */
	void *(*begin)(struct outfile *out, const struct cv_opts *o);  /* NULL = ENOMEM */
	int   (*sample)(void *w, const struct ps_sample *s);
	int   (*call)(void *w, const struct cv_call *c);
	int   (*code)(void *w, const struct cv_code *c);
	int   (*thread)(void *w, const struct cv_thread *t);
	/*
	 * Optional, for reading in parallel: a state that takes the samples of
	 * another thread (NULL = ENOMEM), merged into w (and freed) once read,
	 * or dropped.  Only writers that add samples up, in any order, have it.
	 */
	void *(*fork)(void *w);
	int   (*merge)(void *w, void *part);
	void  (*drop)(void *part);
	int   (*end)(void *w);         /* write the rest; 0 or -errno */
	void  (*free)(void *w);
};

extern const struct cv_ops cv_folded_ops;
extern const struct cv_ops cv_svg_ops;
extern const struct cv_ops cv_chrome_ops;

/* Every writer, in the order of --help; NULL-terminated (tools/convert/convert.c). */
extern const struct cv_ops cv_pprof_ops;
extern const struct cv_ops *const cv_writers[];

#endif /* JITPERF_CONVERT_H */
