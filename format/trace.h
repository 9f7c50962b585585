/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * On-disk layout of jitperf-<pid>.trace (documented in jitperf-trace(5)).
 * Shared by the writer (lib/instr/trace_write.c) and the reader (read/trace_read.c).
 *
 * The file is a 4096-byte header followed by fixed-size blocks.  Writers
 * claim blocks with one atomic add and fill them through a MAP_SHARED
 * mapping, committing the payload length after every record, so the kernel
 * keeps everything committed when the process is killed.  All integers are
 * in the byte order of the writer (the magic tells which), little-endian on
 * every supported machine.
 */
#ifndef JITPERF_FORMAT_TRACE_H
#define JITPERF_FORMAT_TRACE_H

#include <stdint.h>

#define JPT_MAGIC         "JITPTRC\n"   /* 8 bytes at offset 0 */
#define JPT_VERSION       3             /* written; versions 1 and 2 are still read */
#define JPT_HEADER_SIZE   4096
#define JPT_BLOCK_SIZE    65536u        /* default; the header says which */
#define JPT_MAX_COUNTERS  8
#define JPT_NAMES_MAX     1024          /* counter names area in the header */
#define JPT_NAMES_V1      136           /* its offset in version 1 */
#define JPT_NAMES_V2      1024          /* and in version 2 */

enum jpt_clock { JPT_CLOCK_MONOTONIC = 0, JPT_CLOCK_TSC = 1 };
enum jpt_flags {
	JPT_FLAG_CLOSED = 1u << 0,      /* header completed at close */
	JPT_FLAG_RING   = 1u << 1,      /* threads write into rings of ring_bytes */
};
#define JPT_SAMPLE_ADAPTIVE 0u          /* sample_every: adaptive (timed_per_sec) */
#define JPT_SAMPLE_NONE     0xffffffffu /* sample_every: calls counted, none timed */

struct jpt_file_header {
	char     magic[8];
	uint32_t version;
	uint32_t header_size;     /* JPT_HEADER_SIZE: offset of block 0 */
	uint32_t block_size;      /* bytes per block, header included */
	uint32_t pid;
	uint32_t clock;           /* enum jpt_clock: unit of every timestamp */
	uint32_t sample_every;    /* about 1 call in N of each function timed and traced */
	uint32_t ncounters;       /* values after each event (<= JPT_MAX_COUNTERS) */
	uint32_t flags;           /* enum jpt_flags */
	uint64_t start_ns;        /* CLOCK_MONOTONIC at open */
	uint64_t open_tick;       /* calibration pair at open: clock tick ... */
	uint64_t open_ns;         /* ... and CLOCK_MONOTONIC ns read next to it */
	uint64_t close_tick;      /* pair at close (0, 0 while open) */
	uint64_t close_ns;
	uint64_t ticks_per_sec;   /* measured at open (1e9 for monotonic) */
	uint64_t nblocks;         /* blocks in the file, set at close */
	/* version 2 */
	uint64_t max_bytes;       /* size limit of the file (0: none of its own) */
	uint64_t ring_bytes;      /* per-thread ring (JPT_FLAG_RING) */
	uint64_t min_ns;          /* timed calls shorter than this are not written */
	uint32_t timed_per_sec;   /* adaptive sampling: budget per thread */
	uint32_t reserved0;
	uint32_t probe_ps[8];     /* calibration, picoseconds: enum jpt_probe_cost */
	uint64_t calls;           /* at close: calls counted (all threads) */
	uint64_t timed;           /* ... calls timed */
	uint64_t dropped_full;    /* ... timed calls not written: the file was full */
	uint64_t dropped_short;   /* ... timed calls not written: shorter than min_ns */
	uint64_t dropped_ring;    /* ... calls written, then overwritten by a ring */
	uint64_t reserved[103];
	char     counter_names[JPT_NAMES_MAX]; /* ncounters NUL-terminated names */
};                                         /* padded to JPT_HEADER_SIZE on disk */

