/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * State shared by the files of the instrumentation runtime (instrument.c,
 * probe.c, stats.c, trace_write.c, counters.c, tsc.c).  Internal.
 */
#ifndef JITPERF_INSTR_PRIV_H
#define JITPERF_INSTR_PRIV_H

#include <pthread.h>
#include <stdint.h>

#include "instrument.h"
#include "trace_format.h"

#define JP_FN_CHUNK      1024u          /* function table grows by chunks ... */
#define JP_FN_CHUNKS     4096u          /* ... of which there are at most this many */
#define JP_FN_MAX        (JP_FN_CHUNK * JP_FN_CHUNKS - 1)
#define JP_STACK_MAX     4096u          /* frames per thread; deeper calls are not timed */

/* ---- clock (tsc.c) */
extern int jp_clock_is_tsc JP_HIDDEN;   /* probes read rdtsc instead of CLOCK_MONOTONIC */

static inline __attribute__((always_inline, no_instrument_function))
uint64_t jp_ticks(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(jp_clock_is_tsc, 1)) {
		uint32_t lo, hi;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
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

/* ---- per-thread statistics (stats.c) */
struct jp_fstat {
	uint64_t calls, total, self, min, max, unbalanced;
	uint64_t skip;                          /* root calls to leave untraced before the next */
	uint64_t ctr[JPT_MAX_COUNTERS];
};

/* ---- threads (probe.c) */
struct jp_frame {
	uint32_t fn;
	uint32_t traced;                        /* entry event written */
	uint64_t start;                         /* ticks */
	uint64_t child;                         /* ticks spent in completed children */
	uint64_t ctr[JPT_MAX_COUNTERS];         /* counter values at entry */
};

struct jp_thread {
	/* all a traced event touches, in the first cache line (t is page-aligned) */
	volatile int        busy;               /* inside a probe: re-entry guard + close handshake */
	uint32_t            depth;              /* frames in use */
	struct jp_frame    *frames;             /* JP_STACK_MAX frames (mmap) */
	uint32_t            nfns;               /* ids below this are known to be valid */
	uint8_t             stats_on;           /* copies of the session's settings */
	uint8_t             trace_on;
	uint8_t             nctr;               /* counters requested (values per event) */
	uint8_t             trace_only;         /* trace on, statistics and counters off */
	uint8_t             fast;               /* trace_only and the clock is rdtsc */
	uint32_t            overflow;           /* entries beyond JP_STACK_MAX not yet exited */
	/* trace window: the current block of the shared file mapping */
	struct jpt_block_header *blk;
	char               *pos, *end;
	uint64_t            last_tick;
	uint32_t            sample_every;
	uint32_t            event_size;         /* bytes per entry/exit event */
	struct jp_instr    *in;
	struct jp_thread   *next;               /* session's list (never unlinked) */
	uint32_t            serial;             /* 0-based, per session */
	uint32_t            tid;
	volatile int        dead;               /* thread has exited */
	struct jp_fstat    *stats[JP_FN_CHUNKS];/* chunks of JP_FN_CHUNK, mmapped on demand */
	uint32_t            blkseq;
	int                 trace_full;         /* no more blocks: stop writing */
	struct jp_thread_counters ctrs;
	char                name[16];
};

/* ---- trace file (trace_write.c) */
struct jp_trace {
	int                 fd;
	char               *path;
	char               *map;                /* MAP_SHARED reservation of the file */
	size_t              map_len;
	uint32_t            block_size;
	uint64_t            next_block;         /* atomic: blocks claimed */
	uint64_t            file_blocks;        /* blocks the file holds (under grow_lock) */
	pthread_mutex_t     grow_lock;
	struct jpt_block_header *meta;          /* current metadata block (under in->lock) */
	uint32_t            meta_seq;
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
	unsigned            sample_every;
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
};

static inline __attribute__((always_inline, no_instrument_function))
const struct jp_fnent *jp_fnent(const struct jp_instr *in, jitperf_fn fn)
{
	return &in->fns[fn / JP_FN_CHUNK][fn % JP_FN_CHUNK];
}

/* probe.c: the instrumenting session and the probes' view of it */
extern struct jp_instr *jp_cur JP_HIDDEN;      /* NULL when no session instruments */
extern unsigned jp_cur_gen JP_HIDDEN;          /* changes whenever jp_cur does */
JP_HIDDEN void jp_probe_quiesce(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN void jp_probe_fork_child(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN void jp_probe_fork_trace(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN void jp_thread_free(struct jp_thread *t) JP_NOINSTR;

/* stats.c */
JP_HIDDEN struct jp_fstat *jp_stat_chunk(struct jp_thread *t, uint32_t chunk) JP_NOINSTR;
JP_HIDDEN int  jp_stats_write(struct jp_instr *in) JP_NOINSTR;
JP_HIDDEN uint64_t jp_ticks_to_ns(const struct jp_instr *in, uint64_t ticks) JP_NOINSTR;

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
JP_HIDDEN int  jp_trace_new_block(struct jp_instr *in, struct jp_thread *t) JP_NOINSTR;
JP_HIDDEN void jp_trace_meta_fn(struct jp_instr *in, jitperf_fn id) JP_NOINSTR;
JP_HIDDEN void jp_trace_meta_thread(struct jp_instr *in, struct jp_thread *t) JP_NOINSTR;
JP_HIDDEN void jp_trace_meta_code(struct jp_instr *in, enum jpt_code_kind kind, uint64_t index,
				  uint64_t addr, uint64_t len, const char *name) JP_NOINSTR;
JP_HIDDEN void jp_trace_meta_cal(struct jp_instr *in) JP_NOINSTR;

/*
 * Append one event to t's block: the only per-event work of tracing.
 * ctr: t->nctr values or NULL.  Commits with a release store.
 * Returns 0, or -1 when the trace is full (the event is dropped).
 */
static inline __attribute__((always_inline, no_instrument_function))
int jp_trace_event(struct jp_thread *t, unsigned type, jitperf_fn fn, uint64_t now,
		   const uint64_t *ctr)
{
	uint64_t delta;
	uint64_t *w;

	/* room for the event and a possible TIME event */
	if (__builtin_expect((size_t)(t->end - t->pos) < t->event_size + 16u, 0) &&
	    jp_trace_new_block(t->in, t))
		return -1;
	w = (uint64_t *)t->pos;
	delta = now - t->last_tick;     /* a clock going back wraps: > max too */
	if (__builtin_expect(delta > JPT_EV_DELTA_MAX, 0)) {
		*w++ = JPT_EV_TIME;
		*w++ = now;
		delta = 0;
	}
	t->last_tick = now;
	*w++ = type | (uint64_t)fn << 2 | delta << JPT_EV_DELTA_SHIFT;
	for (unsigned i = 0; ctr && i < t->nctr; i++)
		*w++ = ctr[i];
	t->pos = (char *)w;
	__atomic_store_n(&t->blk->used,
			 (uint32_t)(t->pos - (char *)(t->blk + 1)), __ATOMIC_RELEASE);
	return 0;
}

#endif /* JITPERF_INSTR_PRIV_H */
