/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf.h - make JIT-compiled code visible to Linux perf and trace viewers.
 *
 * A JIT links libjitperf and registers every function it emits; the library
 * writes /tmp/perf-<pid>.map and jit-<pid>.dump for perf, and can time every
 * call of registered functions (entry/exit probes or machine-code wrappers).
 *
 * All functions are thread-safe unless stated.  int-returning functions
 * return 0 or a negative errno; jitperf_strerror() turns it into text.
 * The one exception is jitperf_fn_register(), which returns an id that
 * generated code embeds: 0 and errno on failure.  A NULL session (jp) is
 * jitperf_default() in every call that acts on a session; jitperf_close()
 * and jitperf_outputs() take NULL as no session (a no-op, 0).  Nothing
 * here prints to stdout, exits or aborts.
 */
#ifndef JITPERF_H
#define JITPERF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
# define JITPERF_API __attribute__((visibility("default")))
#else
# define JITPERF_API
#endif

/* A session; normally one per process. */
typedef struct jitperf jitperf;

enum jitperf_output {
	JITPERF_PERFMAP = 1u << 0,  /* /tmp/perf-<pid>.map                         */
	JITPERF_JITDUMP = 1u << 1,  /* <dir>/jit-<pid>.dump for perf inject --jit    */
	JITPERF_TRACE   = 1u << 2,  /* <dir>/jitperf-<pid>.trace: entry/exit events  */
	JITPERF_STATS   = 1u << 3,  /* per-function call statistics, written at close */
	JITPERF_STANDBY = 1u << 4,  /* perf map and jitdump held back: written when a
				       recorder attaches (jitperf record -p), then as usual */
};

struct jitperf_options {
	size_t      size;          /* sizeof(struct jitperf_options); lets the struct grow */
	unsigned    outputs;       /* JITPERF_* bits; 0 = take them from $JITPERF */
	const char *dir;           /* jitdump/trace/stats directory; NULL = $JITPERF_DIR, else "." */
	unsigned    sample_every;  /* time (and trace) about 1 call in N of each function, at any
				      depth; 1 = every call; JITPERF_SAMPLE_ADAPTIVE, JITPERF_SAMPLE_NONE;
				      0 = $JITPERF_SAMPLE, else adaptive.  Counts are always exact. */
	const char *counters;      /* counters for timed calls, e.g. "cycles,instructions" */
	/* added later: a caller built with the shorter struct gets 0 for these */
	unsigned    timed_per_sec; /* adaptive sampling: timed calls per second per thread
				      (0 = from $JITPERF_SAMPLE=auto:R, else 10000) */
	uint64_t    trace_max;     /* trace file limit in bytes (0 = $JITPERF_TRACE_MAX, else 32 MiB;
				      JITPERF_UNLIMITED = up to 4 GiB) */
	uint64_t    trace_ring;    /* keep only the last trace_ring bytes of each thread's calls
				      (0 = $JITPERF_TRACE_RING, else off) */
	uint64_t    trace_min_ns;  /* calls shorter than this are timed but not traced
				      (0 = $JITPERF_TRACE_MIN, else none) */
	unsigned    tier_tags;     /* code of a compile without a name is named func[tag]
				      (JITPERF_TIER_TAGS_ON) or func (JITPERF_TIER_TAGS_OFF);
				      0 = $JITPERF_TIER_TAGS, else on */
};
#define JITPERF_SAMPLE_ADAPTIVE 0xfffffffeu   /* sample_every: adapt to timed_per_sec */
#define JITPERF_SAMPLE_NONE     0xffffffffu   /* sample_every: count calls, time none */
#define JITPERF_UNLIMITED       UINT64_MAX    /* trace_max: no limit of its own */
#define JITPERF_TIER_TAGS_ON    1u            /* tier_tags: func[tag] */
#define JITPERF_TIER_TAGS_OFF   2u            /* tier_tags: func */

