/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitrun: a JIT of exact, known behaviour for the jitperf command's tests.
 *
 *   jitrun NFUNCS CALLS ITERS [NFUNCS2 CALLS2 ITERS2]
 *
 * Copies NFUNCS small x86-64 loops into executable memory as jr_f0,
 * jr_f1, ..., registers them with jitperf_default() (code load and
 * instrumentation) and calls each CALLS times, between jitperf_enter and
 * jitperf_exit, looping ITERS times per call; CALLS 0 calls the first
 * function until the process is killed (for tests that signal a run
 * known to be inside its JIT code).  With a second triple it
 * first forks and execs itself with that triple (the child registers its
 * functions as jr_c0, jr_c1, ...), then waits for it.  Exits 77 on other
 * architectures.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitperf.h"

typedef unsigned (*loop_fn)(unsigned);

/*
 * mov $i,%ecx; mov %edi,%eax; 1: dec %eax; jnz 1b; ret -- the immediate
 * makes each function's bytes its own (the library marks identical code).
 */
static const unsigned char loop_code[] = { 0xb9, 0, 0, 0, 0, 0x89, 0xf8, 0xff, 0xc8, 0x75,
					   0xfc, 0xc3 };

static int run(const char *prefix, unsigned nfuncs, unsigned calls, unsigned iters)
{
	jitperf *jp = jitperf_default();
	unsigned char *mem;
	size_t slot = 64;

	mem = mmap(NULL, (size_t)nfuncs * slot + 1, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	for (unsigned i = 0; i < nfuncs; i++) {
		memcpy(mem + (size_t)i * slot, loop_code, sizeof(loop_code));
		memcpy(mem + (size_t)i * slot + 1, &i, 4);
	}
	if (mprotect(mem, (size_t)nfuncs * slot + 1, PROT_READ | PROT_EXEC))
		return 1;
	for (unsigned i = 0; i < nfuncs; i++) {
		unsigned char *code = mem + (size_t)i * slot;
		loop_fn f = (loop_fn)(void *)code;
		jitperf_fn fn;
		char name[64];

		snprintf(name, sizeof(name), "%s%u", prefix, i);
		if (jp)
			jitperf_code_load(jp, name, code, sizeof(loop_code), NULL);
		fn = jp ? jitperf_fn_register(jp, name, code, sizeof(loop_code)) : 0;
		for (unsigned c = 0; c < calls || calls == 0; c++) {
			jitperf_enter(fn);
			f(iters);
			jitperf_exit(fn);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pid = -1;
	int st = 0;

#ifndef __x86_64__
	return 77;
#endif
	if (argc != 4 && argc != 7 && !(argc == 5 && !strcmp(argv[4], "child"))) {
		fprintf(stderr, "usage: jitrun NFUNCS CALLS ITERS [NFUNCS2 CALLS2 ITERS2]\n");
		return 2;
	}
	if (argc == 7) {
		pid = fork();
		if (pid == 0) {
			char *args[] = { argv[0], argv[4], argv[5], argv[6], (char *)"child", NULL };

			execv("/proc/self/exe", args);
			_exit(127);
		}
	}
	if (run(argc == 5 ? "jr_c" : "jr_f", (unsigned)atoi(argv[1]), (unsigned)atoi(argv[2]),
		(unsigned)atoi(argv[3])))
		return 1;
	if (pid > 0 && (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)))
		return 1;
	return 0;
}
