/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_wrap machine code for AArch64 (AAPCS64, LP64).
 *
 * Per wrapped function, a 64-byte stub in a pool page:
 *
 *	 0  ldr  x16, active        &jitperf__probe_active (in the page header)
 *	 4  ldr  w16, [x16]
 *	 8  ldr  x17, slot          the literal at +56
 *	12  cbz  w16, off
 *	16  stp  x17, x30, [sp, #-16]!
 *	20  ldr  x16, enter
 *	24  blr  x16                shared: saves args, x30 -> shadow stack
 *	28  blr  x16                the target, with the caller's exact arguments
 *	32  ldr  x16, exit
 *	36  br   x16                shared: x30 <- shadow stack, return
 *	40  off: ldr x16, [x17]     nothing records: straight to the target
 *	44  br   x16
 *	48  brk  #0, brk #0
 *	56  .quad slot
 *
 * The caller's return address is in x30, not on the stack, so nothing has
 * to move for the stack arguments: the stub pushes x30 (with the slot, to
 * keep sp 16-byte aligned) only so that the enter routine can reach it
 * after its own call has overwritten x30.  The enter routine stores it on
 * the shadow stack, pops the 16 bytes and returns to the stub, which calls
 * the target with sp exactly where the caller left it.  The target returns
 * into the stub (named "wrap:<function>" in the perf map), and the exit
 * routine returns to the caller with x30 taken back from the shadow stack.
 *
 * Register use: x0-x7 and v0-v7 (arguments), x8 (indirect result) and x18
 * (GCC's static chain) are saved around the helper call on entry; x0-x1 and
 * v0-v3 (results, homogeneous aggregates included) on exit.  x16 and x17
 * (IP0/IP1, free at any call by the ABI) are the only scratch registers the
 * stub uses.  Saving v0-v7 whole keeps the 128-bit vector and long double
 * arguments; SVE's wider z registers and its predicates are not saved, so
 * functions that take or return scalable vectors cannot be wrapped
 * (jitperf_wrap(3)).  Both routines start with a BTI landing pad, since
 * the stub reaches them with blr/br x16.
 */
#include "config.h"

#include <string.h>

#include "lib/instr/wrap.h"

#ifdef JP_WRAP_AARCH64

#define STUB_SIZE  64u
#define STUB_FIRST 32u     /* page header: enter, exit, &jitperf__probe_active */

extern const char jp_wrap_enter_a64[] JP_HIDDEN;
extern const char jp_wrap_exit_a64[] JP_HIDDEN;

/*
 * Enter frame (224 bytes): x29 x30 | x0-x7 | x8 x18 | q0-q7; above it the
 * stub's pair (slot, caller's x30) at 224 and 232.
 * Exit frame (96 bytes): x29 x30 | x0 x1 | q0-q3.
 */
__asm__(
	".text\n"
	".p2align 4\n"
	".globl jp_wrap_enter_a64\n"
	".hidden jp_wrap_enter_a64\n"
	".type jp_wrap_enter_a64, %function\n"
	"jp_wrap_enter_a64:\n"
	"	hint #34\n"                     /* bti c */
	"	sub sp, sp, #224\n"
	"	stp x29, x30, [sp, #0]\n"
	"	mov x29, sp\n"
	"	stp x0, x1, [sp, #16]\n"
	"	stp x2, x3, [sp, #32]\n"
	"	stp x4, x5, [sp, #48]\n"
	"	stp x6, x7, [sp, #64]\n"
	"	stp x8, x18, [sp, #80]\n"
	"	stp q0, q1, [sp, #96]\n"
	"	stp q2, q3, [sp, #128]\n"
	"	stp q4, q5, [sp, #160]\n"
	"	stp q6, q7, [sp, #192]\n"
	"	mov x0, x17\n"                  /* slot */
	"	add x1, sp, #232\n"             /* &caller's return address */
	"	bl jp_wrap_on_enter\n"
	"	mov x16, x0\n"                  /* target */
	"	mov x17, x1\n"                  /* recorded? */
	"	ldp q0, q1, [sp, #96]\n"
	"	ldp q2, q3, [sp, #128]\n"
	"	ldp q4, q5, [sp, #160]\n"
	"	ldp q6, q7, [sp, #192]\n"
	"	ldp x0, x1, [sp, #16]\n"
	"	ldp x2, x3, [sp, #32]\n"
	"	ldp x4, x5, [sp, #48]\n"
	"	ldp x6, x7, [sp, #64]\n"
	"	ldp x8, x18, [sp, #80]\n"
	"	ldp x29, x30, [sp, #0]\n"
	"	cbz x17, 1f\n"
	"	add sp, sp, #240\n"
	"	ret\n"                          /* to the stub, which calls the target */
	"1:	ldr x30, [sp, #232]\n"          /* unrecorded: the target returns */
	"	add sp, sp, #240\n"             /* straight to the caller */
	"	br x16\n"
	".size jp_wrap_enter_a64, . - jp_wrap_enter_a64\n"

	".p2align 4\n"
	".globl jp_wrap_exit_a64\n"
	".hidden jp_wrap_exit_a64\n"
	".type jp_wrap_exit_a64, %function\n"
	"jp_wrap_exit_a64:\n"
	"	hint #34\n"
	"	sub sp, sp, #96\n"
	"	stp x29, x30, [sp, #0]\n"
	"	mov x29, sp\n"
	"	stp x0, x1, [sp, #16]\n"
	"	stp q0, q1, [sp, #32]\n"
	"	stp q2, q3, [sp, #64]\n"
	"	add x0, sp, #96\n"              /* the sp the target saw */
	"	bl jp_wrap_on_exit\n"
	"	mov x30, x0\n"                  /* caller's return address */
	"	ldp x0, x1, [sp, #16]\n"
	"	ldp q0, q1, [sp, #32]\n"
	"	ldp q2, q3, [sp, #64]\n"
	"	ldr x29, [sp, #0]\n"
	"	add sp, sp, #96\n"
	"	ret\n"
	".size jp_wrap_exit_a64, . - jp_wrap_exit_a64\n"
	".previous\n");

size_t jp_wrap_arch_stub_size(void)
{
	return STUB_SIZE;
}

size_t jp_wrap_arch_stub_offset(size_t i)
{
	return STUB_FIRST + i * STUB_SIZE;
}

/* ---- A64 encodings the stub needs (little-endian words) */

enum { X16 = 16, X17 = 17, X30 = 30, SP = 31 };

static void put(uint8_t *s, size_t off, uint32_t insn)
{
	memcpy(s + off, &insn, 4);
}

/* imm19 of a pc-relative literal load or branch from s + off to target */
static uint32_t rel19(const uint8_t *s, size_t off, const uint8_t *target)
{
	return (uint32_t)(((target - (s + off)) / 4) & 0x7ffff) << 5;
}

static uint32_t ldr_x_lit(unsigned rt) { return 0x58000000u | rt; }
static uint32_t ldr_w_reg(unsigned rt, unsigned rn) { return 0xb9400000u | rn << 5 | rt; }
static uint32_t ldr_x_reg(unsigned rt, unsigned rn) { return 0xf9400000u | rn << 5 | rt; }
static uint32_t cbz_w(unsigned rt) { return 0x34000000u | rt; }
static uint32_t blr(unsigned rn) { return 0xd63f0000u | rn << 5; }
static uint32_t br(unsigned rn) { return 0xd61f0000u | rn << 5; }
#define BRK0 0xd4200000u

/* stp xt1, xt2, [sp, #-16]! */
static uint32_t stp_push16(unsigned rt1, unsigned rt2)
{
	return 0xa9800000u | (0x7eu << 15) | rt2 << 10 | SP << 5 | rt1;
}

size_t jp_wrap_arch_fill(uint8_t *page, size_t pagesize,
			 struct jp_wrap_slot *slots, size_t nslots)
{
	const void *enter = jp_wrap_enter_a64, *exit = jp_wrap_exit_a64;
	const volatile int *active = &jitperf__probe_active;
	size_t i, off, n = (pagesize - STUB_FIRST) / STUB_SIZE;

	if (n > nslots)
		n = nslots;
	for (off = 0; off + 4 <= pagesize; off += 4)
		put(page, off, BRK0);           /* brk everywhere else */
	memcpy(page, &enter, sizeof(enter));
	memcpy(page + 8, &exit, sizeof(exit));
	memcpy(page + 16, &active, sizeof(active));

	for (i = 0; i < n; i++) {
		uint8_t *s = page + jp_wrap_arch_stub_offset(i);
		uint64_t slot = (uint64_t)(uintptr_t)&slots[i];

		put(s, 0, ldr_x_lit(X16) | rel19(s, 0, page + 16));
		put(s, 4, ldr_w_reg(X16, X16));
		put(s, 8, ldr_x_lit(X17) | rel19(s, 8, s + 56));
		put(s, 12, cbz_w(X16) | rel19(s, 12, s + 40));
		put(s, 16, stp_push16(X17, X30));
		put(s, 20, ldr_x_lit(X16) | rel19(s, 20, page));
		put(s, 24, blr(X16));
		put(s, 28, blr(X16));
		put(s, 32, ldr_x_lit(X16) | rel19(s, 32, page + 8));
		put(s, 36, br(X16));
		put(s, 40, ldr_x_reg(X16, X17));
		put(s, 44, br(X16));
		memcpy(s + 56, &slot, sizeof(slot));
	}
	return n;
}
#else
/* Built for another AArch64 ABI (ILP32, big-endian): lib/instr/wrap.c says -EOPNOTSUPP. */
typedef int jp_wrap_aarch64_not_built;
#endif
