/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tiered.h - jitcalc-tiered, a tiered JIT over jitcalc's language.
 *
 * Tier 0 ("interp"): each function is compiled to bytecode
 * (tiered_bytecode.c) and run by one eval loop (tiered_interp.c), entered
 * through a jitperf_trampoline per function, so perf's stacks name the
 * function the loop runs.  Tier 1 ("opt"): after N interpreted calls the
 * runtime requests a tier-up and a background thread (tiered_tierup.c)
 * compiles the function with jitcalc's backend for the host (tiered_native.c);
 * the function's entry then switches to the native code, atomically.
 */
#ifndef JITCALC_TIERED_H
#define JITCALC_TIERED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "jit.h"

#define TX_MAX_SLOTS 64   /* variables of one function in the interpreter */
#define TX_MAX_STACK 64   /* operand stack depth of one function */

enum tx_op {
	TX_PUSH,    /* imm: push it */
	TX_LOAD,    /* slot: push its value */
	TX_STORE,   /* slot: pop into it */
	TX_POP,
	TX_NEG, TX_NOT,
	TX_ADD, TX_SUB, TX_MUL, TX_DIV, TX_MOD,
	TX_LT, TX_GT, TX_LE, TX_GE, TX_EQ, TX_NE,
	TX_JMP,     /* target */
	TX_JZ,      /* target: pop, jump if zero */
	TX_CALL,    /* function index, nargs: pop the arguments, push the result */
	TX_RET,     /* pop the result and return it */
};

struct tx_rt;
struct tx_fn;

/* The tier-0 entry: the trampoline, or tx_eval itself when nothing records. */
typedef int64_t (*tx_tramp)(struct tx_fn *f, const int64_t *args);

struct tx_fn {
	struct jc_func   *ir;
	struct tx_rt     *rt;
	int64_t          *code;       /* bytecode */
	size_t            ncode;
	tx_tramp          tramp;      /* tier 0: jitperf_trampoline(func, 0, tx_eval) */
	_Atomic(jc_entry) native;     /* tier 1 once installed, else NULL */
	int               passes;     /* extra code generation passes of its tier-1 compile */
	/* counted by tx_call on the thread that runs the program */
	unsigned long     calls_interp, calls_native;
	/* the tier-1 compile, written by the compiler thread before native */
	uint64_t          compile_ns;
	int               compile_status;
	void             *native_map;
	size_t            native_size;
};

struct tx_rt {
	struct jc_prog   *prog;
	jitperf          *jp;
	struct tx_fn     *fn;         /* parallel to prog->fn */
	unsigned long     threshold;  /* interpreted calls before a tier-up; 0 = never */
	/* the tier-up queue and its compiler thread */
	pthread_mutex_t   lock;
	pthread_cond_t    cond;
	struct tx_fn    **queue;
	int               nqueue, stop, started;
	pthread_t         thread;
	atomic_int        compiler_tid;  /* the compiler thread's tid, once it runs */
};

/* tiered_rt.c: every function of p in tier 0 and the compiler thread
 * started (0, or an error with p->err).  Close after jitperf_close: it
 * stops the thread (tx_tierup_stop first, before the session closes) and
 * unmaps the code */
int tx_load(struct jc_prog *p, const char *file);   /* parsed, or an error with p->err */
int tx_rt_open(struct tx_rt *rt, struct jc_prog *p, jitperf *jp, unsigned long threshold);
struct tx_fn *tx_rt_find(struct tx_rt *rt, const char *name);
/* With calls timed or counted (JITPERF=stats or trace): entry, len bytes of
 * f's code in tier tag, registered as "func[tag]" and wrapped, so the
 * report has its calls per tier; the wrapper's entry, else entry itself. */
void *tx_counted(struct tx_rt *rt, struct tx_fn *f, const char *tag, void *entry, size_t len);
void tx_rt_close(struct tx_rt *rt);

/* tiered_bytecode.c: f's IR to bytecode; 0, or -EINVAL/-ENOMEM with rt->prog->err */
int tx_bytecode(struct tx_rt *rt, struct tx_fn *f);

/* tiered_interp.c: run f; tx_call dispatches to its current tier */
int64_t tx_eval(struct tx_fn *f, const int64_t *args);
int64_t tx_call(struct tx_fn *f, const int64_t *args);

/* tiered_native.c: f compiled to machine code (and f->passes more times, thrown
 * away) into f->native_map; 0, -EOPNOTSUPP (f calls another function),
 * -ENOMEM or an errno of mmap/mprotect.  Install: the code registered as
 * that of compile, *entry its first byte; 0 or jitperf_code_load_ex's error. */
int tx_native(struct tx_rt *rt, struct tx_fn *f);
int tx_native_install(struct tx_rt *rt, struct tx_fn *f, uint64_t compile, jc_entry *entry);

/* tiered_tierup.c: the compiler thread and the queue it takes requests from */
int tx_tierup_start(struct tx_rt *rt);
void tx_tierup_request(struct tx_fn *f);
void tx_tierup_stop(struct tx_rt *rt);

#endif /* JITCALC_TIERED_H */
