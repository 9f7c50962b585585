/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a compile costs the JIT in jitperf's calls: a jitperf_compile_begin
 * + jitperf_compile_end pair, next to one bare write() of the pair's 88
 * bytes (its BEGIN and END go out in one write) to a file of its own,
 * measured in the same run; and the pair with an inactive session.
 *
 *   bench/tiers [N] [ROUNDS]     (N pairs per round, default 20000 and 5)
 *
 * Each call is timed on its own (CLOCK_MONOTONIC around it, the same for
 * every line); a line gives the median and the worst call of the round
 * whose median is the median of the rounds.  The files go to a directory
 * of their own under $TMPDIR (else /tmp), removed at the end.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "jitperf.h"

struct round {
	uint64_t median, worst;
};

static struct round summary(uint64_t *t, size_t n)
{
	struct round r;

	qsort(t, n, sizeof(*t), bench_cmp_u64);
	r.median = t[n / 2];
	r.worst = t[n - 1];
	return r;
}

static int cmp_round(const void *a, const void *b)
{
	const struct round *x = a, *y = b;

	return x->median < y->median ? -1 : x->median > y->median;
}

/* pairs of begin+end on jp, each timed */
static struct round pairs(jitperf *jp, uint64_t *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t c, t0 = bench_now();

		if (jitperf_compile_begin(jp, "query_17_filter", 1, &c) ||
		    jitperf_compile_end(jp, c, 0)) {
			fprintf(stderr, "tiers: a compile call failed\n");
			exit(1);
		}
		t[i] = bench_now() - t0;
	}
	return summary(t, n);
}

/* bare write()s of a record of len bytes, each timed */
static struct round writes(int fd, size_t len, uint64_t *t, size_t n)
{
	char rec[128];

	memset(rec, 'r', sizeof(rec));
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = bench_now();

		if (write(fd, rec, len) != (ssize_t)len) {
			perror("tiers: write");
			exit(1);
		}
		t[i] = bench_now() - t0;
	}
	return summary(t, n);
}

/* the timing alone */
static struct round nothing(uint64_t *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = bench_now();

		__asm__ volatile("" ::: "memory");
		t[i] = bench_now() - t0;
	}
	return summary(t, n);
}

static void line(const char *what, struct round *r, int rounds, double ref)
{
	qsort(r, (size_t)rounds, sizeof(*r), cmp_round);
	printf("| %s | %llu / %llu | %.2f |\n", what, (unsigned long long)r[rounds / 2].median,
	       (unsigned long long)r[rounds / 2].worst,
	       ref > 0 ? (double)r[rounds / 2].median / ref : 1.0);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct round active[64], inactive[64], bare[64], floor_[64];
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_JITDUMP };
	char dir[4096], path[4200];
	jitperf *jp, *off;
	uint64_t *t;
	double ref;
	int fd;

	if (n < 1 || rounds < 1 || rounds > 64)
		return fprintf(stderr, "usage: tiers [N] [ROUNDS <= 64]\n"), 2;
	t = malloc(n * sizeof(*t));
	snprintf(dir, sizeof(dir), "%s/jitperf-bench-tiers.XXXXXX", tmp);
	if (!t || !mkdtemp(dir))
		return perror("tiers"), 1;
	o.dir = dir;
	snprintf(path, sizeof(path), "%s/bare", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || jitperf_open(&jp, &o))
		return perror("tiers"), 1;
	o.outputs = 0;
	unsetenv("JITPERF");
	if (jitperf_open(&off, &o))
		return perror("tiers"), 1;

	/* interleaved rounds: the machine's drift falls on every line alike */
	for (int r = 0; r < rounds; r++) {
		active[r] = pairs(jp, t, n);
		bare[r] = writes(fd, 88, t, n);   /* the pair's BEGIN (56) and END (32) */
		inactive[r] = pairs(off, t, n);
		floor_[r] = nothing(t, n);
	}
	qsort(bare, (size_t)rounds, sizeof(*bare), cmp_round);
	ref = (double)bare[rounds / 2].median;
	printf("%zu calls per round, %d rounds; ns per call (median / worst call)\n\n", n, rounds);
	printf("| what | ns (median / worst) | x bare write() |\n|---|---|---|\n");
	line("`jitperf_compile_begin` + `jitperf_compile_end`", active, rounds, ref);
	line("one bare `write()` of 88 bytes", bare, rounds, ref);
	line("the pair, inactive session", inactive, rounds, ref);
	line("nothing: the two clock reads that time a call", floor_, rounds, ref);

	jitperf_close(jp);
	jitperf_close(off);
	close(fd);
	unlink(path);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	unlink(path);
	snprintf(path, sizeof(path), "%s/jit-%d.tiers", dir, (int)getpid());
	unlink(path);
	rmdir(dir);
	free(t);
	return 0;
}
