/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/code_load: what jitperf_code_load costs per function (perf map +
 * jitdump, 256-byte functions), next to one bare write() of a record of
 * the same size, in the same run:
 *
 * - back to back: FUNCTIONS registrations in a row, wall time, the
 *   registering thread's CPU time, and the whole process's CPU time (which
 *   includes libjitperf's flusher thread, which writes the rings out to
 *   the files, grows them ahead and touches the code table's pages ahead);
 * - paced: one registration every PACE_US microseconds of busy work, as a
 *   JIT that compiles each function first (fast tiers take 15-20 us a
 *   function); the median time of one call.
 *
 * Each for the default (records into a mapped ring beside each file,
 * written out in batches) and for JITPERF_IO=write (one write() per
 * record).  Medians of ROUNDS rounds, in which the three back-to-back
 * runs take turns at going first.
 *
 * And why the files themselves are not mapped: what readying one new page
 * of a mapped file costs on this machine (fallocate()d,
 * MADV_POPULATE_WRITE, a first store from user space), per function at the
 * bytes a function takes in the two files.  A writer through mappings of
 * the files could not go below that back to back, whoever readies the
 * pages; the same readying split between two threads at once shows
 * whether the machine readies pages in parallel (on a VM with shadow page
 * tables it may not).  The ring's pages are readied once, then reused.
 * Measured after all rounds: readying pages slows the run that follows.
 * Writes into a temporary directory and removes it, and its perf map.
 *
 *   nice bench/code_load [FUNCTIONS [ROUNDS [PACE_US]]]
 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jitperf.h"

#ifndef MADV_POPULATE_WRITE
# define MADV_POPULATE_WRITE 23     /* Linux 5.14; older headers lack it */
#endif

#define CODE_LEN 256
/* a CODE_LOAD of a 256-byte function named jit_fn_NNNNN: what one write() would carry */
#define RECORD_LEN (56 + 13 + CODE_LEN)

struct cost {           /* per function, one round */
	double wall, cpu, proc;
};

static double clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct stamp {
	double wall, cpu, proc;
};

static struct stamp now(void)
{
	return (struct stamp){ clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_THREAD_CPUTIME_ID),
			       clock_ns(CLOCK_PROCESS_CPUTIME_ID) };
}

static struct cost since(struct stamp t0, int n)
{
	struct stamp t1 = now();

	return (struct cost){ (t1.wall - t0.wall) / n, (t1.cpu - t0.cpu) / n,
			      (t1.proc - t0.proc) / n };
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

static const char *dir;
static const unsigned char *code;
static char **names;
static double pace_ns, clock_cost;
static double file_bytes, file_fns;     /* both files, and functions, over the sessions */

/* Busy work until pace_ns have passed (a JIT compiling the next function). */
static void work(void)
{
	double until = clock_ns(CLOCK_MONOTONIC) + pace_ns;

	while (clock_ns(CLOCK_MONOTONIC) < until)
		;
}

static jitperf *open_session(int io_write)
{
	struct jitperf_options o = { .size = sizeof(o),
				     .outputs = JITPERF_PERFMAP | JITPERF_JITDUMP, .dir = dir };
	jitperf *jp;
	int err;

	if (io_write)
		setenv("JITPERF_IO", "write", 1);
	else
		unsetenv("JITPERF_IO");
	err = jitperf_open(&jp, &o);
	if (err) {
		fprintf(stderr, "code_load: jitperf_open: %s\n", jitperf_strerror(err));
		exit(1);
	}
	return jp;
}

static void close_session(jitperf *jp, int n)
{
	char path[4096];

	struct stat st;

	jitperf_close(jp);
	file_fns += n;
	/* removed at once: otherwise their dirty pages would be written back
	 * during the next rounds and bill those */
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	if (!stat(path, &st))
		file_bytes += (double)st.st_size;
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!stat(path, &st))
		file_bytes += (double)st.st_size;
	unlink(path);
}

static void load(jitperf *jp, int i)
{
	int err = jitperf_code_load(jp, names[i], code + (size_t)i * CODE_LEN, CODE_LEN, NULL);

	if (err) {
		fprintf(stderr, "code_load: %s\n", jitperf_strerror(err));
		exit(1);
	}
}

