/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * State shared by the files of the instrumentation runtime.  Internal.
 *
 * The files are layers; each calls only into its own layer and those
 * below (doc/probes.md, "Layers"; tests/lib/layers.test checks it):
 *   1. tsc.c, counters.c       clock, process CPU time, perf counters
 *   2. stats.c                 a thread's figures, totals, statistics file
 *   3. trace_write.c, trace_put.h  the trace file
 *   4. timed.c, timed.h        sampling, timed calls' entry and exit
 *   5. probe.c                 counting and slow paths, threads, jp_cur
 *                              and the active lock
 *   6. calibrate.c             measures the probes at activation
 *   7. instrument.c, settings.c  a session's function table, activation,
 *                              close, fork; its settings
 *   8. lib/session.c, lib/codereg.c, wrap.c (+ arch/)  the entry points
 * What a lower layer needs from above is handed to it as data (struct
 * jp_thread, struct jp_instr), never reached by a call up.
 *
 * Two paths serve every call:
 *  - the counting path (jitperf.h's inline code, jitperf_enter/exit, and
 *    generated code that does the same): bump the thread's counter of the
 *    function and push or pop its id on the thread's stack (struct
 *    jitperf__tls).  No clock, no branch taken.
 *  - the slow path (probe.c, with timed.h inline for the calls sampling picks):
 *    a thread's first call, a call to time, a mismatched exit.  It reads
 *    the clock, keeps per-function statistics, writes the trace.
 * Everything a thread touches is its own: struct jp_thread and the arrays
 * of jitperf__tls are made at the thread's first call, kept for the
 * thread's life and reused by later sessions; a session only links the
 * threads that called into it (and frees those that exited).
 */
#ifndef JITPERF_INSTR_PRIV_H
#define JITPERF_INSTR_PRIV_H

#include <pthread.h>
#include <stdint.h>

#include "instrument.h"
#include "format/trace.h"

#define JP_FN_CHUNK      1024u          /* statistics grow by chunks ... */
#define JP_FN_CHUNKS     (JITPERF__FN_LIMIT / JP_FN_CHUNK)  /* ... of which there are this many */
#define JP_FN_MAX        (JITPERF__FN_LIMIT - 1)
#define JP_STACK_MAX     JITPERF__STACK_MAX
#define JP_ID(entry)     ((entry) & ~(JITPERF__TIMED | JITPERF__FRAMED))
#define JP_DEFAULT_RATE  10000u         /* adaptive: timed calls per second per thread */
#define JP_DEFAULT_TRACE_MAX (UINT64_C(32) << 20)

/* ---- clock (tsc.c) */
/* probes read the CPU's counter (x86-64: the TSC; AArch64: CNTVCT_EL0)
 * instead of CLOCK_MONOTONIC */
extern int jp_clock_is_tsc JP_HIDDEN;

static inline __attribute__((always_inline, no_instrument_function))
uint64_t jp_ticks(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(jp_clock_is_tsc, 1)) {
		uint32_t lo, hi;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#elif defined(__aarch64__)
	if (__builtin_expect(jp_clock_is_tsc, 1)) {
		uint64_t v;
		/* isb: not read ahead of the instructions before it, as rdtsc is not */
		__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
		return v;
	}
#endif
	return jp_monotonic_ns();
}

/* Choose the clock from want ("tsc", "monotonic" or NULL = best); 0 or -EINVAL. */
JP_HIDDEN int jp_clock_setup(const char *want, int debug) JP_NOINSTR;
/* A (tick, CLOCK_MONOTONIC ns) pair read as close together as possible. */
JP_HIDDEN void jp_clock_pair(uint64_t *tick, uint64_t *ns) JP_NOINSTR;
/* Ticks per second of the chosen clock, measured over a couple of ms for TSC. */
JP_HIDDEN uint64_t jp_clock_measure_hz(void) JP_NOINSTR;
/* CPU time of the whole process (all its threads), ns; 0 if unknown. */
JP_HIDDEN uint64_t jp_clock_cpu_ns(void) JP_NOINSTR;

/* ---- counters (counters.c) */
struct jp_counter_set {                 /* what the session asked for and got */
	unsigned    n;                      /* requested names (<= JPT_MAX_COUNTERS) */
	char       *names[JPT_MAX_COUNTERS];
	uint32_t    type[JPT_MAX_COUNTERS];
	uint64_t    config[JPT_MAX_COUNTERS];
	int         ok[JPT_MAX_COUNTERS];   /* opened fine in the session's thread */
	char        why[JPT_MAX_COUNTERS][96]; /* reason when !ok */
	int         exclude_kernel;         /* needed under perf_event_paranoid >= 2 */
};

