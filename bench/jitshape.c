/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/jitshape: the shape of a JIT whose generated code calls the probes
 * around a short recursive function.  It emits x86-64 machine code for
 *
 *	f(n) = n < 2 ? 1 : f(n - 1) + f(n - 2)
 *
 * (1-2 ns a call; f(35) makes 29860703 calls from one root call) into
 * executable memory, registers it (perf map, jitdump, jitperf_fn) and
 * runs it once.  VARIANT is the probe code the "JIT" emitted:
 *
 *	plain    none
 *	call     calls of the exported jitperf_enter/jitperf_exit by address
 *	check    the inactive check inline (load jitperf__probe_active and
 *	         branch to those calls, placed out of line)
 *	stack    the counting path inline, as jitperf.h does it in C (count,
 *	         push the id on the thread's stack), calling
 *	         jitperf__enter_slow/jitperf__exit_slow when it cannot count
 *	inline   the count inline and a flag in the frame, as the example JIT
 *	         does by default: jitperf__enter_framed only for the calls
 *	         the library must see, jitperf__exit_slow when the flag says so
 *
 * usage: jitshape VARIANT [N]   (N = 35; prints "VARIANT calls=C ns=T cpu_ns=U
 * proc_ns=V cpu_ns/call=P": the wall and thread CPU time of the root call
 * as the JIT's client sees it, and the CPU time of every thread of the
 * process from the root call to the end of jitperf_close)
 * The environment (JITPERF, JITPERF_SAMPLE, ...) decides what records.
 * bench/jitshape.sh runs the variants against each other and under
 * jitperf record.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "jitperf.h"

struct buf { uint8_t b[4096]; size_t n; };

static void put(struct buf *o, const void *p, size_t n)
{
	if (o->n + n > sizeof(o->b)) {
		fprintf(stderr, "jitshape: code buffer full\n");
		exit(1);
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

#define B(o, ...) do { static const uint8_t b_[] = { __VA_ARGS__ }; put(o, b_, sizeof(b_)); } while (0)

static void put32(struct buf *o, uint32_t v)
{
	put(o, &v, 4);
}

static void put64(struct buf *o, uint64_t v)
{
	put(o, &v, 8);
}

/* rel32 at `at` to land at the current position */
static void land(struct buf *o, size_t at)
{
	uint32_t rel = (uint32_t)(o->n - (at + 4));

	memcpy(o->b + at, &rel, 4);
}

/* jcc rel32 (0x0f op) or jmp rel32 (op 0xe9); returns the rel32's offset */
static size_t jump(struct buf *o, uint8_t op)
{
	uint8_t b[2] = { 0x0f, op };

	if (op == 0xe9)
		put(o, &op, 1);
	else
		put(o, b, 2);
	put32(o, 0);
	return o->n - 4;
}

static void jump_to(struct buf *o, uint8_t op, size_t target)
{
	size_t at = jump(o, op);
	uint32_t rel = (uint32_t)(target - (at + 4));

	memcpy(o->b + at, &rel, 4);
}

enum { JE = 0x84, JNE = 0x85, JAE = 0x83, JL = 0x8c, JMP = 0xe9 };

/* mov $id,%edi; movabs $fn,%rax; call *%rax */
static void call_probe(struct buf *o, uint32_t id, void (*fn)(jitperf_fn))
{
	B(o, 0xbf);
	put32(o, id);
	B(o, 0x48, 0xb8);
	put64(o, (uint64_t)(uintptr_t)fn);
	B(o, 0xff, 0xd0);
}

/* movabs $&jitperf__probe_active,%rax; mov (%rax),%eax; test %eax,%eax */
static void load_active(struct buf *o)
{
	B(o, 0x48, 0xb8);
	put64(o, (uint64_t)(uintptr_t)&jitperf__probe_active);
	B(o, 0x8b, 0x00, 0x85, 0xc0);
}

/* The offset of jitperf__tls from the thread pointer (%fs:0): the same in
 * every thread, as the library's TLS is static (initial-exec). */
static int32_t tls_off(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (int32_t)((uintptr_t)&jitperf__tls - tp);
}

/* an instruction with an %fs:disp32 operand: 64 [REX] op modrm(reg,100) 25 disp32 */
static void fs_op(struct buf *o, uint8_t rex, uint8_t op, uint8_t reg, int32_t disp)
{
	B(o, 0x64);
	if (rex)
		put(o, &rex, 1);
	put(o, &op, 1);
	{
		uint8_t modrm = (uint8_t)(reg << 3 | 4), sib = 0x25;

		put(o, &modrm, 1);
		put(o, &sib, 1);
	}
	put32(o, (uint32_t)disp);
}

struct pending { size_t on, back; };   /* out-of-line part: where to jump in and back */

/* The counting path of jitperf.h's jitperf_enter_inline_, out of line at
 * the end of the function; %eax holds the generation. */
static void inline_enter_tail(struct buf *o, uint32_t id, int32_t T, struct pending *p)
{
	size_t slow[3];

	land(o, p->on);
	fs_op(o, 0, 0x3b, 0, T + 0);                    /* cmp %fs:gen,%eax */
	slow[0] = jump(o, JNE);
	fs_op(o, 0, 0x8b, 1, T + 4);                    /* mov %fs:depth,%ecx */
	B(o, 0x81, 0xf9); put32(o, JITPERF__STACK_MAX); /* cmp $MAX,%ecx */
	slow[1] = jump(o, JAE);
	fs_op(o, 0x48, 0x8b, 2, T + 16);                /* mov %fs:count,%rdx */
	B(o, 0x48, 0x8b, 0xb2); put32(o, 16 * id);      /* mov calls(%rdx),%rsi */
	B(o, 0x48, 0xff, 0xc6);                         /* inc %rsi */
	B(o, 0x48, 0x3b, 0xb2); put32(o, 16 * id + 8);  /* cmp next(%rdx),%rsi */
	slow[2] = jump(o, JAE);
	B(o, 0x8d, 0x71, 0x01);                         /* lea 1(%rcx),%esi */
	fs_op(o, 0, 0x89, 6, T + 4);                    /* mov %esi,%fs:depth */
	fs_op(o, 0x48, 0x8b, 6, T + 8);                 /* mov %fs:stack,%rsi */
	B(o, 0xc7, 0x04, 0x8e); put32(o, id);           /* movl $id,(%rsi,%rcx,4) */
	B(o, 0x48, 0xff, 0x82); put32(o, 16 * id);      /* incq calls(%rdx) */
	fs_op(o, 0x48, 0xff, 0, T + 24);                /* incq %fs:inline_calls */
	jump_to(o, JMP, p->back);
	for (int i = 0; i < 3; i++)
		land(o, slow[i]);
	call_probe(o, id, jitperf__enter_slow);
	jump_to(o, JMP, p->back);
}

/* jitperf_exit_inline_'s counting path, out of line. */
static void inline_exit_tail(struct buf *o, uint32_t id, int32_t T, struct pending *p)
{
	size_t slow[3];

	land(o, p->on);
	fs_op(o, 0, 0x3b, 0, T + 0);                    /* cmp %fs:gen,%eax */
	slow[0] = jump(o, JNE);
	fs_op(o, 0, 0x8b, 1, T + 4);                    /* mov %fs:depth,%ecx */
	B(o, 0xff, 0xc9);                               /* dec %ecx */
	B(o, 0x81, 0xf9); put32(o, JITPERF__STACK_MAX); /* cmp $MAX,%ecx */
	slow[1] = jump(o, JAE);
	fs_op(o, 0x48, 0x8b, 6, T + 8);                 /* mov %fs:stack,%rsi */
	B(o, 0x81, 0x3c, 0x8e); put32(o, id);           /* cmpl $id,(%rsi,%rcx,4) */
	slow[2] = jump(o, JNE);
	fs_op(o, 0, 0x89, 1, T + 4);                    /* mov %ecx,%fs:depth */
	jump_to(o, JMP, p->back);
	for (int i = 0; i < 3; i++)
		land(o, slow[i]);
	call_probe(o, id, jitperf__exit_slow);
	jump_to(o, JMP, p->back);
}

enum variant { PLAIN, CALL, CHECK, STACK, INLINE };

/* The count of jitperf__enter_fast without the stack; %eax holds the
 * generation.  Out of line; the flag byte is at -24(%rbp). */
static void framed_enter_tail(struct buf *o, uint32_t id, int32_t T, struct pending *p)
{
	size_t slow[2];

	land(o, p->on);
	fs_op(o, 0, 0x3b, 0, T + 0);                    /* cmp %fs:gen,%eax */
	slow[0] = jump(o, JNE);
	fs_op(o, 0x48, 0x8b, 2, T + 16);                /* mov %fs:count,%rdx */
	B(o, 0x48, 0x8b, 0xb2); put32(o, 16 * id);      /* mov calls(%rdx),%rsi */
	B(o, 0x48, 0xff, 0xc6);                         /* inc %rsi */
	B(o, 0x48, 0x3b, 0xb2); put32(o, 16 * id + 8);  /* cmp next(%rdx),%rsi */
	slow[1] = jump(o, JAE);
	B(o, 0x48, 0xff, 0x82); put32(o, 16 * id);      /* incq calls(%rdx) */
	fs_op(o, 0x48, 0xff, 0, T + 40);                /* incq %fs:framed_calls */
	jump_to(o, JMP, p->back);
	for (int i = 0; i < 2; i++)
		land(o, slow[i]);
	B(o, 0xc6, 0x45, 0xe8, 0x01);                   /* movb $1,-24(%rbp) */
	call_probe(o, id, jitperf__enter_framed);
	jump_to(o, JMP, p->back);
}

/* f at offset 0 of o */
static void emit(struct buf *o, enum variant v, uint32_t id)
{
	int32_t T = tls_off();
	struct pending pe = { 0 }, px = { 0 };
	size_t leaf;

	B(o, 0x55, 0x48, 0x89, 0xe5);                   /* push %rbp; mov %rsp,%rbp */
	B(o, 0x53, 0x41, 0x54);                         /* push %rbx; push %r12 */
	if (v == INLINE)
		B(o, 0x48, 0x83, 0xec, 0x10,            /* sub $16,%rsp: the flag's slot */
		  0xc6, 0x45, 0xe8, 0x00);              /* movb $0,-24(%rbp) */
	B(o, 0x89, 0xfb);                               /* mov %edi,%ebx */
	if (v == CALL) {
		call_probe(o, id, jitperf_enter);
	} else if (v != PLAIN) {
		load_active(o);
		pe.on = jump(o, JNE);
		pe.back = o->n;
	}
	B(o, 0xb8); put32(o, 1);                        /* mov $1,%eax */
	B(o, 0x83, 0xfb, 0x02);                         /* cmp $2,%ebx */
	leaf = jump(o, JL);
	B(o, 0x8d, 0x7b, 0xff);                         /* lea -1(%rbx),%edi */
	B(o, 0xe8); put32(o, (uint32_t)(0 - (o->n + 4)));  /* call f */
	B(o, 0x49, 0x89, 0xc4);                         /* mov %rax,%r12 */
	B(o, 0x8d, 0x7b, 0xfe);                         /* lea -2(%rbx),%edi */
	B(o, 0xe8); put32(o, (uint32_t)(0 - (o->n + 4)));  /* call f */
	B(o, 0x4c, 0x01, 0xe0);                         /* add %r12,%rax */
	land(o, leaf);
	if (v != PLAIN) {
		B(o, 0x49, 0x89, 0xc4);                 /* mov %rax,%r12: the result */
		if (v == CALL) {
			call_probe(o, id, jitperf_exit);
		} else if (v == INLINE) {
			B(o, 0x80, 0x7d, 0xe8, 0x00);   /* cmpb $0,-24(%rbp) */
			px.on = jump(o, JNE);
			px.back = o->n;
		} else {
			load_active(o);
			px.on = jump(o, JNE);
			px.back = o->n;
		}
		B(o, 0x4c, 0x89, 0xe0);                 /* mov %r12,%rax */
	}
	if (v == INLINE)
		B(o, 0x48, 0x83, 0xc4, 0x10);           /* add $16,%rsp */
	B(o, 0x41, 0x5c, 0x5b, 0x5d, 0xc3);             /* pop %r12; pop %rbx; pop %rbp; ret */
	if (v == STACK) {
		inline_enter_tail(o, id, T, &pe);
		inline_exit_tail(o, id, T, &px);
	} else if (v == INLINE) {
		framed_enter_tail(o, id, T, &pe);
		land(o, px.on);
		call_probe(o, id, jitperf__exit_slow);
		jump_to(o, JMP, px.back);
	} else if (v == CHECK) {
		land(o, pe.on);
		call_probe(o, id, jitperf_enter);
		jump_to(o, JMP, pe.back);
		land(o, px.on);
		call_probe(o, id, jitperf_exit);
		jump_to(o, JMP, px.back);
	}
}

static double now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "plain", "call", "check", "stack", "inline" };
	int n = argc > 2 ? atoi(argv[2]) : 35, v;
	jitperf *jp = jitperf_default();
	struct buf o = { .n = 0 };
	jitperf_fn id;
	uint64_t (*f)(uint64_t), calls;
	void *code;
	double t0, t1, c0, c1, p0, p1;
	int err;

	for (v = 0; argc > 1 && v < 5 && strcmp(argv[1], names[v]); v++)
		;
	if (argc < 2 || v == 5 || n < 1 || n > 45) {
		fprintf(stderr, "usage: jitshape plain|call|check|stack|inline [N (1-45, default 35)]\n");
		return 2;
	}
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jitshape: mmap");
		return 1;
	}
	id = jitperf_fn_register(jp, "f", code, 4096);
	if (!id) {
		perror("jitshape: jitperf_fn_register");
		return 1;
	}
	emit(&o, (enum variant)v, id);
	memcpy(code, o.b, o.n);
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("jitshape: mprotect");
		return 1;
	}
	if ((err = jitperf_code_load(jp, "f", code, o.n, NULL)))
		fprintf(stderr, "jitshape: jitperf_code_load: %s\n", jitperf_strerror(err));
	memcpy(&f, &code, sizeof(f));
	p0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	calls = f((uint64_t)n);         /* f(n) = fib(n + 1) ... */
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t1 = now_ns(CLOCK_MONOTONIC);
	calls = 2 * calls - 1;          /* ... and it makes 2 fib(n + 1) - 1 calls */
	err = jitperf_close(jp);
	p1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	printf("%s calls=%llu ns=%.0f cpu_ns=%.0f proc_ns=%.0f cpu_ns/call=%.3f\n", names[v],
	       (unsigned long long)calls, t1 - t0, c1 - c0, p1 - p0, (c1 - c0) / (double)calls);
	fflush(stdout);
	munmap(code, 4096);
	return err ? 1 : 0;
}
