/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitreuse: JIT code at a reused address, and moved code, for
 * tests/cmd/inject.test.
 *
 *   jitreuse MS
 *
 * Loads reuse_a at the start of a page and runs it for MS milliseconds;
 * unloads it and loads reuse_b (other bytes, same size) at the same
 * address, runs it MS ms; then copies reuse_b to a second page, tells the
 * library with jitperf_code_move and runs it there MS ms.  A profile
 * names reuse_a for the first part only, reuse_b for the rest.  Exits 77
 * on other architectures.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "jitperf.h"

typedef unsigned (*loop_fn)(unsigned);

/* mov $imm,%ecx; mov %edi,%eax; 1: dec %eax; jnz 1b; ret */
static const unsigned char loop_code[] = { 0xb9, 0, 0, 0, 0, 0x89, 0xf8, 0xff, 0xc8, 0x75,
					   0xfc, 0xc3 };

/* the thread's CPU time: its share of cpu-clock samples does not depend
 * on what else the machine runs */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin(const unsigned char *code, double secs)
{
	loop_fn f = (loop_fn)(const void *)code;
	double end = now() + secs;

	while (now() < end)
		f(100000);
}

static void put(unsigned char *page, unsigned imm)
{
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
	memcpy(page, loop_code, sizeof(loop_code));
	memcpy(page + 1, &imm, 4);
	mprotect(page, 4096, PROT_READ | PROT_EXEC);
}

int main(int argc, char **argv)
{
	jitperf *jp = jitperf_default();
	double secs = argc > 1 ? atoi(argv[1]) / 1000.0 : 0.3;
	unsigned char *mem;
	uint64_t a, b;

#ifndef __x86_64__
	return 77;
#endif
	mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || !jp)
		return 1;
	put(mem, 1);
	if (jitperf_code_load(jp, "reuse_a", mem, sizeof(loop_code), &a))
		return 1;
	spin(mem, secs);
	jitperf_code_unload(jp, a);
	put(mem, 2);
	if (jitperf_code_load(jp, "reuse_b", mem, sizeof(loop_code), &b))
		return 1;
	spin(mem, secs);
	put(mem + 4096, 2);
	if (jitperf_code_move(jp, b, mem + 4096))
		return 1;
	spin(mem + 4096, secs);
	return 0;
}
