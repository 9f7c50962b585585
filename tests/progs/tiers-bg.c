/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiered JIT with a background compiler, for tests/convert/tiers.test.
 * The main thread runs sum in tier 0 ("interp": a C loop behind a
 * trampoline) and requests tier 1 ("opt") after 20 calls.  The compiler
 * thread then compiles sum with a known cost (a 20 ms spin), installs real
 * machine code for it, and the main thread runs that code until it has
 * run 300 times.  Both tiers' calls are instrumented as sum[interp] and
 * sum[opt].  The compiler then makes outer[opt] with inner[opt] nested
 * in it, a failed bad[opt] (-ECANCELED) and never[opt], which it never
 * ends.  Prints "pid PID", "compiler TID" and "sum-compile BEFORE AFTER":
 * CLOCK_MONOTONIC ns before the begin of sum's compile and after its end,
 * the bounds of its span however loaded the machine.  x86-64 only.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "jitperf.h"

#define N 300000L   /* a call of sum: about 0.1 ms in tier 1, several in tier 0 */

/* long sum(long n): n + (n-1) + ... + 1, as tier 1 emits it */
static const unsigned char sum_code[] = {
	0x31, 0xc0,             /* xor eax, eax */
	0x48, 0x85, 0xff,       /* test rdi, rdi */
	0x7e, 0x08,             /* jle done */
	0x48, 0x01, 0xf8,       /* loop: add rax, rdi */
	0x48, 0xff, 0xcf,       /* dec rdi */
	0x75, 0xf8,             /* jnz loop */
	0xc3,                   /* done: ret */
};

typedef long (*sum_fn)(long);

static jitperf *jp;
static atomic_int requested;
static _Atomic(sum_fn) opt_sum;
static jitperf_fn fn_opt;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_ms(unsigned ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;

	while (now_ns() < end)
		;
}

/* tier 0: what an interpreter's eval loop does for sum, one step at a time */
static long interp_sum(long n)
{
	volatile long acc = 0, i;

	for (i = n; i > 0; i--)
		acc += i;
	return acc;
}

static int compile_sum(void)
{
	struct jitperf_code c = { .size = sizeof(c), .len = sizeof(sum_code) };
	uint64_t id, before, after;
	void *mem;

	before = now_ns();
	if (jitperf_compile_begin(jp, "sum", 1, &id))
		return -1;
	spin_ms(20);                    /* the optimizer's known cost */
	if (jitperf_compile_end(jp, id, 0))
		return -1;
	after = now_ns();
	/* what the span can be on a loaded machine: 20 ms up to this */
	printf("sum-compile %" PRIu64 " %" PRIu64 "\n", before, after);
	fflush(stdout);
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -1;
	memcpy(mem, sum_code, sizeof(sum_code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return -1;
	c.addr = mem;
	c.compile = id;                 /* named sum[opt] */
	if (jitperf_code_load_ex(jp, &c, NULL))
		return -1;
	fn_opt = jitperf_fn_register(jp, "sum[opt]", mem, sizeof(sum_code));
	atomic_store(&opt_sum, (sum_fn)mem);
	return 0;
}

static void *compiler(void *arg)
{
	uint64_t outer, inner, bad, never;

	(void)arg;
	printf("compiler %d\n", (int)gettid());
	fflush(stdout);
	while (!atomic_load(&requested))
		usleep(100);
	if (compile_sum())
		return (void *)1;
	/* a compile that inlines a callee compiles it, nested in it */
	if (jitperf_compile_begin(jp, "outer", 1, &outer))
		return (void *)1;
	spin_ms(2);
	if (jitperf_compile_begin(jp, "inner", 1, &inner))
		return (void *)1;
	spin_ms(3);
	if (jitperf_compile_end(jp, inner, 0) || jitperf_compile_end(jp, outer, 0))
		return (void *)1;
	if (jitperf_compile_begin(jp, "bad", 1, &bad))
		return (void *)1;
	spin_ms(1);
	if (jitperf_compile_end(jp, bad, -ECANCELED))
		return (void *)1;
	/* begun and never ended: the thread ends in it */
	return jitperf_compile_begin(jp, "never", 1, &never) ? (void *)1 : NULL;
}

int main(void)
{
	jitperf_fn fn_interp;
	pthread_t thread;
	void *entry, *ret;
	sum_fn interp, opt;
	long calls = 0, ncalls_opt = 0, total = 0;

	jp = jitperf_default();
	if (jitperf_tier_name(jp, 0, "interp") || jitperf_tier_name(jp, 1, "opt") ||
	    jitperf_trampoline(jp, "sum", 0, (const void *)interp_sum, &entry))
		return 1;
	interp = (sum_fn)entry;
	fn_interp = jitperf_fn_register(jp, "sum[interp]", entry, 1);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (pthread_create(&thread, NULL, compiler, NULL))
		return 1;
	while (ncalls_opt < 300) {
		if ((opt = atomic_load(&opt_sum))) {
			jitperf_enter(fn_opt);
			total += opt(N);
			jitperf_exit(fn_opt);
			ncalls_opt++;
			continue;
		}
		jitperf_enter(fn_interp);
		total += interp(N);
		jitperf_exit(fn_interp);
		if (++calls == 20) {
			if (jitperf_tier_request(jp, "sum", 1))
				return 1;
			atomic_store(&requested, 1);
		}
	}
	if (pthread_join(thread, &ret) || ret)
		return 1;
	return total == (calls + ncalls_opt) * (N * (N + 1) / 2) && !jitperf_close(jp) ? 0 : 1;
}
