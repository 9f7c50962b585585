/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JIT code with no free address range after it but anonymous data, as
 * under a sanitizer's allocator (tests/cmd/eh-crowded.test): a
 * trampoline "crowded[t0]" over spin(), then every page of the 2 MiB
 * after the trampolines' page mapped read-write, then spin() through the
 * trampoline for 0.3 s of CPU.  perf --call-graph dwarf walks from spin
 * through the trampoline only if jitperf inject found room for its unwind
 * tables in memory that perf sees as anonymous data.  Prints its pid.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "jitperf.h"

#define CROWD (2u << 20)

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* one slice of work; noinline: a frame of its own that perf samples */
__attribute__((noinline)) static unsigned spin(unsigned n)
{
	volatile unsigned x = 0;

	for (unsigned i = 0; i < n; i++)
		x += i;
	return x;
}

int main(void)
{
	jitperf *jp = jitperf_default();
	long page = sysconf(_SC_PAGESIZE);
	unsigned (*entry)(unsigned);
	void *e;
	uintptr_t at;
	double end;

	if (!jp || jitperf_tier_name(jp, 0, "t0") ||
	    jitperf_trampoline(jp, "crowded", 0, (const void *)spin, &e)) {
		fprintf(stderr, "eh-crowded: no trampoline\n");
		return 1;
	}
	entry = (unsigned (*)(unsigned))e;
	/* what is free after the trampolines' page becomes data */
	at = ((uintptr_t)e & ~(uintptr_t)(page - 1)) + (uintptr_t)page;
	for (uintptr_t p = at; p < at + CROWD; p += (uintptr_t)page) {
		void *m = mmap((void *)p, (size_t)page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (m != MAP_FAILED && m != (void *)p)
			munmap(m, (size_t)page);    /* a kernel without FIXED_NOREPLACE */
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	for (end = cpu_s() + 0.3; cpu_s() < end;)
		entry(100000);
	return jitperf_close(jp) ? 1 : 0;
}
