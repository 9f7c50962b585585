/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiered JIT's calls in a known order, for tests/cmd/dump-tiers.test:
 * tier 1 called "opt", a request, a compile of sum with a failed nested
 * compile, its code installed, then the end.  Prints its pid.  With
 * --kill it then begins another compile and is killed by SIGKILL in it.
 *
 * With --bg (x86-64; tests/cmd/report-tiers.test, tests/convert/tiers.test)
 * it runs two functions in tier 0 ("interp": a C loop behind a
 * trampoline) while a background thread compiles them in tier 1 ("opt":
 * machine code), each compile
 * spinning SPIN_MS.  In sum's compile nest a compile of helper and a
 * failed one of bad; the thread then begins a compile of never and exits
 * in it.  sum runs in tier 0 until its tier 1 code is installed, then
 * SUM_OPT_CALLS times in tier 1; cold runs COLD_CALLS times in each tier.
 * Every call is counted between jitperf_enter and jitperf_exit: sum's
 * under the names of its tier code (sum[interp], sum[opt]), cold's under
 * names of its own (cold_t0, cold_t1) at the addresses of its tier code.
 * Prints "PID TID SUM_NS COLD_NS SUM_T0": the compiling thread, the wall
 * time of the two compiles as the thread measured them, from before the
 * begin to after the end, and the CLOCK_MONOTONIC ns before sum's begin.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "jitperf.h"

#define SPIN_MS       20
#define INTERP_ITERS  20000u    /* a tier 0 call */
#define OPT_ITERS     2000u     /* a tier 1 call */
#define SUM_OPT_CALLS 20000u
#define COLD_CALLS    3u

static const unsigned char code[16] = { 0xc3 };

typedef unsigned (*loop_fn)(unsigned);

/* mov $i,%ecx; mov %edi,%eax; 1: dec %eax; jnz 1b; ret */
static const unsigned char loop_code[] = { 0xb9, 0, 0, 0, 0, 0x89, 0xf8, 0xff, 0xc8, 0x75,
					   0xfc, 0xc3 };

struct fn {
	const char   *name;
	const char   *reg[2];           /* registered as, per tier; NULL: as its code */
	uint64_t      compile_t0;       /* CLOCK_MONOTONIC ns before tier 1's begin */
	uint64_t      compile_ns;       /* tier 1's, as the compiling thread saw it */
	void         *entry[2];         /* per tier */
	jitperf_fn    probe[2];
	atomic_int    ready;            /* tier 1 installed */
};

static jitperf *jp;
static struct fn sum = { .name = "sum" };
static struct fn cold = { .name = "cold", .reg = { "cold_t0", "cold_t1" } };
static unsigned char *opt_mem;
static atomic_uint compile_tid;

