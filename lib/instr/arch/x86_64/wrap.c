/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_wrap machine code for x86-64 (System V ABI).
 *
 * Per wrapped function, a 48-byte stub in a pool page:
 *
 *	endbr64
 *	mov    active(%rip), %r11     &jitperf__probe_active (in the page header)
 *	cmpl   $0, (%r11)
 *	movabs $slot, %r11
 *	je     off
 *	call   *enter(%rip)     shared: saves args, return address -> shadow stack
 *	call   *%r11            the target, with the caller's exact arguments
 *	jmp    *exit(%rip)      shared: return address <- shadow stack, return
 * off:	jmp    *(%r11)          nothing records: straight to the target
 *
 * So with recording off a call costs a load, a compare and an indirect
 * jump more than a direct one, and leaves the stack and every register but
 * r11 as they were.
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

#include "lib/instr/wrap.h"

#ifdef JP_WRAP_X86_64

#define STUB_SIZE  48u
#define STUB_FIRST 32u     /* page header: enter, exit, &jitperf__probe_active */

#define ROUTINE(sfx) \
	extern const char jp_wrap_enter_##sfx[] JP_HIDDEN; \
	extern const char jp_wrap_exit_##sfx[] JP_HIDDEN;
ROUTINE(sse)
ROUTINE(avx)
ROUTINE(avx512)

/*
 * SSE build: frame of 8 GPRs, xmm0-7 and 16 bytes of flags (208 bytes, a
 * multiple of 16, so the helper call is aligned: the routine is entered
 * with rsp = 0 mod 16, as the stub was entered at 8 mod 16 and called us).
 * Exit frame: rax rdx xmm0 xmm1.  When jp_wrap_on_enter could not record
 * the call (no memory for the shadow stack), the routine leaves the
 * caller's return address in place and jumps to the target instead.
 */
#define SAVE_GPRS \
	"	mov %rdi, 0(%rsp)\n" \
	"	mov %rsi, 8(%rsp)\n" \
	"	mov %rdx, 16(%rsp)\n" \
	"	mov %rcx, 24(%rsp)\n" \
	"	mov %r8, 32(%rsp)\n" \
	"	mov %r9, 40(%rsp)\n" \
	"	mov %rax, 48(%rsp)\n" \
	"	mov %r10, 56(%rsp)\n"
#define LOAD_GPRS \
	"	mov 0(%rsp), %rdi\n" \
	"	mov 8(%rsp), %rsi\n" \
	"	mov 16(%rsp), %rdx\n" \
	"	mov 24(%rsp), %rcx\n" \
	"	mov 32(%rsp), %r8\n" \
	"	mov 40(%rsp), %r9\n" \
	"	mov 48(%rsp), %rax\n" \
	"	mov 56(%rsp), %r10\n"

/*
 * GAS macros: \v is the vector register size, \mov its full-width move,
 * \r the register prefix.  JP_VECS applies an instruction pattern to
 * vector registers 0-7 at offsets base + i * v.
 */
