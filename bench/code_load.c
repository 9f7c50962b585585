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
 * The third argument times one output alone.  Both wall time and the
 * thread's CPU time are printed: on a shared machine the wall time also
 * counts the time other processes held the CPU.
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

struct stamp {
	double wall, cpu;
};

struct cost {           /* per function, one round */
	double wall, cpu;
};

static unsigned outputs = JITPERF_PERFMAP | JITPERF_JITDUMP;

static struct stamp now(void)
{
	struct timespec w, c;

	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
	return (struct stamp){ w.tv_sec * 1e9 + w.tv_nsec, c.tv_sec * 1e9 + c.tv_nsec };
}

static struct cost since(struct stamp t0, int n)
{
	struct stamp t1 = now();

	return (struct cost){ (t1.wall - t0.wall) / n, (t1.cpu - t0.cpu) / n };
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

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* One round: n registrations in a fresh session. */
static struct cost round_load(const char *dir, const unsigned char *code, char **names, int n)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = outputs, .dir = dir };
	char path[4096];
	struct stamp t0;
	struct cost c;
	jitperf *jp;
	int err;

	err = jitperf_open(&jp, &o);
	if (err) {
		fprintf(stderr, "code_load: jitperf_open: %s\n", jitperf_strerror(err));
		exit(1);
	}
	t0 = now();
	for (int i = 0; i < n; i++) {
		err = jitperf_code_load(jp, names[i], code + (size_t)i * CODE_LEN, CODE_LEN, NULL);
		if (err) {
			fprintf(stderr, "code_load: %s\n", jitperf_strerror(err));
			exit(1);
		}
	}
	c = since(t0, n);
	jitperf_close(jp);
	/* removed at once, like the write() rounds' files: otherwise their dirty
	 * pages would be written back during the next rounds and bill those */
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	return c;
}

static int create(const char *dir, const char *name, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0)
		die(path);
	return fd;
}

/* The code bytes with a plain write() each. */
static struct cost round_write(const char *dir, const unsigned char *code, int n)
{
	char path[4096];
	struct stamp t0;
	struct cost c;
	int fd = create(dir, "plain.bin", path, sizeof(path));

	t0 = now();
	for (int i = 0; i < n; i++)
		if (write(fd, code + (size_t)i * CODE_LEN, CODE_LEN) != CODE_LEN)
			die("write");
	c = since(t0, n);
	close(fd);
	unlink(path);
	return c;
}

/* One perf map line and one jitdump-sized record, each its own write(). */
static struct cost round_write2(const char *dir, const unsigned char *code, int n)
{
	static const char line[] = "7f0000001000 100 jit_fn_12345\n";
	char path1[4096], path2[4096], rec[64 + 32 + CODE_LEN];
	struct stamp t0;
	struct cost c;
	int fd1 = create(dir, "plain.map", path1, sizeof(path1));
	int fd2 = create(dir, "plain.dump", path2, sizeof(path2));

	memset(rec, 0, sizeof(rec));
	t0 = now();
	for (int i = 0; i < n; i++) {
		memcpy(rec + 96, code + (size_t)i * CODE_LEN, CODE_LEN);
		if (write(fd1, line, sizeof(line) - 1) != sizeof(line) - 1 ||
		    write(fd2, rec, sizeof(rec)) != (ssize_t)sizeof(rec))
			die("write");
	}
	c = since(t0, n);
	close(fd1);
	close(fd2);
	unlink(path1);
	unlink(path2);
	return c;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	char dir[] = "/tmp/jitperf-bench.XXXXXX";
	double *v[6];   /* wall and CPU of: load, write, two writes */
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
	names = calloc((size_t)n, sizeof(*names));
	if (!code || !names || !mkdtemp(dir))
		die("code_load");
	for (int i = 0; i < 6; i++)
		if (!(v[i] = calloc((size_t)rounds, sizeof(double))))
			die("code_load");
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
		if (!(names[i] = strdup(name)))
			die("code_load");
	}
	for (int r = 0; r < rounds; r++) {
		struct cost c[3];

		c[0] = round_load(dir, code, names, n);
		c[1] = round_write(dir, code, n);
		c[2] = round_write2(dir, code, n);
		for (int k = 0; k < 3; k++) {
			v[2 * k][r] = c[k].wall;
			v[2 * k + 1][r] = c[k].cpu;
		}
	}
	printf("%d functions of %d bytes, median of %d rounds:      wall ns     CPU ns\n",
	       n, CODE_LEN, rounds);
	printf("  jitperf_code_load, %-19s %9.0f  %9.0f  per function\n",
	       outputs == JITPERF_PERFMAP ? "perf map only" :
	       outputs == JITPERF_JITDUMP ? "jitdump only" : "perf map + jitdump",
	       median(v[0], rounds), median(v[1], rounds));
	printf("  plain write() of the code bytes     %9.0f  %9.0f  per call\n",
	       median(v[2], rounds), median(v[3], rounds));
	printf("  two write()s: map line + record     %9.0f  %9.0f  per function\n",
	       median(v[4], rounds), median(v[5], rounds));
	rmdir(dir);
	for (int i = 0; i < n; i++)
		free(names[i]);
	for (int i = 0; i < 6; i++)
		free(v[i]);
	free(names);
	free(code);
	return 0;
}
