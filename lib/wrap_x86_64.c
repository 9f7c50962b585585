/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_wrap machine code for x86-64 (System V ABI).
 *
 * Per wrapped function, a 32-byte stub in a pool page:
 *
 *	endbr64
 *	movabs $slot, %r11
 *	call   *enter(%rip)     shared: saves args, return address -> shadow stack
 *	call   *%r11            the target, with the caller's exact arguments
 *	jmp    *exit(%rip)      shared: return address <- shadow stack, return
 *
 * The two shared routines are below, in three builds: SSE (xmm0-7 carry
 * arguments), AVX (ymm0-7, for __m256 arguments) and AVX-512 (zmm0-7); the
 * widest one the CPU and kernel support is chosen when a page is made.
 *
 * Why the return address moves: stack arguments must sit exactly where the
 * target expects them, right above its own return address, so the caller's
 * return address cannot stay in between.  The enter routine stores it on
 * the shadow stack and puts its own return address (into the stub) in its
 * place, so it "returns" to the stub with the stack pointer at the stack
 * arguments.  The return address the target sees is inside the stub, which
 * the perf map names "wrap:<function>"; call-return pairs stay balanced, so
 * the CPU's return predictor stays right.
 *
 * Register use: rdi rsi rdx rcx r8 r9 (integer arguments), rax (%al = vector
 * registers used by a variadic call), r10 (static chain) and vector 0-7 are
 * saved around the helper call on entry; rax rdx and vector 0-1 (return
 * values) on exit.  r11 is the only scratch the stub uses (the ABI leaves
 * it free at calls).  The helpers are C code that does not touch x87, so a
 * long double result in st(0) passes through.  Each call is made with the
 * stack 16-byte aligned.
 */
#include "config.h"

#include <string.h>

#include "wrap.h"

#define STUB_SIZE  32u
#define STUB_FIRST 32u     /* page starts with the two routine pointers */

#define ROUTINE(sfx) \
	extern const char jp_wrap_enter_##sfx[] JP_HIDDEN; \
	extern const char jp_wrap_exit_##sfx[] JP_HIDDEN;
ROUTINE(sse)
ROUTINE(avx)
ROUTINE(avx512)

/*
 * \mov is the vector store/load and \r the register prefix; \v is the
 * vector register size.  Enter frame: 8 GPRs then 8 vector registers, and
 * 64 + 8v is a multiple of 16, so the helper call is aligned (the routine
 * is entered with rsp = 0 mod 16: the stub was entered at 8 mod 16 and
 * called us).  Exit frame: rax rdx then 2 vector registers.
 */
