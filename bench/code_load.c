/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/code_load: what registering a function costs (perf map + jitdump,
 * 256-byte functions), counted as CPU time of the whole process (every
 * thread, CLOCK_PROCESS_CPUTIME_ID) from the first load to the end of the
 * close, next to references measured in the same run:
 *
 *  - jitperf_code_load: the library (one write() of the perf map line, one
 *    of the jitdump unit, under the session lock);
 *  - jitperf_code_load in standby (JITPERF=standby): nothing written, the
 *    load's time and thread kept; and once, the wake a recorder asks for
 *    (connect to the session's socket, "attach DIR"): every function
 *    written with its load time, CPU of all threads per function;
 *  - write() prototype: the same two records made here and written with
 *    one write() each, without the library (its floor on this path);
 *  - mapping prototype: the same two records stored into shared mappings
 *    of the two files, grown with fallocate() in 1 MiB steps, the head of
 *    each record stored last, the files cut to their records at close
 *    (what a writer through mappings of the files would do; it leaves
 *    zeros after the last record when killed, see doc/registration.md);
 *  - one bare write() of a record of the size of the CODE_LOAD.
 *
 * Back to back: FUNCTIONS registrations in a row, CPU per function, the
 * median and the worst of ROUNDS rounds (the four runs take turns at going
 * first).  Paced: one registration every PACE_US microseconds of busy
 * work, as a JIT that compiles each function first; the process's CPU
 * time of each call (less the cost of reading the clock), median and
 * worst.  Writes into a temporary directory and removes it, and its perf
 * maps.
 *
 *   nice bench/code_load [FUNCTIONS [ROUNDS [PACE_US]]]
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "jitperf.h"
#include "format/jitdump.h"

#define CODE_LEN 256
/* a CODE_LOAD of a 256-byte function named jit_fn_NNNNN: what one write() would carry */
#define RECORD_LEN (sizeof(struct jitdump_code_load) + 13 + CODE_LEN)
#define KINDS 5

enum { LIB, STANDBY, PROTO_WRITE, PROTO_MAP, BARE };
static const char *const kind_name[KINDS] = {
	"jitperf_code_load (write path)", "jitperf_code_load, standby", "write() prototype, 2 records",
	"mapping prototype, 2 records", "one bare write() of a record",
};

static double clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double proc_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double worst(const double *v, int n)
{
	double w = v[0];

	for (int i = 1; i < n; i++)
		if (v[i] > w)
			w = v[i];
	return w;
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

/* Busy work until pace_ns have passed (a JIT compiling the next function). */
static void work(void)
{
	double until = clock_ns(CLOCK_MONOTONIC) + pace_ns;

	while (clock_ns(CLOCK_MONOTONIC) < until)
		;
}

/* ---- the writers: open, one function, close */

/* A file written through a shared mapping of itself. */
struct mapped {
	int            fd;
	unsigned char *m;
	uint64_t       size, alloc;
};

#define WINDOW ((size_t)1 << 30)
#define STEP   ((uint64_t)1 << 20)

struct writer {
	int            kind;
	jitperf       *jp;
	int            map_fd, dump_fd;     /* PROTO_WRITE, BARE (dump_fd) */
	struct mapped  mmap_map, mmap_dump; /* PROTO_MAP */
	uint64_t       index;
	char           map_path[64], dump_path[4096];
};

static int create(const char *path, int flags)
{
	int fd = open(path, flags | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		die(path);
	return fd;
}

static void mapped_open(struct mapped *f, const char *path)
{
	f->fd = create(path, O_RDWR);
	f->size = f->alloc = 0;
	f->m = mmap(NULL, WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	if (f->m == MAP_FAILED)
		die("mmap");
}

/* Store head (h bytes) and body as one record: the body first, the head last. */
static void mapped_append(struct mapped *f, const void *head, size_t h, const void *body, size_t b)
{
	uint64_t end = f->size + h + b;

	if (end > f->alloc) {
		uint64_t want = (end + STEP - 1) & ~(STEP - 1);

		if (posix_fallocate(f->fd, (off_t)f->alloc, (off_t)(want - f->alloc)))
			die("fallocate");
		f->alloc = want;
	}
	memcpy(f->m + f->size + h, body, b);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(f->m + f->size, head, h);
	f->size = end;
}

static void mapped_close(struct mapped *f)
{
	munmap(f->m, WINDOW);
	if (ftruncate(f->fd, (off_t)f->size))
		die("ftruncate");
	close(f->fd);
}

static void writer_open(struct writer *w, int kind)
{
	struct jitperf_options o = { .size = sizeof(o),
				     .outputs = JITPERF_PERFMAP | JITPERF_JITDUMP, .dir = dir };
	struct jitdump_file_header h = { .magic = JITDUMP_MAGIC, .version = JITDUMP_VERSION,
					 .total_size = sizeof(h), .pid = (uint32_t)getpid() };
	int err;

	memset(w, 0, sizeof(*w));
	w->kind = kind;
	snprintf(w->map_path, sizeof(w->map_path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(w->dump_path, sizeof(w->dump_path), "%s/jit-%d.dump", dir, (int)getpid());
	switch (kind) {
	case STANDBY:
		o.outputs = JITPERF_STANDBY;
		/* fall through */
	case LIB:
		err = jitperf_open(&w->jp, &o);
		if (err) {
			fprintf(stderr, "code_load: jitperf_open: %s\n", jitperf_strerror(err));
			exit(1);
		}
		break;
	case PROTO_WRITE:
		w->map_fd = create(w->map_path, O_WRONLY | O_APPEND);
		w->dump_fd = create(w->dump_path, O_WRONLY | O_APPEND);
		if (write(w->dump_fd, &h, sizeof(h)) != (ssize_t)sizeof(h))
			die("write");
		break;
	case PROTO_MAP:
		mapped_open(&w->mmap_map, w->map_path);
		mapped_open(&w->mmap_dump, w->dump_path);
		mapped_append(&w->mmap_dump, &h, 8, (const char *)&h + 8, sizeof(h) - 8);
		break;
	case BARE:
		w->dump_fd = create(w->dump_path, O_WRONLY | O_APPEND);
		break;
	}
}

/* "START SIZE name\n", as the library formats it */
static size_t map_line(char *line, uint64_t addr, const char *name)
{
	return (size_t)sprintf(line, "%llx %x %s\n", (unsigned long long)addr, CODE_LEN, name);
}

static size_t code_load(unsigned char *rec, int i, uint64_t index)
{
	struct jitdump_code_load cl;
	size_t nlen = strlen(names[i]) + 1;
	const unsigned char *c = code + (size_t)i * CODE_LEN;

	memset(&cl, 0, sizeof(cl));
	cl.p.id = JIT_CODE_LOAD;
	cl.p.total_size = (uint32_t)(sizeof(cl) + nlen + CODE_LEN);
	cl.p.timestamp = (uint64_t)clock_ns(CLOCK_MONOTONIC);
	cl.pid = cl.tid = (uint32_t)getpid();
	cl.vma = cl.code_addr = (uintptr_t)c;
	cl.code_size = CODE_LEN;
	cl.code_index = index;
	memcpy(rec, &cl, sizeof(cl));
	memcpy(rec + sizeof(cl), names[i], nlen);
	memcpy(rec + sizeof(cl) + nlen, c, CODE_LEN);
	return sizeof(cl) + nlen + CODE_LEN;
}

static void write_all(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		die("write");
}

static void writer_load(struct writer *w, int i)
{
	unsigned char rec[RECORD_LEN + 64];
	char line[128];
	size_t ln, rn;
	int err;

	switch (w->kind) {
	case LIB:
	case STANDBY:
		err = jitperf_code_load(w->jp, names[i], code + (size_t)i * CODE_LEN, CODE_LEN, NULL);
		if (err) {
			fprintf(stderr, "code_load: %s\n", jitperf_strerror(err));
			exit(1);
		}
		break;
	case PROTO_WRITE:
		ln = map_line(line, (uintptr_t)(code + (size_t)i * CODE_LEN), names[i]);
		rn = code_load(rec, i, ++w->index);
		write_all(w->map_fd, line, ln);
		write_all(w->dump_fd, rec, rn);
		break;
	case PROTO_MAP:
		ln = map_line(line, (uintptr_t)(code + (size_t)i * CODE_LEN), names[i]);
		rn = code_load(rec, i, ++w->index);
		/* a line's newline is its head: the line before it ends there */
		mapped_append(&w->mmap_map, line + ln - 1, 1, line, ln - 1);
		mapped_append(&w->mmap_dump, rec, 8, rec + 8, rn - 8);
		break;
	case BARE:
		memcpy(rec + RECORD_LEN - CODE_LEN, code + (size_t)i * CODE_LEN, CODE_LEN);
		write_all(w->dump_fd, rec, RECORD_LEN);
		break;
	}
}

static void writer_close(struct writer *w)
{
	switch (w->kind) {
	case LIB:
	case STANDBY:
		jitperf_close(w->jp);
		break;
	case PROTO_WRITE:
		close(w->map_fd);
		close(w->dump_fd);
		break;
	case PROTO_MAP:
		mapped_close(&w->mmap_map);
		mapped_close(&w->mmap_dump);
		break;
	case BARE:
		close(w->dump_fd);
		break;
	}
}

/* Removed at once, not timed: their dirty pages would be written back
 * during the next runs and bill those. */
static void writer_remove(struct writer *w)
{
	unlink(w->map_path);
	unlink(w->dump_path);
}

/* Back to back: process CPU ns per function, the close included. */
static double back_to_back(int kind, int n)
{
	struct writer w;
	double t0, t;

	writer_open(&w, kind);
	t0 = proc_ns();
	for (int i = 0; i < n; i++)
		writer_load(&w, i);
	writer_close(&w);
	t = proc_ns() - t0;
	writer_remove(&w);
	return t / n;
}

/* Paced: the process CPU ns of each call in v[0..n). */
static void paced(int kind, int n, double *v)
{
	struct writer w;

	writer_open(&w, kind);
	for (int i = 0; i < n; i++) {
		double t0;

		work();
		t0 = proc_ns();
		writer_load(&w, i);
		v[i] = proc_ns() - t0 - clock_cost;
	}
	writer_close(&w);
	writer_remove(&w);
}

/* A recorder's knock on our own standby socket: returns once the files are complete. */
static void knock(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[8192];
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "jitperf-standby-%d",
			 (int)getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)))
		die("connect");
	n = snprintf(buf, sizeof(buf), "attach %s\n", dir);
	write_all(fd, buf, (size_t)n);
	while (read(fd, buf, sizeof(buf)) > 0)
		if (strncmp(buf, "ok ", 3))
			fprintf(stderr, "code_load: the wake said: %.*s", 200, buf);
	close(fd);
}

/* The wake of n functions in standby: process CPU ns per function (all threads), and wall ms. */
static double wake(int n, double *wall_ms)
{
	struct writer w;
	double t0, w0, t;

	writer_open(&w, STANDBY);
	for (int i = 0; i < n; i++)
		writer_load(&w, i);
	t0 = proc_ns();
	w0 = clock_ns(CLOCK_MONOTONIC);
	knock();
	t = proc_ns() - t0;
	*wall_ms = (clock_ns(CLOCK_MONOTONIC) - w0) / 1e6;
	writer_close(&w);
	writer_remove(&w);
	return t / n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double pace_us = argc > 3 ? atof(argv[3]) : 15;
	int npaced = n < 20000 ? n : 20000;
	char tmp[] = "/tmp/jitperf-bench.XXXXXX";
	double *b2b[KINDS], *pmed[KINDS], pworst[KINDS] = { 0 }, *calls;
	double bm[KINDS], bw[KINDS], pm[KINDS];
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
	for (int k = 0; k < KINDS; k++)
		if (!(b2b[k] = calloc((size_t)rounds, sizeof(double))) ||
		    !(pmed[k] = calloc((size_t)rounds, sizeof(double))))
			die("code_load");
	/* distinct bytes for every function, as a JIT's are (xorshift) */
	for (size_t i = 0, x = 88172645463325252u; i < (size_t)n * CODE_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
	/* names made before timing: only the writers' work is measured */
	for (int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "jit_fn_%05d", i);
		if (!(names[i] = strdup(name)))
			die("code_load");
	}
	t0 = proc_ns();
	for (int i = 0; i < 999; i++)
		proc_ns();
	clock_cost = (proc_ns() - t0) / 1000;

	for (int r = 0; r < rounds; r++) {
		for (int j = 0; j < KINDS; j++) {
			int k = (r + j) % KINDS;

			b2b[k][r] = back_to_back(k, n);
		}
		for (int j = 0; j < KINDS; j++) {
			int k = (r + j) % KINDS;

			paced(k, npaced, calls);
			if (worst(calls, npaced) > pworst[k])
				pworst[k] = worst(calls, npaced);
			pmed[k][r] = median(calls, npaced);
		}
	}
	printf("%d functions of %d bytes (perf map + jitdump), %d rounds; CPU time of the whole\n"
	       "process (all threads), the close included\n", n, CODE_LEN, rounds);
	printf("                                     back to back, ns/function   paced %.0f us apart, ns/call\n"
	       "                                        median      worst  xbare    median      worst\n",
	       pace_us);
	for (int k = 0; k < KINDS; k++) {
		bw[k] = worst(b2b[k], rounds);
		bm[k] = median(b2b[k], rounds);
		pm[k] = median(pmed[k], rounds);
	}
	for (int k = 0; k < KINDS; k++)
		printf("  %-33s %9.0f  %9.0f  %5.2f %9.0f  %9.0f\n", kind_name[k], bm[k], bw[k],
		       bm[k] / bm[BARE], pm[k], pworst[k]);
	printf("  jitperf_code_load / bare write():  %.2f back to back, %.2f paced\n",
	       bm[LIB] / bm[BARE], pm[LIB] / pm[BARE]);
	printf("  mapping / write() prototype:       %.2f back to back, %.2f paced\n",
	       bm[PROTO_MAP] / bm[PROTO_WRITE], pm[PROTO_MAP] / pm[PROTO_WRITE]);
	printf("  standby / write path:              %.2f back to back, %.2f paced\n",
	       bm[STANDBY] / bm[LIB], pm[STANDBY] / pm[LIB]);
	{
		double wall, wm[16], ww = 0;
		int nw = rounds < 16 ? rounds : 16;

		for (int r = 0; r < nw; r++) {
			wm[r] = wake(n, &wall);
			if (wall > ww)
				ww = wall;
		}
		printf("  standby wake, %d functions written: %.0f ns/function median, %.0f worst "
		       "(CPU, all threads); %.1f ms worst wall\n", n, median(wm, nw), worst(wm, nw), ww);
	}
	rmdir(tmp);
	for (int i = 0; i < n; i++)
		free(names[i]);
	for (int k = 0; k < KINDS; k++) {
		free(b2b[k]);
		free(pmed[k]);
	}
	free(names);
	free(calls);
	free(buf);
	return 0;
}
