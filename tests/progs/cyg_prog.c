/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Built with -finstrument-functions -g for the libjitperf-cyg tests:
 * "cyg_prog N THREADS" computes fib(N) in main and again in each of
 * THREADS threads, and prints the sum, so every count is known exactly:
 * main 1, worker THREADS, fib (1 + THREADS) * calls(N).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 16

static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static void *worker(void *arg)
{
	return (void *)(long)fib(*(int *)arg);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	int nthreads = argc > 2 ? atoi(argv[2]) : 0;
	pthread_t t[MAX_THREADS];
	long sum;
	int i;

	if (n < 0 || n > 40 || nthreads < 0 || nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: cyg_prog N(0-40) THREADS(0-%d)\n", MAX_THREADS);
		return 2;
	}
	sum = fib(n);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, &n) != 0) {
			fprintf(stderr, "cyg_prog: pthread_create failed\n");
			return 1;
		}
	for (i = 0; i < nthreads; i++) {
		void *r;

		pthread_join(t[i], &r);
		sum += (long)r;
	}
	printf("%ld\n", sum);
	return 0;
}