struct jp_thread_counters {              /* one perf_event_open group per thread */
	int         gen;                    /* set's generation they were opened for */
	int         leader;                 /* group leader fd, -1 if none */
	int         fd[JPT_MAX_COUNTERS];   /* -1 for unsupported ones */
	void       *page[JPT_MAX_COUNTERS]; /* mmapped user page (rdpmc) or NULL */
	unsigned    slot[JPT_MAX_COUNTERS]; /* position in the group read */
	unsigned    nopen;
};

JP_HIDDEN int  jp_counters_parse(struct jp_counter_set *cs, const char *list, int debug) JP_NOINSTR;
JP_HIDDEN void jp_counters_free(struct jp_counter_set *cs) JP_NOINSTR;
JP_HIDDEN void jp_counters_thread_open(const struct jp_counter_set *cs,
				       struct jp_thread_counters *tc) JP_NOINSTR;
JP_HIDDEN void jp_counters_read(const struct jp_counter_set *cs,
				struct jp_thread_counters *tc, uint64_t *out) JP_NOINSTR;
JP_HIDDEN void jp_counters_thread_close(struct jp_thread_counters *tc) JP_NOINSTR;

/* ---- per-function statistics of one thread: timed calls only (timed.c) */
enum jp_sample_mode { JP_SAMPLE_FIXED = 0, JP_SAMPLE_ADAPTIVE = 1, JP_SAMPLE_NONE = 2 };

#define JP_WINDOW 16                     /* sampled timed calls per estimate */
#define JP_NO_CALLER UINT32_MAX             /* a timed call's caller is not known */

struct jp_fstat {
	uint64_t timed;                         /* timed calls */
	uint64_t unbalanced;                    /* repairs (timed or not) */
	uint64_t min, max;                      /* ticks, net of the probes' cost */
	double   w;                             /* calls the timed ones stand for */
	double   total;                         /* sum of duration x weight (ticks) */
	double   child;                         /* the same for timed calls made from here */
	double   inside;                        /* the same for the probes subtracted inside */
	/* Timed calls that stand for others (weight > 1) go into a window;
	 * a full window adds the mean of its middle half x its weight to w and
	 * total (stats.c). */
	float    win[JP_WINDOW];                /* their durations (ticks) */
	float    win_wt[JP_WINDOW];             /* the calls each stands for */
	uint32_t win_caller[JP_WINDOW];         /* its caller's id, or JP_NO_CALLER */
	uint32_t nwin;
	double   win_w;                         /* the calls they stand for */
	/* the closed windows, for the estimate's error: sums of W, W m, W m^2
	 * and W s over windows of weight W, middle mean m, spread s */
	double   ws, wm, wm2, wsd;
	uint64_t windows, win_timed;            /* closed windows, the timed calls in them */
	double   ctr[JPT_MAX_COUNTERS];         /* sum of counter delta x weight */
	/* sampling */
	uint64_t last_n;                        /* the function's count at its last timed call */
	uint64_t last_tick;                     /* and its time (adaptive) */
	uint64_t interval;                      /* mean calls between timed ones */
	uint64_t framed;                        /* timed calls through jitperf__enter_framed */
};

/* An open timed call. */
struct jp_frame {
	uint32_t fn;
	uint32_t sdepth;                        /* its index on jitperf__tls.stack */
	uint16_t written;                       /* its entry is in the trace */
	uint16_t framed;                        /* jitperf__enter_framed: callers unknown */
	uint32_t reserved;
	uint64_t start;                         /* ticks */
	uint64_t lib0, inl0, frm0, timed0;      /* the thread's counts at entry */
	double   w;                             /* weight of this sample */
	uint64_t ctr[JPT_MAX_COUNTERS];         /* counter values at entry */
};

/* Costs of the probes in ticks (calibrate.c), as enum jpt_probe_cost;
 * c[JPT_COST_SELF] is the part between the clock reads the trace keeps,
 * net_self the part net durations are lowered by (without the entry's
 * trace event when statistics are on too: timed.h). */
struct jp_costs {
	double c[JPT_NCOSTS];
	double net_self;
};

