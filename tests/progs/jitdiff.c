/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitdiff: JIT code laid out and registered as real JITs do it, for the
 * differential tests of jitperf inject against perf inject --jit
 * (tests/cmd/inject-diff-*.test).  Every function is a small x86-64 loop
 * with bytes of its own, registered with jitperf_default() and run for a
 * known time (ms of its thread's CPU time), so a profile gives each its
 * share.
 *
 *   jitdiff threads T MS     T threads each load td<t>_f0..2 in memory of
 *                            their own and run them MS ms, all at once
 *   jitdiff fork MS          pf_0, pf_1 loaded, fork; the child loads cf_0,
 *                            cf_1, the parent pf_2; each runs all its
 *                            functions MS ms
 *   jitdiff move MS          mv_a and mv_b run MS ms; mv_a moves to a third
 *                            page, both run MS ms; mv_b moves to mv_a's first
 *                            page, both run MS ms
 *   jitdiff reuse MS         fa loaded, run MS ms, unloaded; then fb, then fc
 *                            at the same address, MS ms each
 *   jitdiff descend N MS     ds_f0..ds_f<N-1> registered in that order at
 *                            descending addresses, then run MS ms round robin
 *   jitdiff shuffle N MS [SLOT]
 *                            sh_f0..sh_f<N-1> at SLOT bytes (64) apart in one
 *                            region, in a random (fixed) order of places,
 *                            registered in name order; run MS ms round robin
 *   jitdiff overlap MS       ov_stub1 and ov_stub2 registered, then ov_region
 *                            over them (a larger region with stubs inside);
 *                            the stubs and the region's own code below them
 *                            run MS ms.  For JITPERF=perfmap; prints "pid PID"
 *
 * Exits 77 on other architectures.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jitperf.h"

typedef unsigned (*loop_fn)(unsigned);

/* mov $imm,%ecx; mov %edi,%eax; 1: dec %eax; jnz 1b; ret */
static const unsigned char loop_code[] = { 0xb9, 0, 0, 0, 0, 0x89, 0xf8, 0xff, 0xc8, 0x75,
					   0xfc, 0xc3 };
#define CODE_LEN sizeof(loop_code)

/* the thread's CPU time: its share of cpu-clock samples does not depend
 * on what else the machine runs */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "jitdiff: %s: %s\n", what, err ? jitperf_strerror(err) : "failed");
	exit(1);
}

/* len bytes of RWX memory */
static unsigned char *code_mem(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", 0);
	return p;
}

/* the loop at p, its bytes made its own by imm */
static void put(unsigned char *p, uint32_t imm)
{
	memcpy(p, loop_code, CODE_LEN);
	memcpy(p + 1, &imm, 4);
}

static uint64_t load(const char *name, const void *p, size_t len)
{
	uint64_t index;
	int err = jitperf_code_load(jitperf_default(), name, p, len, &index);

	if (err)
		die(name, err);
	return index;
}

/* fns[0..n-1] round robin for ms milliseconds */
static void run(unsigned char **fns, unsigned n, double ms)
{
	double end = now() + ms / 1e3;

	for (unsigned i = 0; now() < end; i = (i + 1) % n)
		((loop_fn)(void *)fns[i])(20000);
}

/* ---- threads */
struct thread_arg {
	unsigned id;
	double ms;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	unsigned char *mem = code_mem(4096), *fns[3];
	char name[32];

	for (unsigned i = 0; i < 3; i++) {
		fns[i] = mem + 64 * i;
		put(fns[i], a->id * 16 + i);
		snprintf(name, sizeof(name), "td%u_f%u", a->id, i);
		load(name, fns[i], CODE_LEN);
	}
	run(fns, 3, a->ms);
	return NULL;
}

