/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf-llvm.h - libjitperf for LLVM JITs (ORC, MCJIT): a JIT event
 * listener that registers every function LLVM loads with libjitperf, and
 * an instrumentation pass that times every call of the JIT's functions.
 * C API; the library is C++ inside.  Link with
 * `pkg-config --cflags --libs jitperf-llvm`.
 */
#ifndef JITPERF_LLVM_H
#define JITPERF_LLVM_H

#include <jitperf.h>
#include <llvm-c/Types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
# define JITPERF_LLVM_API __attribute__((visibility("default")))
#else
# define JITPERF_LLVM_API
#endif

/*
 * A drop-in for LLVMCreatePerfJITEventListener(): register it with
 * LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener() (ORC),
 * LLVMExecutionEngine's listeners (MCJIT) or C++ registerJITEventListener.
 * For every function symbol of each loaded object it calls
 * jitperf_code_load_ex() on jp with the function's name, address and size,
 * its source lines (from its DWARF line tables) and its .eh_frame; when LLVM
 * frees the object, jitperf_code_unload().  jp NULL = jitperf_default().
 * One listener per session, alive until the process exits (callers never
 * free it, as with LLVM's); jp must stay open while the JIT loads or frees
 * objects.  Thread-safe.  NULL with errno ENOMEM on failure.
 */
JITPERF_LLVM_API LLVMJITEventListenerRef jitperf_llvm_event_listener(jitperf *jp);

/*
 * Instrument every function defined in mod: a jitperf_enter(id) call at its
 * entry and a jitperf_exit(id) call before each of its returns, each behind
 * an inline check of the exported flag jitperf__probe_active (one load and
 * one branch when nothing records).  Each function is registered with
 * jitperf_fn_register(jp, its name, NULL, 0) (jp NULL = jitperf_default()).
 * The JIT must resolve jitperf_enter, jitperf_exit and jitperf__probe_active
 * from the process (ORC: a DynamicLibrarySearchGenerator for the process).
 * Functions instrumented before are left alone.  Returns the number of
 * functions instrumented, or -EINVAL (mod NULL), -ENOMEM, -ENOBUFS (the
 * session's function table is full).
 * Not thread-safe for one module (LLVM modules are not).
 */
JITPERF_LLVM_API int jitperf_llvm_instrument_module(jitperf *jp, LLVMModuleRef mod);

#ifdef __cplusplus
}
#endif
#endif /* JITPERF_LLVM_H */