/* ---- threads (probe.c) */
struct jp_thread {
	volatile int        busy;               /* slow paths running (nesting); close waits for 0 */
	uint32_t            ntimed;             /* open timed calls */
	struct jp_frame    *frames;             /* JP_STACK_MAX (mmap) */
	struct jp_instr    *in;                 /* session of generation gen */
	unsigned            gen;
	uint32_t            nfns;               /* ids up to this are known to be valid */
	/* copies of the session's settings */
	uint8_t             stats_on, trace_on, nctr, mode;
	uint8_t             net_on;             /* timed calls need their net duration */
	uint8_t             calibrating;        /* fn 0 is timed, nothing recorded */
	uint64_t            cal_raw;            /* calibrating: the last timed call's ticks */
	uint64_t            cal_write;          /* ... and its entry's trace event's */
	uint32_t            event_size;         /* bytes per entry/exit event */
	uint64_t            every;              /* JP_SAMPLE_FIXED: mean interval */
	uint64_t            min_ticks;          /* shorter timed calls are not traced */
	/* adaptive sampling: one timed call per period per function, period
	 * adjusted every epoch to the budget */
	double              period;             /* ticks */
	uint64_t            epoch_start, epoch_timed, epoch_len, epoch_budget;
	uint64_t            rng;
	uint64_t            timed_calls;        /* this thread's timed calls */
	uint64_t            traced;             /* ... and those written to the trace */
	uint64_t            drop_full, drop_short, drop_ring;
	/* trace window: the current block of the shared file mapping */
	struct jpt_block_header *blk;
	char               *pos, *end;
	uint64_t            last_tick;
	uint32_t            blkseq;
	uint32_t            blk_calls;          /* entries written in blk */
	int                 trace_full;         /* no more blocks: stop writing */
	uint32_t            meta_fns;           /* ids up to this have their name in the file */
	uint64_t           *ring;               /* ring mode: block indexes, oldest at ring_cur */
	uint32_t           *ring_calls;         /* entries written in each */
	uint32_t            nring, ring_max, ring_cur, ring_slot;
	/* the arrays of jitperf__tls, owned here */
	uint32_t           *stack;
	struct jitperf__count *count;
	struct jitperf__tls *tls;               /* the thread's, while it lives */
	uint64_t            lib_calls, inline_calls, framed_calls;  /* its counts when it exited */
	/* the session's list of threads */
	struct jp_thread   *next;
	uint32_t            serial;             /* 0-based, per trace file: set at its first block */
	uint32_t            tid;
	volatile int        dead;               /* exited: the session frees it */
	struct jp_thread_counters ctrs;
	char                name[16];
	struct jp_fstat    *stats[JP_FN_CHUNKS];/* chunks of JP_FN_CHUNK, mmapped on demand */
};

/* ---- trace file (trace_write.c) */
struct jp_trace {
	int                 fd;
	char               *path;
	char               *map;                /* MAP_SHARED reservation of the file */
	size_t              map_len;
	uint32_t            block_size;
	uint64_t            max_blocks;         /* events and metadata may use this many */
	uint64_t            next_block;         /* atomic: blocks claimed */
	uint64_t            file_blocks;        /* blocks the file holds (under grow_lock) */
	pthread_mutex_t     grow_lock;
	struct jpt_block_header *meta;          /* current metadata block (under in->lock) */
	uint32_t            meta_seq;
	uint32_t            meta_fns;           /* ids up to this have their FN record */
	size_t              event_size;         /* 8 + 8 * ncounters */
	/* The filler thread keeps the blocks after next_block in the file and
	 * their pages mapped writable, so probes do not take page faults. */
	pthread_t           filler;
	int                 filler_on;          /* thread running (not in a fork child) */
	uint64_t            ready;              /* atomic: blocks below this are populated */
	int                 wake;               /* futex word: stop or work to do */
	int                 idle;               /* atomic: filler sleeps long, wake it */
	int                 stop;
};

/* ---- the instrumentation state of a session (instrument.c) */

struct jp_instr {
	struct jitperf     *jp;
	pthread_mutex_t     lock;               /* function table, trace metadata */
	unsigned            gen;                /* probe generation this state answers to */
	int                 active;             /* probes record into this session */
	int                 tracing;            /* JITPERF_TRACE */
	int                 stats;              /* JITPERF_STATS */
	int                 debug;
	int                 mode;               /* enum jp_sample_mode */
	unsigned            every;              /* JP_SAMPLE_FIXED */
	unsigned            rate;               /* JP_SAMPLE_ADAPTIVE: timed calls/s/thread */
	uint64_t            trace_max, trace_ring, trace_min_ns;
	struct jp_fnent {
		char    *name;
		uint64_t addr, len;
	}                  *fns[JP_FN_CHUNKS];
	uint32_t            nfns;               /* atomic, release after the entry is filled */
	struct jp_thread   *threads;            /* atomic list head */
	uint32_t            nthreads;           /* atomic: next thread serial */
	struct jp_counter_set counters;
	struct jp_trace    *trace;              /* NULL unless tracing */
	uint64_t            open_tick, open_ns, ticks_per_sec;
	uint64_t            cpu_open_ns;        /* process CPU time at open */
	struct jp_costs     cost;               /* calibration, ticks */
};

static inline __attribute__((always_inline, no_instrument_function))
const struct jp_fnent *jp_fnent(const struct jp_instr *in, jitperf_fn fn)
{
	return &in->fns[fn / JP_FN_CHUNK][fn % JP_FN_CHUNK];
}

