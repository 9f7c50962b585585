/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/code_load: median cost of jitperf_code_load per function with the
 * perf map and the jitdump on (256-byte functions, 100k per round), next to
 * a plain write() of the same bytes for scale, and two plain writes (a map
 * line and a record: the floor of a writer without buffering).  Writes into
 * a temporary directory and removes it, and its /tmp/perf-<pid>.map.
 *
 *   bench/code_load [FUNCTIONS [ROUNDS [perfmap|jitdump]]]
 *
 * The third argument times one output alone.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jitperf.h"

#define CODE_LEN 256

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One round: n registrations in a fresh session; ns per function. */
static unsigned outputs = JITPERF_PERFMAP | JITPERF_JITDUMP;

static double round_load(const char *dir, const unsigned char *code, char **names, int n)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = outputs, .dir = dir };
	jitperf *jp;
	double t0, t1;
	int err;

	err = jitperf_open(&jp, &o);
	if (err) {
		fprintf(stderr, "code_load: jitperf_open: %s\n", jitperf_strerror(err));
		exit(1);
	}
	t0 = now_ns();
	for (int i = 0; i < n; i++) {
		err = jitperf_code_load(jp, names[i], code + (size_t)i * CODE_LEN, CODE_LEN, NULL);
		if (err) {
			fprintf(stderr, "code_load: %s\n", jitperf_strerror(err));
			exit(1);
		}
	}
	t1 = now_ns();
	jitperf_close(jp);
	return (t1 - t0) / n;
}

/* The same bytes (one jitdump CODE_LOAD's worth) with a plain write() each. */
static double round_write(const char *dir, const unsigned char *code, int n)
{
	char path[4096];
	double t0, t1;
	int fd;

	snprintf(path, sizeof(path), "%s/plain.bin", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		if (write(fd, code + (size_t)i * CODE_LEN, CODE_LEN) != CODE_LEN) {
			perror("write");
			exit(1);
		}
	t1 = now_ns();
	close(fd);
	unlink(path);
	return (t1 - t0) / n;
}

/*
 * The floor of any writer that keeps both files complete at every moment:
 * one perf map line and one jitdump record (name + 256 bytes), each a
 * write() of its own.
 */
static double round_write2(const char *dir, const unsigned char *code, int n)
{
	char path[4096], rec[64 + 32 + CODE_LEN];
	double t0, t1;
	int fd1, fd2;

	snprintf(path, sizeof(path), "%s/plain.map", dir);
	fd1 = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	unlink(path);
	snprintf(path, sizeof(path), "%s/plain.dump", dir);
	fd2 = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	unlink(path);
	if (fd1 < 0 || fd2 < 0) {
		perror("code_load");
		exit(1);
	}
	memset(rec, 0, sizeof(rec));
	t0 = now_ns();
	for (int i = 0; i < n; i++) {
		memcpy(rec + 96, code + (size_t)i * CODE_LEN, CODE_LEN);
		if (write(fd1, "7f0000001000 100 jit_fn_12345\n", 30) != 30 ||
		    write(fd2, rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
			perror("write");
			exit(1);
		}
	}
	t1 = now_ns();
	close(fd1);
	close(fd2);
	return (t1 - t0) / n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	char dir[] = "/tmp/jitperf-bench.XXXXXX", path[4096];
	double *load, *plain, *plain2;
	unsigned char *code;
	char **names;

	if (argc > 3)
		outputs = !strcmp(argv[3], "perfmap") ? JITPERF_PERFMAP :
			  !strcmp(argv[3], "jitdump") ? JITPERF_JITDUMP : 0;
	if (n < 1 || rounds < 1 || !outputs) {
		fprintf(stderr, "usage: code_load [FUNCTIONS [ROUNDS [perfmap|jitdump]]]\n");
		return 2;
	}
	code = malloc((size_t)n * CODE_LEN);
	load = calloc((size_t)rounds, sizeof(*load));
	plain = calloc((size_t)rounds, sizeof(*plain));
	plain2 = calloc((size_t)rounds, sizeof(*plain2));
	names = calloc((size_t)n, sizeof(*names));
	if (!code || !load || !plain || !plain2 || !names || !mkdtemp(dir)) {
		perror("code_load");
		return 1;
	}
	/* distinct bytes for every function, as a JIT's are (xorshift) */
	for (size_t i = 0, x = 88172645463325252u; i < (size_t)n * CODE_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		code[i] = (unsigned char)x;
	}
	/* names made before timing: only the library's work is measured */
	for (int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "jit_fn_%d", i);
		if (!(names[i] = strdup(name))) {
			perror("code_load");
			return 1;
		}
	}
	for (int r = 0; r < rounds; r++) {
		load[r] = round_load(dir, code, names, n);
		plain[r] = round_write(dir, code, n);
		plain2[r] = round_write2(dir, code, n);
	}
	printf("%d functions of %d bytes, median of %d rounds:\n", n, CODE_LEN, rounds);
	printf("  jitperf_code_load, %-19s %6.0f ns/function\n",
	       outputs == JITPERF_PERFMAP ? "perf map only" : outputs == JITPERF_JITDUMP ?
	       "jitdump only" : "perf map + jitdump", median(load, rounds));
	printf("  plain write() of the code bytes         %6.0f ns/call\n", median(plain, rounds));
	printf("  two plain write()s: map line + record   %6.0f ns/function\n", median(plain2, rounds));
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	rmdir(dir);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(code);
	free(load);
	free(plain);
	free(plain2);
	return 0;
}
