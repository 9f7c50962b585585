/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmoverlap: JIT code named by a perf map whose entries overlap, for
 * tests/cmd/perfmap-overlap.test.
 *
 *   pmoverlap LAYOUT MS
 *
 * Maps 64 KiB of code: a sled of one-byte NOPs ending in a ret, called in
 * a loop for MS milliseconds, so perf's samples land all over it.  Then
 * writes /tmp/perf-PID.map (no library: the lines as any JIT writes them)
 * with entries over the code that overlap, in an order LAYOUT chooses:
 *   0       stubs, then the region around them (the order that gave the
 *           region every sample in jitperf inject's images), then the
 *           same again past a gap with the region first;
 *   SEED>0  sixty entries drawn from SEED: regions, stubs, entries at a
 *           start taken before, entries of size 0, in a random order.
 * Prints "PID START END" (the code's addresses, hex) first.  Exits 77 on
 * other architectures.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CODE_SIZE 0x10000u

/* the thread's CPU time: its share of cpu-clock samples does not depend
 * on what else the machine runs */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void entry(FILE *f, uintptr_t base, uint64_t off, uint64_t size, const char *name)
{
	fprintf(f, "%" PRIxPTR " %" PRIx64 " %s\n", base + (uintptr_t)off, size, name);
}

static void layout_fixed(FILE *f, uintptr_t b)
{
	/* the first half: stubs registered before their region */
	entry(f, b, 0x1000, 0x800, "stub_a");
	entry(f, b, 0x3000, 0x800, "stub_b");
	entry(f, b, 0x5000, 0x800, "stub_c");
	entry(f, b, 0x0000, 0x8000, "region_after");
	/* the second half: the region first, its stubs after it */
	entry(f, b, 0x8000, 0x8000, "region_before");
	entry(f, b, 0x9000, 0x800, "stub_d");
	entry(f, b, 0xb000, 0x800, "stub_e");
	entry(f, b, 0xd000, 0x800, "stub_f");
}

static void layout_random(FILE *f, uintptr_t b, unsigned seed)
{
	uint64_t starts[60];
	char name[32];

	rnd_state = 0x9e3779b97f4a7c15u * seed;
	for (unsigned i = 0; i < 60; i++) {
		uint64_t r = rnd() % 100, start, size;

		start = i > 0 && r < 15 ? starts[rnd() % i] : (rnd() % CODE_SIZE) & ~(uint64_t)0xf;
		size = r < 8 ? 0 : r < 25 ? 0x1000 + rnd() % 0x8000 : 0x100 + rnd() % 0x800;
		if (start + size > CODE_SIZE)
			size = CODE_SIZE - start;
		starts[i] = start;
		snprintf(name, sizeof(name), "%s%u", size > 0x1000 ? "region" : "stub", i);
		entry(f, b, start, size, name);
	}
}

int main(int argc, char **argv)
{
	unsigned layout = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
	double secs = argc > 2 ? atoi(argv[2]) / 1000.0 : 0.5, end;
	unsigned char *code;
	char path[64];
	FILE *f;

#ifndef __x86_64__
	return 77;
#endif
	code = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memset(code, 0x90, CODE_SIZE - 1);     /* nop */
	code[CODE_SIZE - 1] = 0xc3;             /* ret */
	if (mprotect(code, CODE_SIZE, PROT_READ | PROT_EXEC))
		return 1;
	printf("%d %" PRIxPTR " %" PRIxPTR "\n", (int)getpid(), (uintptr_t)code,
	       (uintptr_t)code + CODE_SIZE);
	fflush(stdout);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	if (layout)
		layout_random(f, (uintptr_t)code, layout);
	else
		layout_fixed(f, (uintptr_t)code);
	if (fclose(f))
		return 1;
	for (end = now() + secs; now() < end;)
		((void (*)(void))(void *)code)();
	return 0;
}