/* probe.c: the instrumenting session and the probes' view of it */
extern struct jp_instr *jp_cur JP_HIDDEN;      /* NULL when no session instruments */
/* Serialises activation and close (held through a close), and a thread's
 * exit with a close reading its state. */
JP_HIDDEN void jp_active_lock(void) JP_NOINSTR;
JP_HIDDEN void jp_active_unlock(void) JP_NOINSTR;
JP_HIDDEN void jp_active_lock_reset(void) JP_NOINSTR;   /* fork child */
JP_HIDDEN struct jp_thread *jp_attach_self(void) JP_NOINSTR;
JP_HIDDEN void jp_probe_quiesce(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN void jp_probe_fork_child(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN void jp_probe_fork_trace(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN void jp_thread_free(struct jp_thread *t) JP_NOINSTR;
JP_HIDDEN void jp_threads_release(struct jp_instr *in) JP_NOINSTR;

/* timed.c: the calls sampling picks (their entry and exit: timed.h) */
JP_HIDDEN uint64_t jp_first_next(struct jp_thread *t, uint64_t n) JP_NOINSTR;
JP_HIDDEN void jp_sampling_reset(struct jp_thread *t) JP_NOINSTR;

/* calibrate.c: measure the probes on this thread, at activation */
JP_HIDDEN void jp_calibrate(struct jp_instr *in) JP_NOINSTR;

/* stats.c */
JP_HIDDEN struct jp_fstat *jp_stat_chunk(struct jp_thread *t, uint32_t chunk) JP_NOINSTR;
/* Add st, t's window of sampled timed calls, to its estimate and its
 * callers' time in callees, and empty it. */
JP_HIDDEN void jp_stats_window_close(struct jp_thread *t, struct jp_fstat *st) JP_NOINSTR;
JP_HIDDEN int  jp_stats_write(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN uint64_t jp_ticks_to_ns(const struct jp_instr *in, uint64_t ticks) JP_NOINSTR;
/* The whole session's counts, for the stats and trace headers. */
struct jp_totals {
	uint64_t calls, lib_calls, inline_calls, framed_calls, timed, traced;
	uint64_t drop_full, drop_short, drop_ring;
};
JP_HIDDEN void jp_totals(struct jp_instr *in, struct jp_totals *tot) JP_NOINSTR;

static inline __attribute__((always_inline, no_instrument_function))
struct jp_fstat *jp_stat(struct jp_thread *t, jitperf_fn fn)
{
	struct jp_fstat *c = t->stats[fn / JP_FN_CHUNK];

	if (__builtin_expect(!c, 0) && !(c = jp_stat_chunk(t, fn / JP_FN_CHUNK)))
		return NULL;
	return &c[fn % JP_FN_CHUNK];
}

/* trace_write.c */
JP_HIDDEN int  jp_trace_open(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN void jp_trace_close(struct jp_instr *in, int finish) JP_NOINSTR;
JP_HIDDEN void jp_trace_pause(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN void jp_trace_resume(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN void jp_trace_thread_reset(struct jp_thread *t) JP_NOINSTR;
JP_HIDDEN void jp_trace_meta_fn(struct jp_instr *in, jitperf_fn id) JP_NOINSTR;
JP_HIDDEN void jp_trace_meta_thread(struct jp_instr *in, struct jp_thread *t) JP_NOINSTR;
JP_HIDDEN void jp_trace_meta_code(struct jp_instr *in, enum jpt_code_kind kind, uint64_t index,
				  uint64_t addr, uint64_t len, const char *name) JP_NOINSTR;
JP_HIDDEN void jp_trace_meta_cal(struct jp_instr *in) JP_NOINSTR;
/* Calibration: the thread writes into a scratch block (not the file),
 * rewound at will; jp_trace_thread_reset ends it.  NULL: no memory. */
JP_HIDDEN void *jp_trace_scratch(struct jp_thread *t) JP_NOINSTR;
JP_HIDDEN void jp_trace_scratch_rewind(struct jp_thread *t, void *scratch) JP_NOINSTR;
/* The calibration into the file's header. */
JP_HIDDEN void jp_trace_costs(struct jp_instr *in) JP_NOINSTR;
/* The entry of frame f, one of t->frames (after a context of the calls
 * between it and the nearest written frame below it); 0 or -1 (full). */
JP_HIDDEN int  jp_trace_entry(struct jp_thread *t, const struct jp_frame *f) JP_NOINSTR;
/* Exit of f at now; 0 or -1. */
JP_HIDDEN int  jp_trace_exit(struct jp_thread *t, const struct jp_frame *f, uint64_t now,
			     const uint64_t *ctr, int repaired) JP_NOINSTR;

#endif /* JITPERF_INSTR_PRIV_H */