/*
 * Open a session.  opts may be NULL (everything from the environment).
 * Errors: -EINVAL (bad options or environment), -ENOMEM, and the errno of
 * creating the output files (-EACCES, -ENOENT, -ENOSPC, ...).
 */
JITPERF_API int jitperf_open(jitperf **out, const struct jitperf_options *opts);

/* Flush, write CODE_CLOSE and statistics, free.  NULL is a no-op (returns 0). */
JITPERF_API int jitperf_close(jitperf *jp);

/*
 * The process-wide session built from the environment, opened on first use
 * and closed at exit (or by jitperf_close).  Never NULL: when opening fails
 * or JITPERF is unset, an inactive session whose calls are cheap no-ops.
 */
JITPERF_API jitperf *jitperf_default(void);

/*
 * The JITPERF_* bits this session writes (0 = inactive; NULL -> 0).  In
 * standby: JITPERF_STANDBY | JITPERF_PERFMAP | JITPERF_JITDUMP, until a
 * recorder attaches; then JITPERF_PERFMAP | JITPERF_JITDUMP.
 */
JITPERF_API unsigned jitperf_outputs(const jitperf *jp);

/* Text for a negative errno returned by this library (never NULL). */
JITPERF_API const char *jitperf_strerror(int err);

/*
 * Where the library's rare diagnostics go, for the whole process.  An
 * error is something asked for and not had (a full disk, calls left out
 * of a full trace, a JITPERF value refused); a debug message says what the
 * library did and why.  fn gets every message of both levels, one line
 * without its newline, on any thread, never from a probe.  NULL (the
 * default): errors go to stderr, debug messages too with JITPERF_DEBUG.
 */
enum jitperf_log_level {
	JITPERF_LOG_ERROR = 1,
	JITPERF_LOG_DEBUG = 2,
};
typedef void (*jitperf_log_fn)(int level, const char *msg, void *arg);
JITPERF_API void jitperf_set_log(jitperf_log_fn fn, void *arg);

/* ---- Code registration: call after the code is executable, before it runs. */

struct jitperf_line {
	uint64_t    addr;     /* absolute run-time address of the first instruction of the line */
	uint32_t    line;     /* 1-based source line */
	uint32_t    discrim;  /* DWARF discriminator, 0 if none */
	const char *file;     /* source file name */
};

struct jitperf_code {
	size_t                     size;         /* sizeof(struct jitperf_code) */
	const char                *name;         /* symbol shown by perf; any bytes but NUL */
	const void                *addr;         /* first byte of the code */
	size_t                     len;          /* code length in bytes */
	const struct jitperf_line *lines;        /* optional source lines -> JIT_CODE_DEBUG_INFO */
	size_t                     nlines;
	const void                *eh_frame;     /* optional .eh_frame for this code -> JIT_CODE_UNWINDING_INFO */
	size_t                     eh_frame_len;
	/* added later: a caller built with the shorter struct gets 0 for these */
	uint64_t                   compile;      /* jitperf_compile_begin's id of the compile that
						    made this code (its install), 0 = none; with
						    name NULL the code is named func[tag] */
};
/*
 * eh_frame convention (what perf's genelf does with it): the bytes are the
 * .eh_frame of this one piece of code -- a CIE, then one or more FDEs, with
 * or without a 4-byte zero terminator -- laid out AS IF they were loaded at
 *
 *	eh_addr = addr + ((len + 7) & ~7)	(right after the code, 8-aligned)
 *
 * because that is where perf inject --jit puts .eh_frame relative to .text.
 * The CIE's FDE pointer encoding must be DW_EH_PE_pcrel|DW_EH_PE_sdata4
 * (augmentation "zR", R = 0x1b): the pc_begin field at byte offset o of the
 * buffer holds (int32_t)(addr - (eh_addr + o)), and each FDE must lie inside
 * [addr, addr + len).  eh_frame_len is a multiple of 4.  The library checks
 * this (-EINVAL otherwise), builds the .eh_frame_hdr search table itself and
 * writes .eh_frame + .eh_frame_hdr in the JIT_CODE_UNWINDING_INFO record.
 * Line addresses (struct jitperf_line.addr) are absolute run-time addresses.
 */

