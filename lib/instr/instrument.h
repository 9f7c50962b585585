/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Instrumentation runtime: what the rest of the library (lib/session.c,
 * and jitperf_wrap in lib/instr/wrap.c) may call.  Internal.
 * (libjitperf-cyg is a separate library and uses the public
 * jitperf_fn_register/jitperf__enter_slow instead.)
 *
 * Probe events go to the one "instrumenting" session: the first open
 * session with JITPERF_TRACE or JITPERF_STATS.  Function ids are per
 * session (1-based, dense); the probes look them up in that session.
 *
 * Recording entry/exit from a thunk or from __cyg_profile_func_enter/exit:
 * call jp_probe_enter()/jp_probe_exit() (exactly what jitperf_enter/exit do
 * after their "is anything on" test).  They are async-signal-safe, keep
 * errno, never block, and ignore calls that re-enter on the same thread
 * (a signal handler interrupting a probe).  They are plain C functions with
 * the SysV ABI: machine code may call them directly (they clobber only the
 * caller-saved registers, including the vector registers, as any C call).
 */
#ifndef JITPERF_INSTRUMENT_H
#define JITPERF_INSTRUMENT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/session.h"

/* Hot path: record entry/exit of fn in the instrumenting session. */
JP_HIDDEN void jp_probe_enter(jitperf_fn fn) JP_NOINSTR;
JP_HIDDEN void jp_probe_exit(jitperf_fn fn) JP_NOINSTR;
/* As jp_probe_exit, but the call did not return (a longjmp skipped it): the
 * innermost open call of fn and any above it end as repaired (unbalanced). */
JP_HIDDEN void jp_probe_unwind(jitperf_fn fn) JP_NOINSTR;

/*
 * Register a function of jp (jitperf_fn_register once the session is
 * known).  Returns the id or 0 with errno set (EINVAL: jp or name NULL).
 * Takes a lock: not for signal handlers.
 */
JP_HIDDEN jitperf_fn jp_fn_register(struct jitperf *jp, const char *name,
				    const void *addr, size_t len) JP_NOINSTR;

/* Name of a registered function of jp (NULL if unknown). */
JP_HIDDEN const char *jp_fn_name(struct jitperf *jp, jitperf_fn fn) JP_NOINSTR;

#endif /* JITPERF_INSTRUMENT_H */
