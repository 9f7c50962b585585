/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A program of known call stacks for perf.data tests: main -> work ->
 * qsort (libc) -> by_value, in the main thread, in a thread named
 * "pd-worker" and in a child forked first (which inherits its parent's
 * maps through PERF_RECORD_FORK).  Built with frame pointers so perf record -g
 * sees every frame.
 *
 *   pdprog [ROUNDS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned sink;

__attribute__((noinline)) static int by_value(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	sink += x ^ y;
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void work(long rounds)
{
	enum { N = 4096 };
	static __thread unsigned v[N];
	unsigned seed = 1;

	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < N; i++)
			v[i] = seed = seed * 1103515245u + 12345u;
		qsort(v, N, sizeof(v[0]), by_value);
	}
}

static void *worker(void *arg)
{
	work((long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200;
	pthread_t t;
	pid_t child;
	int status;

	/* fork before the thread exists: a child forked beside a running
	 * thread may find an allocator lock held (under sanitizers) */
	child = fork();
	if (child == 0) {
		work(rounds);
		_exit(0);
	}
	if (pthread_create(&t, NULL, worker, (void *)rounds))
		return 1;
	pthread_setname_np(t, "pd-worker");
	work(rounds);
	pthread_join(t, NULL);
	if (child > 0)
		waitpid(child, &status, 0);
	return 0;
}