/* What the probes cost, measured when the session opened (probe_ps[]). */
enum jpt_probe_cost {
	JPT_COST_SELF = 0,        /* inside a timed call's own clock reads */
	JPT_COST_LIB,             /* a counted call through jitperf_enter/exit */
	JPT_COST_INLINE,          /* a counted call through the inline fast path */
	JPT_COST_TIMED,           /* a whole timed call, as its caller sees it */
	JPT_COST_FRAMED,          /* a counted call of code keeping a flag in its frame */
	JPT_NCOSTS
};

#define JPT_BLOCK_MAGIC   0x314b4c42u      /* "BLK1" */
enum jpt_block_kind { JPT_BLOCK_EVENTS = 1, JPT_BLOCK_META = 2 };

/* What happened to a piece of JIT code (JPT_META_CODE, and the readers' events). */
enum jpt_code_kind { JPT_CODE_LOAD = 0, JPT_CODE_MOVE = 1, JPT_CODE_UNLOAD = 2 };

/* At the start of every block; unused blocks are all zero. */
struct jpt_block_header {
	uint32_t magic;           /* JPT_BLOCK_MAGIC */
	uint32_t kind;            /* enum jpt_block_kind */
	uint32_t thread;          /* events: writer thread's serial (0-based) */
	uint32_t tid;             /* events: its kernel tid */
	uint32_t seq;             /* n-th block of this thread (or of the metadata) */
	uint32_t used;            /* committed payload bytes (release-stored) */
	uint64_t base_tick;       /* events: time the deltas start from */
	uint64_t cal_tick;        /* calibration pair at claim time */
	uint64_t cal_ns;
	char     name[16];        /* events: thread name at the thread's first event */
};                            /* 64 bytes; payload follows */

/*
 * Events (version 3): 4 or 8 bytes each, 4-byte aligned; the low two
 * bits of an event's first 32-bit unit give its type (enum jpt_ev).
 *
 * Short event (JPT_EV_SHORT), one 32-bit unit: an entry or exit without
 * counters whose function id and delta are small (most events):
 *   bits 0-1   JPT_EV_SHORT
 *   bit  2     0 entry, 1 exit
 *   bits 3-14  function id (12 bits)
 *   bits 15-31 ticks since the previous event of the block (17 bits)
 *
 * Event word (8 bytes, the low 32-bit unit first): any other entry or exit
 *   bits 0-1   type: JPT_EV_ENTER, JPT_EV_EXIT or JPT_EV_X
 *   bits 2-25  function id (24 bits)
 *   bits 26-63 ticks since the previous event of the block (38 bits)
 * followed by ncounters uint64_t counter values for enter/exit events.
 * (Versions 1 and 2 have only event words, 8-byte aligned, and type 3 is
 * an exit that closes a call whose own exit was never seen.)
 *
 * Type 2 words are extended events, their kind in bits 2-9:
 *   JPT_X_TIME     the next uint64_t is an absolute tick that the following
 *                  deltas start from (used when a delta overflows);
 *   JPT_X_CONTEXT  the untraced calls between the thread's innermost open
 *                  traced call (or the bottom of its stack) and the next
 *                  entry: bits 10-25 the number n of ids listed, bits 26-57
 *                  how many more lie below them, not listed, bit 58
 *                  (JPT_CTX_PARTIAL) set when calls the writer did not see
 *                  may lie between them and the entry (code that counted
 *                  them without the stack); then n uint32_t ids, outermost
 *                  first, padded to 8 bytes with zeros;
 *   JPT_X_REPAIRED (version 3) the next exit closes a call whose own exit
 *                  was never seen (longjmp, exception, thread exit).
 */