__asm__(
	".macro JP_WRAP_ROUTINES sfx, v, mov, r\n"
	".text\n"
	".p2align 4\n"
	".globl jp_wrap_enter_\\sfx\n"
	".hidden jp_wrap_enter_\\sfx\n"
	".type jp_wrap_enter_\\sfx, @function\n"
	"jp_wrap_enter_\\sfx:\n"
	"	endbr64\n"
	"	sub $(64 + 8 * \\v), %rsp\n"
	"	mov %rdi, 0(%rsp)\n"
	"	mov %rsi, 8(%rsp)\n"
	"	mov %rdx, 16(%rsp)\n"
	"	mov %rcx, 24(%rsp)\n"
	"	mov %r8, 32(%rsp)\n"
	"	mov %r9, 40(%rsp)\n"
	"	mov %rax, 48(%rsp)\n"
	"	mov %r10, 56(%rsp)\n"
	"	\\mov %\\r\\()0, 64 + 0 * \\v(%rsp)\n"
	"	\\mov %\\r\\()1, 64 + 1 * \\v(%rsp)\n"
	"	\\mov %\\r\\()2, 64 + 2 * \\v(%rsp)\n"
	"	\\mov %\\r\\()3, 64 + 3 * \\v(%rsp)\n"
	"	\\mov %\\r\\()4, 64 + 4 * \\v(%rsp)\n"
	"	\\mov %\\r\\()5, 64 + 5 * \\v(%rsp)\n"
	"	\\mov %\\r\\()6, 64 + 6 * \\v(%rsp)\n"
	"	\\mov %\\r\\()7, 64 + 7 * \\v(%rsp)\n"
	"	mov %r11, %rdi\n"                       /* slot */
	"	lea (64 + 8 * \\v + 8)(%rsp), %rsi\n"   /* &caller's return address */
	"	call jp_wrap_on_enter\n"
	"	mov %rax, %r11\n"                       /* target */
	"	mov (64 + 8 * \\v)(%rsp), %rax\n"       /* our return address (stub) */
	"	mov %rax, (64 + 8 * \\v + 8)(%rsp)\n"   /* ... replaces the caller's */
	"	\\mov 64 + 0 * \\v(%rsp), %\\r\\()0\n"
	"	\\mov 64 + 1 * \\v(%rsp), %\\r\\()1\n"
	"	\\mov 64 + 2 * \\v(%rsp), %\\r\\()2\n"
	"	\\mov 64 + 3 * \\v(%rsp), %\\r\\()3\n"
	"	\\mov 64 + 4 * \\v(%rsp), %\\r\\()4\n"
	"	\\mov 64 + 5 * \\v(%rsp), %\\r\\()5\n"
	"	\\mov 64 + 6 * \\v(%rsp), %\\r\\()6\n"
	"	\\mov 64 + 7 * \\v(%rsp), %\\r\\()7\n"
	"	mov 0(%rsp), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	mov 16(%rsp), %rdx\n"
	"	mov 24(%rsp), %rcx\n"
	"	mov 32(%rsp), %r8\n"
	"	mov 40(%rsp), %r9\n"
	"	mov 48(%rsp), %rax\n"
	"	mov 56(%rsp), %r10\n"
	"	lea (64 + 8 * \\v + 8)(%rsp), %rsp\n"
	"	ret\n"
	".size jp_wrap_enter_\\sfx, . - jp_wrap_enter_\\sfx\n"
	"\n"
	".p2align 4\n"
	".globl jp_wrap_exit_\\sfx\n"
	".hidden jp_wrap_exit_\\sfx\n"
	".type jp_wrap_exit_\\sfx, @function\n"
	"jp_wrap_exit_\\sfx:\n"
	"	endbr64\n"
	"	sub $(16 + 2 * \\v), %rsp\n"
	"	mov %rax, 0(%rsp)\n"
	"	mov %rdx, 8(%rsp)\n"
	"	\\mov %\\r\\()0, 16(%rsp)\n"
	"	\\mov %\\r\\()1, 16 + \\v(%rsp)\n"
	"	lea (16 + 2 * \\v)(%rsp), %rdi\n"       /* the sp recorded on entry */
	"	call jp_wrap_on_exit\n"
	"	mov %rax, %r11\n"                       /* caller's return address */
	"	mov 0(%rsp), %rax\n"
	"	mov 8(%rsp), %rdx\n"
	"	\\mov 16(%rsp), %\\r\\()0\n"
	"	\\mov 16 + \\v(%rsp), %\\r\\()1\n"
	"	lea (16 + 2 * \\v)(%rsp), %rsp\n"
	"	push %r11\n"
	"	ret\n"
	".size jp_wrap_exit_\\sfx, . - jp_wrap_exit_\\sfx\n"
	".endm\n"
	"JP_WRAP_ROUTINES sse, 16, movaps, xmm\n"
	"JP_WRAP_ROUTINES avx, 32, vmovdqu, ymm\n"
	"JP_WRAP_ROUTINES avx512, 64, vmovdqu64, zmm\n"
	".purgem JP_WRAP_ROUTINES\n"
	".previous\n");

size_t jp_wrap_arch_stub_size(void)
{
	return STUB_SIZE;
}

size_t jp_wrap_arch_stub_offset(size_t i)
{
	return STUB_FIRST + i * STUB_SIZE;
}

static void put32(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }

/* rel32 of a RIP-relative operand: target minus the end of the instruction */
static int32_t rip_rel(const uint8_t *insn_end, const uint8_t *target)
{
	return (int32_t)(target - insn_end);
}

size_t jp_wrap_arch_fill(uint8_t *page, size_t pagesize,
			 struct jp_wrap_slot *slots, size_t nslots)
{
	const void *enter = jp_wrap_enter_sse, *exit = jp_wrap_exit_sse;
	size_t i, n = (pagesize - STUB_FIRST) / STUB_SIZE;

	/* libgcc checks that the kernel saves the wider registers (XCR0) */
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		enter = jp_wrap_enter_avx512;
		exit = jp_wrap_exit_avx512;
	} else if (__builtin_cpu_supports("avx")) {
		enter = jp_wrap_enter_avx;
		exit = jp_wrap_exit_avx;
	}
	if (n > nslots)
		n = nslots;
	memset(page, 0xcc, pagesize);           /* int3 everywhere else */
	memcpy(page, &enter, sizeof(enter));
	memcpy(page + 8, &exit, sizeof(exit));

	for (i = 0; i < n; i++) {
		uint8_t *s = page + jp_wrap_arch_stub_offset(i);
		uint64_t slot = (uint64_t)(uintptr_t)&slots[i];

		s[0] = 0xf3; s[1] = 0x0f; s[2] = 0x1e; s[3] = 0xfa;   /* endbr64 */
		s[4] = 0x49; s[5] = 0xbb;                             /* movabs $slot, %r11 */
		memcpy(s + 6, &slot, 8);
		s[14] = 0xff; s[15] = 0x15;                           /* call *enter(%rip) */
		put32(s + 16, rip_rel(s + 20, page));
		s[20] = 0x41; s[21] = 0xff; s[22] = 0xd3;             /* call *%r11 */
		s[23] = 0xff; s[24] = 0x25;                           /* jmp *exit(%rip) */
		put32(s + 25, rip_rel(s + 29, page + 8));
	}
	return n;
}