static struct cost loads(int io_write, int n)
{
	jitperf *jp = open_session(io_write);
	struct stamp t0 = now();
	struct cost c;

	for (int i = 0; i < n; i++)
		load(jp, i);
	c = since(t0, n);
	close_session(jp, n);
	return c;
}

/* Median ns of one call, one every pace_ns. */
static double loads_paced(int io_write, int n, double *v)
{
	jitperf *jp = open_session(io_write);

	for (int i = 0; i < n; i++) {
		double t0;

		work();
		t0 = clock_ns(CLOCK_MONOTONIC);
		load(jp, i);
		v[i] = clock_ns(CLOCK_MONOTONIC) - t0 - clock_cost;
	}
	close_session(jp, n);
	return median(v, n);
}

static int create(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/plain.bin", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0)
		die(path);
	return fd;
}

static void write_one(int fd, int i)
{
	static unsigned char rec[RECORD_LEN];

	memcpy(rec + RECORD_LEN - CODE_LEN, code + (size_t)i * CODE_LEN, CODE_LEN);
	if (write(fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec))
		die("write");
}

/* One write() of a record per function. */
static struct cost writes(int n)
{
	char path[4096];
	int fd = create(path, sizeof(path));
	struct stamp t0 = now();
	struct cost c;

	for (int i = 0; i < n; i++)
		write_one(fd, i);
	c = since(t0, n);
	close(fd);
	unlink(path);
	return c;
}

static double writes_paced(int n, double *v)
{
	char path[4096];
	int fd = create(path, sizeof(path));

	for (int i = 0; i < n; i++) {
		double t0;

		work();
		t0 = clock_ns(CLOCK_MONOTONIC);
		write_one(fd, i);
		v[i] = clock_ns(CLOCK_MONOTONIC) - t0 - clock_cost;
	}
	close(fd);
	unlink(path);
	return median(v, n);
}

struct span {
	char  *m;
	size_t from, to;
};

/* Ready [from, to) of a mapping: populate a chunk, store once a page. */
static void *ready_span(void *arg)
{
	const struct span *s = arg;
	const size_t chunk = (size_t)64 << 10, page = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t at = s->from; at < s->to; at += chunk) {
		madvise(s->m + at, chunk, MADV_POPULATE_WRITE);
		for (size_t p = at; p < at + chunk; p += page)
			s->m[p] = 1;
	}
	return NULL;
}

/*
 * ns of wall time per page to ready the pages of a shared mapping of a new
 * file, by one thread or by two at once (each half of them): whether a
 * second thread adds pages per second, or the machine serializes them.
 */