static int threads(unsigned nt, double ms)
{
	pthread_t th[16];
	struct thread_arg args[16];

	if (nt < 1 || nt > 16)
		return 2;
	for (unsigned i = 0; i < nt; i++) {
		args[i] = (struct thread_arg){ i, ms };
		if (pthread_create(&th[i], NULL, thread_main, &args[i]))
			die("pthread_create", 0);
	}
	for (unsigned i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* ---- fork */
static int forked(double ms)
{
	unsigned char *mem = code_mem(4096), *fns[4];
	int st;
	pid_t pid;

	for (unsigned i = 0; i < 3; i++)
		put(mem + 64 * i, i + 1);
	load("pf_0", mem, CODE_LEN);
	load("pf_1", mem + 64, CODE_LEN);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork", 0);
	if (pid == 0) {
		unsigned char *own = code_mem(4096);

		put(own, 11);
		put(own + 64, 12);
		load("cf_0", own, CODE_LEN);
		load("cf_1", own + 64, CODE_LEN);
		fns[0] = mem, fns[1] = mem + 64, fns[2] = own, fns[3] = own + 64;
		run(fns, 4, ms);
		return 0;
	}
	load("pf_2", mem + 128, CODE_LEN);
	fns[0] = mem, fns[1] = mem + 64, fns[2] = mem + 128;
	run(fns, 3, ms);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("the child", 0);
	return 0;
}

/* ---- move */
static int move(double ms)
{
	unsigned char *mem = code_mem(3 * 4096), *fns[2];
	uint64_t a, b;
	int err;

	put(mem, 1);
	put(mem + 4096, 2);
	a = load("mv_a", mem, CODE_LEN);
	b = load("mv_b", mem + 4096, CODE_LEN);
	fns[0] = mem, fns[1] = mem + 4096;
	run(fns, 2, ms);
	put(mem + 2 * 4096, 1);
	if ((err = jitperf_code_move(jitperf_default(), a, mem + 2 * 4096)))
		die("move mv_a", err);
	memset(mem, 0xcc, CODE_LEN);
	fns[0] = mem + 2 * 4096;
	run(fns, 2, ms);
	put(mem, 2);
	if ((err = jitperf_code_move(jitperf_default(), b, mem)))
		die("move mv_b", err);
	memset(mem + 4096, 0xcc, CODE_LEN);
	fns[1] = mem;
	run(fns, 2, ms);
	return 0;
}

/* ---- reuse */
static int reuse(double ms)
{
	static const char *const names[] = { "fa", "fb", "fc" };
	unsigned char *mem = code_mem(4096);

	for (unsigned i = 0; i < 3; i++) {
		uint64_t index;
		int err;

		put(mem, i + 1);
		index = load(names[i], mem, CODE_LEN);
		run(&mem, 1, ms);
		if (i < 2 && (err = jitperf_code_unload(jitperf_default(), index)))
			die("unload", err);
	}
	return 0;
}

/* ---- descend and shuffle: n functions in one region, function i at slot place[i] */
static int region(const char *prefix, unsigned n, const unsigned *place, size_t slot, double ms)
{
	unsigned char *mem = code_mem((size_t)n * slot), **fns = malloc(n * sizeof(*fns));
	char name[32];

	if (!fns)
		die("malloc", 0);
	for (unsigned i = 0; i < n; i++) {
		fns[i] = mem + (size_t)place[i] * slot;
		put(fns[i], i);
	}
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%u", prefix, i);
		load(name, fns[i], CODE_LEN);
	}
	run(fns, n, ms);
	free(fns);
	free((void *)place);
	return 0;
}

static int descend(unsigned n, double ms)
{
	unsigned *place = malloc(n * sizeof(*place));

	if (!place)
		die("malloc", 0);
	for (unsigned i = 0; i < n; i++)
		place[i] = n - 1 - i;
	return region("ds_f", n, place, 64, ms);
}

static int shuffle(unsigned n, double ms, size_t slot)
{
	unsigned *place = malloc(n * sizeof(*place));
	uint32_t x = 2463534242u;       /* xorshift32: the same order on every run */

	if (!place || slot < 16)
		die("malloc", 0);
	for (unsigned i = 0; i < n; i++)
		place[i] = i;
	for (unsigned i = n - 1; i > 0; i--) {
		unsigned j, t;

		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		j = x % (i + 1);
		t = place[i], place[i] = place[j], place[j] = t;
	}
	return region("sh_f", n, place, slot, ms);
}

/* ---- overlap: a region registered after the stubs inside it */
static int overlap(double ms)
{
	unsigned char *mem = code_mem(4096), *fns[3];

	put(mem + 0x10, 1);             /* the region's own code, below the stubs */
	put(mem + 0x100, 2);
	put(mem + 0x200, 3);
	load("ov_stub1", mem + 0x100, CODE_LEN);
	load("ov_stub2", mem + 0x200, CODE_LEN);
	load("ov_region", mem, 0x400);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	fns[0] = mem + 0x10, fns[1] = mem + 0x100, fns[2] = mem + 0x200;
	run(fns, 3, ms);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

#ifndef __x86_64__
	fprintf(stderr, "jitdiff: x86-64 only\n");
	return 77;
#endif
	if (!strcmp(mode, "threads") && argc == 4)
		return threads(atoi(argv[2]), atof(argv[3]));
	if (!strcmp(mode, "fork") && argc == 3)
		return forked(atof(argv[2]));
	if (!strcmp(mode, "move") && argc == 3)
		return move(atof(argv[2]));
	if (!strcmp(mode, "reuse") && argc == 3)
		return reuse(atof(argv[2]));
	if (!strcmp(mode, "descend") && argc == 4)
		return descend(atoi(argv[2]), atof(argv[3]));
	if (!strcmp(mode, "shuffle") && (argc == 4 || argc == 5))
		return shuffle(atoi(argv[2]), atof(argv[3]), argc == 5 ? (size_t)atoi(argv[4]) : 64);
	if (!strcmp(mode, "overlap") && argc == 3)
		return overlap(atof(argv[2]));
	fprintf(stderr, "usage: jitdiff threads T MS | fork MS | move MS | reuse MS | descend N MS | "
		"shuffle N MS [SLOT] | overlap MS\n");
	return 2;
}
