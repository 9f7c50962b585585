/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_wrap internals: the split between the architecture-independent
 * part (lib/instr/wrap.c: stub pool; shadow.c: per-thread shadow stack, the
 * C helpers the thunks call) and the machine-code part
 * (lib/instr/arch/<arch>/wrap.c).  Internal.
 *
 * A wrapped function is a small stub in an executable pool page.  When
 * nothing records it jumps straight to the function; otherwise the stub
 * loads the address of its slot, calls the shared "enter" routine (which
 * saves every argument register, moves the caller's return address to the
 * shadow stack via jp_wrap_on_enter and returns the target), calls the
 * target with the caller's untouched arguments, then jumps to the shared
 * "exit" routine (which saves the return registers, gets the return
 * address back from jp_wrap_on_exit and returns to the caller).  How each
 * architecture reaches the caller's return address is in its arch/ file.
 */
#ifndef JITPERF_WRAP_H
#define JITPERF_WRAP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/session.h"

/* The generators (lib/instr/arch/) need LP64: the System V ABI on x86-64,
 * AAPCS64 on little-endian AArch64. */
#if defined(__x86_64__) && !defined(__ILP32__)
# define JP_WRAP_X86_64 1
#elif defined(__aarch64__) && !defined(__ILP32__) && \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define JP_WRAP_AARCH64 1
#endif

/* What a stub refers to; lives in ordinary (writable) memory. */
struct jp_wrap_slot {
	const void *entry;    /* the wrapped function (first: stubs jump through it) */
	jitperf_fn  fn;       /* recorded by the probes */
};

/* What the enter routine does next (returned in two registers: rax:rdx, x0:x1). */
struct jp_wrap_go {
	const void *target;
	uintptr_t   recorded;   /* 0: the shadow stack could not grow; jump
				   to target with the caller's return address */
};

/*
 * Called by the shared enter routine.  ret_slot points at the caller's
 * return address on the stack (where the call put it on x86-64, where the
 * stub pushed x30 on AArch64); the stack pointer the target sees (before
 * a call pushes its own return address) is ret_slot + 1.
 */
JP_HIDDEN struct jp_wrap_go jp_wrap_on_enter(struct jp_wrap_slot *slot, uintptr_t *ret_slot);

/* Called by the shared exit routine with the same stack pointer; returns
 * the caller's return address. */
JP_HIDDEN uintptr_t jp_wrap_on_exit(uintptr_t sp);

/*
 * Machine-code part.  jp_wrap_arch_fill writes a page of stubs for
 * slots[0..] into page (writable, not yet executable), stub i at
 * page + jp_wrap_arch_stub_offset(i), and returns how many fit, or 0 when
 * this architecture is not supported.
 */
JP_HIDDEN size_t jp_wrap_arch_fill(uint8_t *page, size_t pagesize,
				   struct jp_wrap_slot *slots, size_t nslots);
JP_HIDDEN size_t jp_wrap_arch_stub_offset(size_t i);
JP_HIDDEN size_t jp_wrap_arch_stub_size(void);

#endif /* JITPERF_WRAP_H */