/*
 * Register code.  On success *index (if not NULL) receives the code index
 * (unique, increasing per session) used by jitperf_code_move/_unload.
 * Errors: -EINVAL (NULL name/addr, zero len), -ENOENT (compile is not one
 * of this session's), -ENOSPC/-EIO (write failed; the files stay valid),
 * -ENOMEM.
 */
JITPERF_API int jitperf_code_load(jitperf *jp, const char *name, const void *addr,
				  size_t len, uint64_t *index);
JITPERF_API int jitperf_code_load_ex(jitperf *jp, const struct jitperf_code *code,
				     uint64_t *index);

/* The code of index was copied to new_addr.  Errors: -EINVAL, -ENOENT (unknown index). */
JITPERF_API int jitperf_code_move(jitperf *jp, uint64_t index, const void *new_addr);

/*
 * The code of index is gone.  jitdump has no record for this (CODE_CLOSE ends
 * the whole runtime); it is kept for the timeline, and a later load at the
 * same address wins in perf by its timestamp.  Errors: -ENOENT.
 */
JITPERF_API int jitperf_code_unload(jitperf *jp, uint64_t index);

/*
 * ---- Tiers and compiles (doc/tiers.md, jitperf-tiers(5)).  func is the
 * logical function, the same in every tier; tier is 0..15.  The events go
 * to jit-<pid>.tiers beside the jitdump, on its clock, each in the file
 * when the call returns.  jp NULL is jitperf_default().  In an inactive
 * session the calls check their arguments and do nothing else (*compile
 * gets 0).  Thread-safe: compiles run on any thread, concurrently.
 */
#define JITPERF_TIERS 16u            /* tiers 0..15 */

/*
 * Call tier tag (default "tierN"; NULL restores it): code of a compile of
 * this tier loaded from now on is named func[tag].  tag: 1 to 63 bytes,
 * none of them '[', ']' or a control character.  Errors: -EINVAL,
 * -ENOMEM, -ENOSPC/-EIO.
 */
JITPERF_API int jitperf_tier_name(jitperf *jp, unsigned tier, const char *tag);

/*
 * The runtime decided to run func in tier (a tier-up was requested; the
 * compile that follows begins later).  Errors: -EINVAL (NULL func, tier
 * over 15), -ENOMEM, -ENOSPC/-EIO.
 */
JITPERF_API int jitperf_tier_request(jitperf *jp, const char *func, unsigned tier);

/*
 * A compile of func for tier begins on this thread; *compile gets its id
 * (1, 2, ... per session), for jitperf_compile_end and for the .compile of
 * the code it makes.  It nests in the compile open on this thread, if
 * any.  Errors: -EINVAL (NULL func or compile, tier over 15), -ENOMEM,
 * -ENOSPC/-EIO.
 */
JITPERF_API int jitperf_compile_begin(jitperf *jp, const char *func, unsigned tier,
				      uint64_t *compile);

/*
 * The compile ended, on any thread: status 0 when it produced code, < 0
 * when it failed or was abandoned.  Errors: -EINVAL (status > 0), -ENOENT
 * (compile was not begun in this session, or has ended), -ENOMEM,
 * -ENOSPC/-EIO.
 */
JITPERF_API int jitperf_compile_end(jitperf *jp, uint64_t compile, int status);

/*
 * A small entry for an interpreter's function (x86-64 and little-endian
 * AArch64): *entry gets code that keeps a frame perf's frame-pointer and
 * DWARF unwinding walk through, calls target with the caller's register
 * arguments and returns its result; it is registered as func[tag] (with
 * unwind info).  An interpreter calls *entry instead of its eval function,
 * so each sample in it has the function it runs on its stack.  Arguments
 * passed on the stack do not reach target: at most 6 integer and 8
 * floating-point arguments on x86-64, 8 and 8 on AArch64, in registers.
 * In an inactive session *entry is target itself.  Entries stay valid
 * until the process ends.  Errors: -EINVAL (NULL func, target or entry,
 * tier over 15), -EOPNOTSUPP (another machine), -ENOMEM, -ENOSPC/-EIO.
 */
