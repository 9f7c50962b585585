/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/progs/jitleaf: a hand-made JIT whose short leaf is called in a
 * loop, with the probes emitted into its machine code as jitperf_enter(3)
 * tells generated code to, and the same code without probes timed in the
 * same run as the reference.  x86-64 only (exit 77 elsewhere).
 *
 *	leaf(x)   = x^(2^K)                     (K dependent multiplies)
 *	caller(n) = for i < n: acc = (acc + leaf(i)) * 3 ^ i
 *
 * usage: jitleaf call|stack [MS [K]]   (K = 1..20, default 1)
 *   call   calls of the exported jitperf_enter/jitperf_exit
 *   stack  the counting path inline (jitperf.h's jitperf__enter_fast),
 *          jitperf__enter_slow/jitperf__exit_slow when it cannot count
 * Runs the instrumented caller(1000) for about MS ms (default 300), then
 * prints the probe-free figures, medians of rounds interleaved with it:
 *   ref leaf_ns=L caller_ns=C calls=N
 * L is what a call of the leaf adds to the probe-free caller's loop, C the
 * probe-free caller's time per call; N the instrumented leaf's calls.
 * The environment (JITPERF, JITPERF_SAMPLE, ...) decides what records.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "jitperf.h"

#define INNER  1000             /* leaf calls per caller call */
#define ROUNDS 64               /* reference rounds (medians) */

#if defined(__x86_64__)
struct buf { uint8_t *b; size_t n, cap; };

static void put(struct buf *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		fprintf(stderr, "jitleaf: code buffer full\n");
		exit(1);
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

#define B(o, ...) do { static const uint8_t b_[] = { __VA_ARGS__ }; put(o, b_, sizeof(b_)); } while (0)

static void put32(struct buf *o, uint32_t v) { put(o, &v, 4); }
static void put64(struct buf *o, uint64_t v) { put(o, &v, 8); }

/* rel32 at `at` to land at the current position */
static void land(struct buf *o, size_t at)
{
	uint32_t rel = (uint32_t)(o->n - (at + 4));

	memcpy(o->b + at, &rel, 4);
}

enum { JNE = 0x85, JAE = 0x83, JGE = 0x8d, JMP = 0xe9 };

/* jcc/jmp rel32; returns the rel32's offset */
static size_t jump(struct buf *o, uint8_t op)
{
	uint8_t b[2] = { 0x0f, op };

	if (op == JMP)
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

/* mov $id,%edi; movabs $fn,%rax; call *%rax */
static void call_fn(struct buf *o, uint32_t id, const void *fn)
{
	B(o, 0xbf);
	put32(o, id);
	B(o, 0x48, 0xb8);
	put64(o, (uint64_t)(uintptr_t)fn);
	B(o, 0xff, 0xd0);
}

static int32_t tls_off(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (int32_t)((uintptr_t)&jitperf__tls - tp);
}

/* an instruction with an %fs:disp32 operand */
static void fs_op(struct buf *o, uint8_t rex, uint8_t op, uint8_t reg, int32_t disp)
{
	uint8_t modrm = (uint8_t)(reg << 3 | 4), sib = 0x25;

	B(o, 0x64);
	if (rex)
		put(o, &rex, 1);
	put(o, &op, 1);
	put(o, &modrm, 1);
	put(o, &sib, 1);
	put32(o, (uint32_t)disp);
}

enum probes { NONE, CALL, STACK };

struct pending { size_t on, back; };

/* The inactive check: movabs $&jitperf__probe_active,%rax; mov (%rax),%eax;
 * test; jne to the out-of-line part (p->on), which comes back to p->back. */
static void check(struct buf *o, struct pending *p)
{
	B(o, 0x48, 0xb8);
	put64(o, (uint64_t)(uintptr_t)&jitperf__probe_active);
	B(o, 0x8b, 0x00, 0x85, 0xc0);
	p->on = jump(o, JNE);
	p->back = o->n;
}

/* jitperf.h's counting path of an entry, out of line; %eax = generation */
static void stack_enter_tail(struct buf *o, uint32_t id, struct pending *p)
{
	int32_t T = tls_off();
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
	call_fn(o, id, (const void *)jitperf__enter_slow);
	jump_to(o, JMP, p->back);
}

/* ... and of an exit */
static void stack_exit_tail(struct buf *o, uint32_t id, struct pending *p)
{
	int32_t T = tls_off();
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
	call_fn(o, id, (const void *)jitperf__exit_slow);
	jump_to(o, JMP, p->back);
}

static void probe_in(struct buf *o, enum probes v, uint32_t id, struct pending *p)
{
	if (v == CALL)
		call_fn(o, id, (const void *)jitperf_enter);
	else if (v == STACK)
		check(o, p);
}

static void probe_out(struct buf *o, enum probes v, uint32_t id, struct pending *p)
{
	if (v == CALL)
		call_fn(o, id, (const void *)jitperf_exit);
	else if (v == STACK)
		check(o, p);
}

static void tails(struct buf *o, enum probes v, uint32_t id, struct pending *pe,
		  struct pending *px)
{
	if (v == STACK) {
		stack_enter_tail(o, id, pe);
		stack_exit_tail(o, id, px);
	}
}

/* leaf(x) = x^(2^k): k dependent multiplies, its argument kept in %ebx
 * across the probes */
static void emit_leaf(struct buf *o, enum probes v, uint32_t id, int k)
{
	struct pending pe, px;

	B(o, 0x55, 0x48, 0x89, 0xe5, 0x53);            /* push %rbp; mov %rsp,%rbp; push %rbx */
	B(o, 0x48, 0x83, 0xec, 0x08);                   /* sub $8,%rsp: calls aligned */
	B(o, 0x89, 0xfb);                               /* mov %edi,%ebx */
	probe_in(o, v, id, &pe);
	for (int i = 0; i < k; i++)
		B(o, 0x0f, 0xaf, 0xdb);                 /* imul %ebx,%ebx */
	probe_out(o, v, id, &px);
	B(o, 0x89, 0xd8);                               /* mov %ebx,%eax */
	B(o, 0x48, 0x83, 0xc4, 0x08);                   /* add $8,%rsp */
	B(o, 0x5b, 0x5d, 0xc3);                         /* pop %rbx; pop %rbp; ret */
	tails(o, v, id, &pe, &px);
}

/* caller(n): the loop above, calling leaf (or not: with_leaf 0) */
static void emit_caller(struct buf *o, enum probes v, uint32_t id, const void *leaf,
			int with_leaf)
{
	struct pending pe, px;
	size_t top, done;

	B(o, 0x55, 0x48, 0x89, 0xe5);                   /* push %rbp; mov %rsp,%rbp */
	B(o, 0x53, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56); /* push %rbx,%r12,%r13,%r14 */
	B(o, 0x89, 0xfb);                               /* mov %edi,%ebx: n */
	B(o, 0x45, 0x31, 0xe4, 0x45, 0x31, 0xed);       /* xor %r12d,%r12d (i); xor %r13d,%r13d (acc) */
	probe_in(o, v, id, &pe);
	top = o->n;
	B(o, 0x41, 0x39, 0xdc);                         /* cmp %ebx,%r12d */
	done = jump(o, JGE);
	if (with_leaf) {
		B(o, 0x44, 0x89, 0xe7);                 /* mov %r12d,%edi */
		B(o, 0x49, 0xbe); put64(o, (uint64_t)(uintptr_t)leaf); /* movabs $leaf,%r14 */
		B(o, 0x41, 0xff, 0xd6);                 /* call *%r14 */
		B(o, 0x41, 0x01, 0xc5);                 /* add %eax,%r13d */
	}
	B(o, 0x47, 0x8d, 0x6c, 0x6d, 0x00);             /* lea (%r13,%r13,2),%r13d */
	B(o, 0x45, 0x31, 0xe5);                         /* xor %r12d,%r13d */
	B(o, 0x41, 0xff, 0xc4);                         /* inc %r12d */
	jump_to(o, JMP, top);
	land(o, done);
	probe_out(o, v, id, &px);
	B(o, 0x44, 0x89, 0xe8);                         /* mov %r13d,%eax */
	B(o, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5b, 0x5d, 0xc3); /* pops; ret */
	tails(o, v, id, &pe, &px);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef uint32_t (*fn_t)(uint32_t);

/* ns per call of f(INNER), the least of a few calls (one round) */
static double per_call(fn_t f)
{
	double best = 1e18;

	for (int k = 0; k < 5; k++) {
		double t0 = now_ns();

		f(INNER);
		t0 = now_ns() - t0;
		if (t0 < best)
			best = t0;
	}
	return best;
}

int main(int argc, char **argv)
{
	enum probes v = argc > 1 && !strcmp(argv[1], "call") ? CALL :
			argc > 1 && !strcmp(argv[1], "stack") ? STACK : NONE;
	int k = argc > 3 ? atoi(argv[3]) : 1;
	double ms = argc > 2 ? atof(argv[2]) : 300, leaf_ns[ROUNDS], caller_ns[ROUNDS], probed_ns[ROUNDS], t_end;
	jitperf *jp = jitperf_default();
	struct buf o = { .n = 0, .cap = 4 * 4096 };
	size_t at[5];
	fn_t caller, plain_leaf, plain_caller, plain_loop;
	jitperf_fn id_leaf, id_caller;
	uint64_t calls = 0;
	int err;

	if (v == NONE || ms <= 0 || k < 1 || k > 20) {
		fprintf(stderr, "usage: jitleaf call|stack [MS [K]]\n");
		return 2;
	}
	o.b = mmap(NULL, o.cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (o.b == MAP_FAILED) {
		perror("jitleaf: mmap");
		return 1;
	}
	/* ids first: the code holds them */
	id_leaf = jitperf_fn_register(jp, "jit_leaf", o.b, 4096);
	id_caller = jitperf_fn_register(jp, "jit_caller", o.b + 4096, 4096);
	if (!id_leaf || !id_caller) {
		perror("jitleaf: jitperf_fn_register");
		return 1;
	}
	o.n = 0;
	emit_leaf(&o, v, id_leaf, k);
	at[0] = 0;
	o.n = 4096;
	emit_caller(&o, v, id_caller, o.b, 1);
	at[1] = 4096;
	o.n = at[2] = 8192;
	emit_leaf(&o, NONE, 0, k);
	o.n = at[3] = 8192 + 1024;
	emit_caller(&o, NONE, 0, o.b + at[2], 1);
	o.n = at[4] = 8192 + 2048;
	emit_caller(&o, NONE, 0, NULL, 0);
	if (mprotect(o.b, o.cap, PROT_READ | PROT_EXEC)) {
		perror("jitleaf: mprotect");
		return 1;
	}
	static const char *const names[] = { "jit_leaf", "jit_caller", "plain_leaf",
					     "plain_caller", "plain_loop" };
	for (int i = 0; i < 5; i++)
		if ((err = jitperf_code_load(jp, names[i], o.b + at[i], i < 2 ? 4096 : 1024, NULL)))
			fprintf(stderr, "jitleaf: jitperf_code_load: %s\n", jitperf_strerror(err));
	memcpy(&caller, &(void *){ o.b + at[1] }, sizeof(caller));
	memcpy(&plain_leaf, &(void *){ o.b + at[2] }, sizeof(plain_leaf));
	memcpy(&plain_caller, &(void *){ o.b + at[3] }, sizeof(plain_caller));
	memcpy(&plain_loop, &(void *){ o.b + at[4] }, sizeof(plain_loop));
	/* the instrumented run, with the reference's rounds spread over it */
	t_end = now_ns() + ms * 1e6;
	for (int r = 0; r < ROUNDS; r++) {
		double until = now_ns() + (t_end - now_ns()) / (ROUNDS - r);
		double with = per_call(plain_caller), without = per_call(plain_loop);

		caller_ns[r] = with;
		probed_ns[r] = per_call(caller);
		calls += 5 * INNER;
		leaf_ns[r] = (with - without) / INNER;
		do {
			caller(INNER);
			calls += INNER;
		} while (now_ns() < until);
	}
	printf("ref leaf_ns=%.2f caller_ns=%.0f probed_caller_ns=%.0f calls=%llu\n",
	       median(leaf_ns, ROUNDS), median(caller_ns, ROUNDS), median(probed_ns, ROUNDS),
	       (unsigned long long)calls);
	fflush(stdout);
	err = jitperf_close(jp);
	munmap(o.b, o.cap);
	return err ? 1 : 0;
}
#else
int main(void)
{
	fprintf(stderr, "jitleaf: x86-64 only\n");
	return 77;
}
#endif