static double page_ready(int threads)
{
	const size_t len = (size_t)16 << 20;
	long page = sysconf(_SC_PAGESIZE);
	struct span half[2];
	pthread_t t2;
	char path[4096];
	double t0, t;
	char *m;
	int fd;

	snprintf(path, sizeof(path), "%s/pages.bin", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || posix_fallocate(fd, 0, (off_t)len))
		die(path);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		die("mmap");
	half[0] = (struct span){ m, 0, threads > 1 ? len / 2 : len };
	half[1] = (struct span){ m, len / 2, len };
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (threads > 1 && pthread_create(&t2, NULL, ready_span, &half[1]))
		die("pthread_create");
	ready_span(&half[0]);
	if (threads > 1)
		pthread_join(t2, NULL);
	t = (clock_ns(CLOCK_MONOTONIC) - t0) / (double)(len / (size_t)page);
	munmap(m, len);
	close(fd);
	unlink(path);
	return t;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double pace_us = argc > 3 ? atof(argv[3]) : 15;
	int npaced = n < 20000 ? n : 20000;
	char tmp[] = "/tmp/jitperf-bench.XXXXXX";
	double *v[12], *calls;
	unsigned char *buf;
	double t0;

	if (n < 1 || rounds < 1 || pace_us < 0) {
		fprintf(stderr, "usage: code_load [FUNCTIONS [ROUNDS [PACE_US]]]\n");
		return 2;
	}
	pace_ns = pace_us * 1e3;
	buf = malloc((size_t)n * CODE_LEN);
	names = calloc((size_t)n, sizeof(*names));
	calls = calloc((size_t)npaced, sizeof(*calls));
	if (!buf || !names || !calls || !mkdtemp(tmp))
		die("code_load");
	dir = tmp;
	code = buf;
	for (int i = 0; i < 12; i++)
		if (!(v[i] = calloc((size_t)rounds, sizeof(double))))
			die("code_load");
	/* distinct bytes for every function, as a JIT's are (xorshift) */
	for (size_t i = 0, x = 88172645463325252u; i < (size_t)n * CODE_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
	/* names made before timing: only the library's work is measured */
	for (int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "jit_fn_%05d", i);
		if (!(names[i] = strdup(name)))
			die("code_load");
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < 999; i++)
		clock_ns(CLOCK_MONOTONIC);
	clock_cost = (clock_ns(CLOCK_MONOTONIC) - t0) / 1000;

	/*
	 * The three back-to-back runs take turns at going first in a round:
	 * a run right after another writer's megabytes (or after readying
	 * pages) pays for what that left behind, and no one of them should
	 * always be the one that does.  The pages are readied after all
	 * rounds, for the same reason.
	 */
	for (int r = 0; r < rounds; r++) {
		for (int j = 0; j < 3; j++) {
			int k = (r + j) % 3;
			struct cost c = k == 2 ? writes(n) : loads(k, n);

			v[k][r] = c.wall;
			v[3 + k][r] = c.cpu;
			if (k == 0)
				v[9][r] = c.proc;
		}
		v[6][r] = loads_paced(0, npaced, calls);
		v[7][r] = loads_paced(1, npaced, calls);
		v[8][r] = writes_paced(npaced, calls);
	}
	for (int r = 0; r < rounds; r++) {
		v[10][r] = page_ready(1);
		v[11][r] = page_ready(2);
	}
	printf("%d functions of %d bytes (perf map + jitdump), median of %d rounds\n", n, CODE_LEN,
	       rounds);
	printf("                                       back to back, per call   paced %.0f us apart\n"
	       "                                          wall ns     CPU ns    median ns of a call\n",
	       pace_us);
	printf("  jitperf_code_load (ring, batched)     %9.0f  %9.0f  %12.0f\n", median(v[0], rounds),
	       median(v[3], rounds), median(v[6], rounds));
	printf("    the same, CPU of the whole process             %9.0f  (with the flusher thread)\n",
	       median(v[9], rounds));
	printf("  jitperf_code_load (JITPERF_IO=write)  %9.0f  %9.0f  %12.0f\n", median(v[1], rounds),
	       median(v[4], rounds), median(v[7], rounds));
	printf("  one bare write() of a %d-byte record  %9.0f  %9.0f  %12.0f\n", RECORD_LEN,
	       median(v[2], rounds), median(v[5], rounds), median(v[8], rounds));
	printf("  batched / bare write()                %9.2f  %9.2f  %12.2f\n",
	       median(v[0], rounds) / median(v[2], rounds), median(v[3], rounds) / median(v[5], rounds),
	       median(v[6], rounds) / median(v[8], rounds));
	if (file_fns) {
		double per_fn = file_bytes / file_fns;
		double page1 = median(v[10], rounds), page2 = median(v[11], rounds);
		double best = page2 < page1 ? page2 : page1;
		long psize = sysconf(_SC_PAGESIZE);

		printf("  one page of a mapped file readied     %9.0f  (fallocate, populate, first store)\n"
		       "    by two threads at once, per page    %9.0f  (wall: 1/2 of the above if they\n"
		       "                                                  ran in parallel)\n"
		       "    per function, at %.0f bytes a function %9.0f  = %.2f of a bare write(): the\n"
		       "    least a writer through mappings of the files would pay back to back\n",
		       page1, page2, per_fn, best * per_fn / (double)psize,
		       best * per_fn / (double)psize / median(v[2], rounds));
	}
	rmdir(tmp);
	for (int i = 0; i < n; i++)
		free(names[i]);
	for (int i = 0; i < 12; i++)
		free(v[i]);
	free(names);
	free(calls);
	free(buf);
	return 0;
}