JITPERF_API int jitperf_trampoline(jitperf *jp, const char *func, unsigned tier,
				   const void *target, void **entry);

/* ---- Instrumentation: precise entry/exit timing of registered functions. */

typedef uint32_t jitperf_fn;    /* 0 = invalid */

/*
 * Register a function for instrumentation; returns its id, or 0 with errno
 * set (EINVAL, ENOMEM, ENOBUFS when the function table is full): the id is
 * what generated code embeds, so it is the return value, unlike the other
 * calls' negative errno.  Returns a valid id even when tracing and
 * statistics are off.
 */
JITPERF_API jitperf_fn jitperf_fn_register(jitperf *jp, const char *name,
					   const void *addr, size_t len);

/*
 * Hot path: call at function entry / before every return.  Every call is
 * counted; about one in sample_every is timed (and traced).
 * Async-signal-safe.
 */
JITPERF_API void jitperf_enter(jitperf_fn fn);
JITPERF_API void jitperf_exit(jitperf_fn fn);

/*
 * Build a machine-code thunk that records entry of fn, runs entry with the
 * caller's arguments, records exit and returns its result.  *wrapped gets
 * the thunk's address.  Errors: -EINVAL, -ENOMEM, -EOPNOTSUPP (architecture).
 */
JITPERF_API int jitperf_wrap(jitperf *jp, jitperf_fn fn, const void *entry, void **wrapped);

/*
 * The inline fast path.  These names are implementation details, but their
 * layout is a stable ABI (jitperf_enter(3)) so that generated code can do
 * what the inline functions below do:
 *
 *  - jitperf__probe_active is 0 while no session counts calls, else the
 *    generation of the session that does;
 *  - jitperf__tls (initial-exec TLS, at a fixed offset from the thread
 *    pointer) is the thread's call stack and per-function counters; they
 *    belong to the session when gen equals jitperf__probe_active;
 *  - an entry whose count stays below its counter's next is only counted
 *    and pushed; an exit whose id is on top of the stack is only popped;
 *    anything else (a call to time, a thread's first call, a full stack, a
 *    mismatched exit) calls jitperf__enter_slow / jitperf__exit_slow.
 *
 * Define JITPERF_NO_INLINE to always call the exported functions.
 */
#define JITPERF__STACK_MAX 4096u          /* stack entries; deeper calls are counted only */
#define JITPERF__TIMED     0x80000000u    /* stack entry of a timed call: id | JITPERF__TIMED */
#define JITPERF__FRAMED    0x40000000u    /* entered by jitperf__enter_framed */
#define JITPERF__FN_LIMIT  0x400000u      /* ids below this have a counter */
/*
 * The layout of what the inline path reads and writes (these constants,
 * struct jitperf__count, struct jitperf__tls).  Code built with it needs
 * the version node JITPERF_INLINE_<N> of libjitperf.so, so a library of
 * another layout refuses to load it ("version not found") instead of
 * corrupting its counters.  Any change of the layout changes N.
 */