/* The interpreter: every tier 0 function runs here. */
__attribute__((noinline)) static unsigned interp(unsigned n)
{
	volatile unsigned acc = 0;

	for (unsigned i = 0; i < n; i++)
		acc += i;
	return acc;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin(unsigned ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;

	while (now_ns() < end)
		;
}

/* Compile f in tier 1: SPIN_MS of work, code emitted and installed. */
static int compile_opt(struct fn *f, unsigned slot, int nest)
{
	struct jitperf_code c = { .size = sizeof(c), .len = sizeof(loop_code) };
	uint64_t id, inner, t0 = now_ns();
	char name[64];

	if (jitperf_compile_begin(jp, f->name, 1, &id))
		return -1;
	spin(SPIN_MS);
	if (nest && (jitperf_compile_begin(jp, "helper", 1, &inner) ||
		     jitperf_compile_end(jp, inner, 0) ||
		     jitperf_compile_begin(jp, "bad", 1, &inner) ||
		     jitperf_compile_end(jp, inner, -ECANCELED)))
		return -1;
	c.addr = opt_mem + 64 * slot;
	c.compile = id;
	snprintf(name, sizeof(name), "%s[opt]", f->name);
	if (jitperf_code_load_ex(jp, &c, NULL))
		return -1;
	f->entry[1] = (void *)c.addr;
	f->probe[1] = jitperf_fn_register(jp, f->reg[1] ? f->reg[1] : name, c.addr, c.len);
	if (jitperf_compile_end(jp, id, 0))
		return -1;
	f->compile_t0 = t0;
	f->compile_ns = now_ns() - t0;
	atomic_store(&f->ready, 1);
	return 0;
}

static void *compiler(void *arg)
{
	uint64_t never;

	(void)arg;
	atomic_store(&compile_tid, (unsigned)syscall(SYS_gettid));
	if (compile_opt(&sum, 0, 1) || compile_opt(&cold, 1, 0))
		return arg;
	/* a compile the thread never ends: unfinished */
	jitperf_compile_begin(jp, "never", 1, &never);
	return &compile_tid;
}

static unsigned call(struct fn *f, int tier, unsigned n)
{
	unsigned r;

	jitperf_enter(f->probe[tier]);
	r = ((loop_fn)f->entry[tier])(n);
	jitperf_exit(f->probe[tier]);
	return r;
}

static int setup_fn(struct fn *f)
{
	char name[64];

	if (jitperf_trampoline(jp, f->name, 0, (const void *)interp, &f->entry[0]) ||
	    jitperf_tier_request(jp, f->name, 1))
		return -1;
	snprintf(name, sizeof(name), "%s[interp]", f->name);
	f->probe[0] = jitperf_fn_register(jp, f->reg[0] ? f->reg[0] : name, f->entry[0], 19);
	return 0;
}

static int run_bg(void)
{
	pthread_t t;
	void *ret;

#if !defined(__x86_64__)
	return 77;
#endif
	opt_mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (opt_mem == MAP_FAILED)
		return 1;
	for (unsigned i = 0; i < 2; i++) {
		memcpy(opt_mem + 64 * i, loop_code, sizeof(loop_code));
		memcpy(opt_mem + 64 * i + 1, &i, 4);
	}
	if (mprotect(opt_mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	if (jitperf_tier_name(jp, 0, "interp") || jitperf_tier_name(jp, 1, "opt") ||
	    setup_fn(&sum) || setup_fn(&cold))
		return 1;
	for (unsigned i = 0; i < COLD_CALLS; i++)
		call(&cold, 0, INTERP_ITERS);
	if (pthread_create(&t, NULL, compiler, NULL))
		return 1;
	while (!atomic_load(&sum.ready))
		call(&sum, 0, INTERP_ITERS);
	for (unsigned i = 0; i < SUM_OPT_CALLS; i++)
		call(&sum, 1, OPT_ITERS);
	if (pthread_join(t, &ret) || ret != &compile_tid)
		return 1;
	for (unsigned i = 0; i < COLD_CALLS; i++)
		call(&cold, 1, OPT_ITERS);
	printf("%d %u %llu %llu %llu\n", (int)getpid(), atomic_load(&compile_tid),
	       (unsigned long long)sum.compile_ns, (unsigned long long)cold.compile_ns,
	       (unsigned long long)sum.compile_t0);
	return jitperf_close(jp) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct jitperf_code c = { .size = sizeof(c), .addr = code, .len = sizeof(code) };
	uint64_t sum_id, inl;

	jp = jitperf_default();
	if (argc > 1 && !strcmp(argv[1], "--bg"))
		return run_bg();
	if (jitperf_tier_name(jp, 1, "opt") || jitperf_tier_request(jp, "sum", 1) ||
	    jitperf_compile_begin(jp, "sum", 1, &sum_id) ||
	    jitperf_compile_begin(jp, "inlined", 0, &inl) ||
	    jitperf_compile_end(jp, inl, -ECANCELED))
		return 1;
	c.compile = sum_id;
	if (jitperf_code_load_ex(jp, &c, NULL) || jitperf_compile_end(jp, sum_id, 0))
		return 1;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "--kill")) {
		uint64_t open;

		if (jitperf_compile_begin(jp, "open", 1, &open))
			return 1;
		raise(SIGKILL);
	}
	return jitperf_close(jp) ? 1 : 0;
}