enum jpt_ev { JPT_EV_ENTER = 0, JPT_EV_EXIT = 1, JPT_EV_TIME = 2, JPT_EV_SHORT = 3 };
#define JPT_EV_EXIT_REPAIRED_V2 3       /* type 3 in versions 1 and 2 */
enum jpt_x { JPT_X_TIME = 0, JPT_X_CONTEXT = 1, JPT_X_REPAIRED = 2 };
#define JPT_EV_X           JPT_EV_TIME
#define JPT_EV_FN_BITS     24
#define JPT_EV_DELTA_SHIFT 26
#define JPT_EV_DELTA_MAX   ((UINT64_C(1) << 38) - 1)
#define JPT_FN_MAX         ((UINT32_C(1) << JPT_EV_FN_BITS) - 1)
#define JPT_X_KIND(w)      ((uint32_t)((w) >> 2) & 0xff)
#define JPT_CTX_MAX        1024u          /* ids one context lists at most */
#define JPT_CTX_N(w)       ((uint32_t)((w) >> 10) & 0xffff)
#define JPT_CTX_MORE(w)    ((uint32_t)((w) >> 26))
#define JPT_CTX_PARTIAL    (UINT64_C(1) << 58)
#define JPT_SHORT_FN_MAX    0xfffu         /* ids a short event holds */
#define JPT_SHORT_DELTA_MAX 0x1ffffu       /* deltas a short event holds */
#define JPT_SHORT_FN(u)     ((uint32_t)(u) >> 3 & JPT_SHORT_FN_MAX)
#define JPT_SHORT_DELTA(u)  ((uint32_t)(u) >> 15)
#define JPT_SHORT_EXIT      4u             /* bit 2: an exit */
#define JPT_SHORT_WORD(exit, fn, delta) \
	(JPT_EV_SHORT | ((exit) ? JPT_SHORT_EXIT : 0) | (uint32_t)(fn) << 3 | (uint32_t)(delta) << 15)
#define JPT_CTX_WORD(n, more) \
	(JPT_EV_X | (uint64_t)JPT_X_CONTEXT << 2 | (uint64_t)(n) << 10 | (uint64_t)(more) << 26)

/* Metadata records (meta blocks): 8-byte aligned, size includes the header. */
enum jpt_meta_type { JPT_META_FN = 1, JPT_META_THREAD = 2, JPT_META_CODE = 3, JPT_META_CAL = 4 };

struct jpt_meta_header {
	uint16_t type;            /* enum jpt_meta_type */
	uint16_t reserved;
	uint32_t size;            /* whole record, multiple of 8 */
};

struct jpt_meta_fn {          /* + NUL-terminated name */
	struct jpt_meta_header h;
	uint32_t id;
	uint32_t reserved;
	uint64_t addr;
	uint64_t len;
};

struct jpt_meta_thread {      /* + NUL-terminated name (overrides the block's) */
	struct jpt_meta_header h;
	uint32_t thread;
	uint32_t tid;
};

struct jpt_meta_code {        /* + NUL-terminated name */
	struct jpt_meta_header h;
	uint32_t kind;            /* enum jpt_code_kind */
	uint32_t tid;
	uint64_t tick;
	uint64_t index;
	uint64_t addr;
	uint64_t len;
};

struct jpt_meta_cal {         /* a later calibration pair */
	struct jpt_meta_header h;
	uint64_t tick;
	uint64_t ns;
};

/* The offsets jitperf-trace(5) documents. */
_Static_assert(__builtin_offsetof(struct jpt_file_header, max_bytes) == 96, "header layout");
_Static_assert(__builtin_offsetof(struct jpt_file_header, probe_ps) == 128, "header layout");
_Static_assert(__builtin_offsetof(struct jpt_file_header, calls) == 160, "header layout");
_Static_assert(__builtin_offsetof(struct jpt_file_header, dropped_ring) == 192, "header layout");
_Static_assert(__builtin_offsetof(struct jpt_file_header, counter_names) == JPT_NAMES_V2,
	       "header layout");
_Static_assert(sizeof(struct jpt_file_header) <= JPT_HEADER_SIZE, "header size");
_Static_assert(sizeof(struct jpt_block_header) == 64, "block header layout");
_Static_assert(sizeof(struct jpt_meta_fn) == 32 && sizeof(struct jpt_meta_code) == 48,
	       "metadata layout");

#endif /* JITPERF_FORMAT_TRACE_H */