__asm__(
	".macro JP_VEC8_STORE mov, r, base, v\n"
	"	.irp i, 0, 1, 2, 3, 4, 5, 6, 7\n"
	"	\\mov %\\r\\i, (\\base + \\i * \\v)(%rsp)\n"
	"	.endr\n"
	".endm\n"
	".macro JP_VEC8_LOAD mov, r, base, v\n"
	"	.irp i, 0, 1, 2, 3, 4, 5, 6, 7\n"
	"	\\mov (\\base + \\i * \\v)(%rsp), %\\r\\i\n"
	"	.endr\n"
	".endm\n"

	/* ZF = 1 when bits 128 and up of the OR of regs 0..n-1 are zero;
	 * uses only scratch registers 8-11 (never arguments or results) */
	".macro JP_UPPER_ymm n\n"
	"	.if \\n == 8\n"
	"	vorps %ymm1, %ymm0, %ymm8\n"
	"	vorps %ymm3, %ymm2, %ymm9\n"
	"	vorps %ymm5, %ymm4, %ymm10\n"
	"	vorps %ymm7, %ymm6, %ymm11\n"
	"	vorps %ymm9, %ymm8, %ymm8\n"
	"	vorps %ymm11, %ymm10, %ymm10\n"
	"	vorps %ymm10, %ymm8, %ymm8\n"
	"	.else\n"
	"	vorps %ymm1, %ymm0, %ymm8\n"
	"	.endif\n"
	"	vextractf128 $1, %ymm8, %xmm8\n"
	"	vptest %xmm8, %xmm8\n"
	".endm\n"
	".macro JP_UPPER_zmm n\n"
	"	.if \\n == 8\n"
	"	vporq %zmm1, %zmm0, %zmm8\n"
	"	vporq %zmm3, %zmm2, %zmm9\n"
	"	vporq %zmm5, %zmm4, %zmm10\n"
	"	vporq %zmm7, %zmm6, %zmm11\n"
	"	vporq %zmm9, %zmm8, %zmm8\n"
	"	vporq %zmm11, %zmm10, %zmm10\n"
	"	vporq %zmm10, %zmm8, %zmm8\n"
	"	.else\n"
	"	vporq %zmm1, %zmm0, %zmm8\n"
	"	.endif\n"
	"	vextracti64x4 $1, %zmm8, %ymm9\n"
	"	vextracti128 $1, %ymm8, %xmm10\n"
	"	vpor %ymm10, %ymm9, %ymm9\n"
	"	vptest %ymm9, %ymm9\n"
	".endm\n"

	".macro JP_FUNC name\n"
	".p2align 4\n"
	".globl \\name\n"
	".hidden \\name\n"
	".type \\name, @function\n"
	"\\name:\n"
	"	endbr64\n"
	".endm\n"
	".text\n"

	/* ---- SSE */
	"JP_FUNC jp_wrap_enter_sse\n"
	"	sub $208, %rsp\n"
	SAVE_GPRS
	"	JP_VEC8_STORE movaps, xmm, 64, 16\n"
	"	mov %r11, %rdi\n"               /* slot */
	"	lea 216(%rsp), %rsi\n"          /* &caller's return address */
	"	call jp_wrap_on_enter\n"
	"	mov %rax, %r11\n"               /* target */
	"	mov %dl, 193(%rsp)\n"           /* recorded? */
	"	test %dl, %dl\n"
	"	jz 3f\n"
	"	mov 208(%rsp), %rax\n"          /* our return address (into the stub) */
	"	mov %rax, 216(%rsp)\n"          /* ... replaces the caller's */
	"3:\n"
	"	JP_VEC8_LOAD movaps, xmm, 64, 16\n"
	"	cmpb $0, 193(%rsp)\n"
	LOAD_GPRS
	"	lea 216(%rsp), %rsp\n"
	"	je 4f\n"
	"	ret\n"                          /* to the stub, which calls the target */
	"4:	jmp *%r11\n"                    /* unrecorded: target returns to the caller */
	".size jp_wrap_enter_sse, . - jp_wrap_enter_sse\n"

	"JP_FUNC jp_wrap_exit_sse\n"
	"	sub $48, %rsp\n"
	"	mov %rax, 0(%rsp)\n"
	"	mov %rdx, 8(%rsp)\n"
	"	movaps %xmm0, 16(%rsp)\n"
	"	movaps %xmm1, 32(%rsp)\n"
	"	lea 48(%rsp), %rdi\n"           /* the sp recorded on entry */
	"	call jp_wrap_on_exit\n"
	"	mov %rax, %r11\n"               /* caller's return address */
	"	mov 0(%rsp), %rax\n"
	"	mov 8(%rsp), %rdx\n"
	"	movaps 16(%rsp), %xmm0\n"
	"	movaps 32(%rsp), %xmm1\n"
	"	lea 48(%rsp), %rsp\n"
	"	push %r11\n"
	"	ret\n"
	".size jp_wrap_exit_sse, . - jp_wrap_exit_sse\n"

	/*
	 * AVX and AVX-512: the same, but the full registers are saved, and
	 * vzeroupper runs before the helper, whose SSE code would otherwise
	 * pay the SSE/AVX transition penalty on every instruction (measured:
	 * 150+ ns per call).  The full width is restored only when some upper
	 * half was non-zero (__m256/__m512 arguments or results); otherwise
	 * the xmm parts are, and the upper state stays clean for the caller.
	 * Enter frame: 8 GPRs, 8 vector registers, two flag bytes (upper halves
	 * set, call recorded), padding to 16.
	 */
	".macro JP_WRAP_WIDE sfx, v, mov, r\n"
	"JP_FUNC jp_wrap_enter_\\sfx\n"
	"	sub $(64 + 8 * \\v + 16), %rsp\n"
	SAVE_GPRS
	"	JP_VEC8_STORE \\mov, \\r, 64, \\v\n"
	"	JP_UPPER_\\r 8\n"
	"	setnz (64 + 8 * \\v)(%rsp)\n"
	"	vzeroupper\n"
	"	mov %r11, %rdi\n"
	"	lea (64 + 8 * \\v + 24)(%rsp), %rsi\n"
	"	call jp_wrap_on_enter\n"
	"	mov %rax, %r11\n"
	"	mov %dl, (64 + 8 * \\v + 1)(%rsp)\n"
	"	test %dl, %dl\n"
	"	jz 3f\n"
	"	mov (64 + 8 * \\v + 16)(%rsp), %rax\n"
	"	mov %rax, (64 + 8 * \\v + 24)(%rsp)\n"
	"3:\n"
	"	cmpb $0, (64 + 8 * \\v)(%rsp)\n"
	"	jne 1f\n"
	"	JP_VEC8_LOAD movaps, xmm, 64, \\v\n"
	"	jmp 2f\n"
	"1:\n"
	"	JP_VEC8_LOAD \\mov, \\r, 64, \\v\n"
	"2:\n"
	"	cmpb $0, (64 + 8 * \\v + 1)(%rsp)\n"
	LOAD_GPRS
	"	lea (64 + 8 * \\v + 24)(%rsp), %rsp\n"
	"	je 4f\n"
	"	ret\n"
	"4:	jmp *%r11\n"
	".size jp_wrap_enter_\\sfx, . - jp_wrap_enter_\\sfx\n"

	"JP_FUNC jp_wrap_exit_\\sfx\n"
	"	sub $(16 + 2 * \\v + 16), %rsp\n"
	"	mov %rax, 0(%rsp)\n"
	"	mov %rdx, 8(%rsp)\n"
	"	\\mov %\\r\\()0, 16(%rsp)\n"
	"	\\mov %\\r\\()1, (16 + \\v)(%rsp)\n"
	"	JP_UPPER_\\r 2\n"
	"	setnz (16 + 2 * \\v)(%rsp)\n"
	"	vzeroupper\n"
	"	lea (16 + 2 * \\v + 16)(%rsp), %rdi\n"
	"	call jp_wrap_on_exit\n"
	"	mov %rax, %r11\n"
	"	cmpb $0, (16 + 2 * \\v)(%rsp)\n"
	"	jne 1f\n"
	"	movaps 16(%rsp), %xmm0\n"
	"	movaps (16 + \\v)(%rsp), %xmm1\n"
	"	jmp 2f\n"
	"1:\n"
	"	\\mov 16(%rsp), %\\r\\()0\n"
	"	\\mov (16 + \\v)(%rsp), %\\r\\()1\n"
	"2:\n"
	"	mov 0(%rsp), %rax\n"
	"	mov 8(%rsp), %rdx\n"
	"	lea (16 + 2 * \\v + 16)(%rsp), %rsp\n"
	"	push %r11\n"
	"	ret\n"
	".size jp_wrap_exit_\\sfx, . - jp_wrap_exit_\\sfx\n"
	".endm\n"

	"JP_WRAP_WIDE avx, 32, vmovdqu, ymm\n"
	"JP_WRAP_WIDE avx512, 64, vmovdqu64, zmm\n"
	".purgem JP_WRAP_WIDE\n"
	".purgem JP_FUNC\n"
	".purgem JP_UPPER_zmm\n"
	".purgem JP_UPPER_ymm\n"
	".purgem JP_VEC8_LOAD\n"
	".purgem JP_VEC8_STORE\n"
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
	const volatile int *active = &jitperf__probe_active;
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
	memcpy(page + 16, &active, sizeof(active));

	for (i = 0; i < n; i++) {
		uint8_t *s = page + jp_wrap_arch_stub_offset(i);
		uint64_t slot = (uint64_t)(uintptr_t)&slots[i];

		s[0] = 0xf3; s[1] = 0x0f; s[2] = 0x1e; s[3] = 0xfa;   /* endbr64 */
		s[4] = 0x4c; s[5] = 0x8b; s[6] = 0x1d;                /* mov active(%rip), %r11 */
		put32(s + 7, rip_rel(s + 11, page + 16));
		s[11] = 0x41; s[12] = 0x83; s[13] = 0x3b; s[14] = 0x00; /* cmpl $0, (%r11) */
		s[15] = 0x49; s[16] = 0xbb;                           /* movabs $slot, %r11 */
		memcpy(s + 17, &slot, 8);
		s[25] = 0x74; s[26] = 42 - 27;                        /* je off */
		s[27] = 0xff; s[28] = 0x15;                           /* call *enter(%rip) */
		put32(s + 29, rip_rel(s + 33, page));
		s[33] = 0x41; s[34] = 0xff; s[35] = 0xd3;             /* call *%r11 */
		s[36] = 0xff; s[37] = 0x25;                           /* jmp *exit(%rip) */
		put32(s + 38, rip_rel(s + 42, page + 8));
		s[42] = 0x41; s[43] = 0xff; s[44] = 0x23;             /* off: jmp *(%r11) */
	}
	return n;
}
#else
/* Built on an x86-64 host for another ABI (-m32, x32): lib/instr/wrap.c says -EOPNOTSUPP. */
typedef int jp_wrap_x86_64_not_built;
#endif
