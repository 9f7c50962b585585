/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * instr-prog ROOTS THREADS [hang]: a program instrumented the way a JIT's
 * pass does it, driven by the environment (JITPERF, JITPERF_DIR, ...)
 * through jitperf_default().  Each of THREADS threads makes ROOTS calls of
 * work(), each calling leaf() twice, and then one call of mark().  Prints
 * its pid; with "hang" it then prints "ready" and waits to be killed
 * inside an open call of work().
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitperf.h"

static jitperf_fn work_fn, leaf_fn, mark_fn;
static int roots;

static void leaf(void)
{
	jitperf_enter(leaf_fn);
	jitperf_exit(leaf_fn);
}

static void *run(void *arg)
{
	(void)arg;
	for (int i = 0; i < roots; i++) {
		jitperf_enter(work_fn);
		leaf();
		leaf();
		jitperf_exit(work_fn);
	}
	jitperf_enter(mark_fn);         /* each thread's last call */
	jitperf_exit(mark_fn);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t th[64];

	if (argc < 2 || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "usage: instr-prog ROOTS THREADS [hang]\n");
		return 2;
	}
	roots = atoi(argv[1]);
	work_fn = jitperf_fn_register(jitperf_default(), "work", (const void *)run, 64);
	leaf_fn = jitperf_fn_register(jitperf_default(), "leaf", (const void *)leaf, 16);
	mark_fn = jitperf_fn_register(jitperf_default(), "mark", NULL, 0);
	if (!work_fn || !leaf_fn || !mark_fn)
		return 1;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, run, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	if (argc > 3 && !strcmp(argv[3], "hang")) {
		jitperf_enter(work_fn);
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;      /* jitperf_default() closes at exit: statistics written */
}