#define JITPERF__LAYOUT    1
struct jitperf__count {
	uint64_t calls;                       /* entries of this function on this thread */
	uint64_t next;                        /* the call numbered next is timed (0: unset) */
};
struct jitperf__tls {
	unsigned               gen;           /* 0 +0: session generation these belong to */
	unsigned               depth;         /* 4 +4: entries on stack (more: overflowed) */
	uint32_t              *stack;         /* 8 +8: JITPERF__STACK_MAX ids */
	struct jitperf__count *count;         /* 16 +16: indexed by id, JITPERF__FN_LIMIT of them */
	uint64_t               inline_calls;  /* 24 +24: calls counted by inline code */
	uint64_t               lib_calls;     /* 32 +32: calls counted by jitperf_enter */
	uint64_t               framed_calls;  /* 40 +40: calls counted by code that keeps a
						 flag in its frame (jitperf__enter_framed) */
};
JITPERF_API extern volatile int jitperf__probe_active;
JITPERF_API extern __thread struct jitperf__tls jitperf__tls __attribute__((tls_model("initial-exec")));
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 7
# define JITPERF__NOPLT __attribute__((noplt))  /* called through the GOT: no PLT jump */
#else
# define JITPERF__NOPLT
#endif
JITPERF_API JITPERF__NOPLT void jitperf__enter_slow(jitperf_fn fn);
JITPERF_API JITPERF__NOPLT void jitperf__exit_slow(jitperf_fn fn);
/*
 * For generated code that counts calls inline without the stack and keeps
 * in its own frame whether it called this at entry (then it calls
 * jitperf__exit_slow before returning): the calls it only counted are not
 * on the library's stack, so the callers of the calls it enters here are
 * not known.
 */
JITPERF_API JITPERF__NOPLT void jitperf__enter_framed(jitperf_fn fn);

#if defined(__GNUC__)
/* One increment a signal handler cannot split (no lock prefix: same thread only). */
static inline __attribute__((always_inline, no_instrument_function))
void jitperf__inc(uint64_t *v)
{
# if defined(__x86_64__)
	__asm__ volatile("incq %0" : "+m"(*v));
# else
	__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
# endif
}

/* Entry of fn for session generation a (non-zero): count and push, or 0. */
static inline __attribute__((always_inline, no_instrument_function))
int jitperf__enter_fast(unsigned a, jitperf_fn fn)
{
	struct jitperf__tls *t = &jitperf__tls;
	unsigned d = t->depth;
	struct jitperf__count *c;

	if (t->gen != a || fn >= JITPERF__FN_LIMIT || d >= JITPERF__STACK_MAX)
		return 0;
	c = &t->count[fn];
	if (c->calls + 1 >= c->next)          /* to be timed, or next unset */
		return 0;
	t->depth = d + 1;                     /* before the entry: a signal handler's */
	__asm__ volatile("" ::: "memory");    /* calls then push above it */
	t->stack[d] = fn;
	jitperf__inc(&c->calls);
	return 1;
}

/* Exit of fn: pop it if it is the untimed top of the stack, or 0. */
static inline __attribute__((always_inline, no_instrument_function))
int jitperf__exit_fast(unsigned a, jitperf_fn fn)
{
	struct jitperf__tls *t = &jitperf__tls;
	unsigned d = t->depth - 1;

	if (t->gen != a || d >= JITPERF__STACK_MAX || t->stack[d] != fn)
		return 0;
	t->depth = d;
	return 1;
}
#endif

#if !defined(JITPERF_NO_INLINE) && !defined(JITPERF_BUILDING_LIBRARY) && defined(__GNUC__)
static inline __attribute__((always_inline, no_instrument_function))
void jitperf_enter_inline_(jitperf_fn fn)
{
	unsigned a = (unsigned)jitperf__probe_active;

	if (__builtin_expect(a != 0, 0)) {
		if (jitperf__enter_fast(a, fn))
			jitperf__inc(&jitperf__tls.inline_calls);
		else
			jitperf__enter_slow(fn);
	}
}
static inline __attribute__((always_inline, no_instrument_function))
void jitperf_exit_inline_(jitperf_fn fn)
{
	unsigned a = (unsigned)jitperf__probe_active;

	if (__builtin_expect(a != 0, 0) && !jitperf__exit_fast(a, fn))
		jitperf__exit_slow(fn);
}
# define jitperf_enter(fn) jitperf_enter_inline_(fn)
# define jitperf_exit(fn)  jitperf_exit_inline_(fn)
#endif

#ifdef __cplusplus
}
#endif
#endif /* JITPERF_H */
