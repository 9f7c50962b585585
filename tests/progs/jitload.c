/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitload: a tiny "JIT" for the integration tests.  It copies small x86-64
 * functions into executable memory, registers them with jitperf_default()
 * (so $JITPERF and $JITPERF_DIR decide what is written) and runs them.
 *
 *   jitload hot SECONDS          three distinct hot functions jl_alpha/beta/gamma
 *   jitload hotkill SECONDS      the same, then SIGKILL ourselves
 *   jitload twins SECONDS        two functions with identical bytes: twin_left, twin_right
 *   jitload kill N               register N functions, then SIGKILL ourselves
 *   jitload runkill N MS         register N functions jl_run_0.. one by one, each
 *                                run for MS ms right after it is registered; then
 *                                register jl_last and SIGKILL ourselves at once
 *   jitload fork                 3 loads, fork; child 2 more, parent 1 more
 *   jitload forkexec             3 loads, fork; the child execs true(1) at once
 *   jitload threads T N          T threads register N functions each
 *   jitload open N               register N functions in a session of its own
 *                                (jitperf_open), and exit without closing it
 *   jitload paced N MS           register N functions, one every MS milliseconds;
 *                                print the pid
 *
 * Exit 77 on other architectures.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "jitperf.h"

typedef unsigned (*loop_fn)(unsigned);

/* mov eax,edi; 1: dec eax; jnz 1b; ret -- padded with an id byte in a nop */
static const unsigned char loop_code[] = {
	0x89, 0xf8, 0xff, 0xc8, 0x75, 0xfc, 0xc3,
};

static unsigned char *code_mem;
static size_t code_used, code_cap;

static void *emit(const unsigned char *bytes, size_t n, unsigned char tag)
{
	unsigned char *p;

	if (code_used + n + 16 > code_cap) {
		fprintf(stderr, "jitload: out of code space\n");
		exit(2);
	}
	p = code_mem + code_used;
	memcpy(p, bytes, n);
	if (tag) {              /* make the bytes distinct: a trailing int3 + tag after ret */
		p[n] = 0xcc;
		p[n + 1] = tag;
		n += 2;
	}
	code_used += (n + 15) & ~(size_t)15;
	return p;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "jitload: %s: %s\n", what, jitperf_strerror(err));
	exit(1);
}

static void *load_into(jitperf *jp, const char *name, unsigned char tag)
{
	void *f = emit(loop_code, sizeof(loop_code), tag);
	int err = jitperf_code_load(jp, name, f, sizeof(loop_code) + (tag ? 2 : 0), NULL);

	if (err)
		die(name, err);
	return f;
}

static void *load(const char *name, unsigned char tag)
{
	return load_into(jitperf_default(), name, tag);
}

/* the thread's CPU time: its share of cpu-clock samples does not depend
 * on what else the machine runs */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run(void **fns, int n, double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < n; i++)
			((loop_fn)fns[i])(2000000);
}

struct thread_arg {
	int id, n;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	char name[64];

	for (int i = 0; i < a->n; i++) {
		snprintf(name, sizeof(name), "t%d_fn%d", a->id, i);
		/* the same code registered again and again: registration is what is tested */
		int err = jitperf_code_load(jitperf_default(), name, code_mem, sizeof(loop_code), NULL);
		if (err)
			die(name, err);
	}
	return NULL;
}

/* "fork" and "forkexec": three loads, then fork(); -1 when fork failed */
static pid_t load_three_and_fork(void)
{
	pid_t pid;

	load("before_1", 1);
	load("before_2", 2);
	load("before_3", 3);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		perror("jitload: fork");
	return pid;
}

/* The child ended with status 0. */
static int child_ok(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	void *fns[3];
	const char *mode = argc > 1 ? argv[1] : "";

#if !defined(__x86_64__)
	fprintf(stderr, "jitload: x86-64 only\n");
	return 77;
#endif
	code_cap = 1 << 20;
	code_mem = mmap(NULL, code_cap, PROT_READ | PROT_WRITE | PROT_EXEC,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code_mem == MAP_FAILED) {
		perror("jitload: mmap");
		return 1;
	}
	if ((!strcmp(mode, "hot") || !strcmp(mode, "hotkill")) && argc == 3) {
		fns[0] = load("jl_alpha", 1);
		fns[1] = load("jl_beta", 2);
		fns[2] = load("jl_gamma", 3);
		printf("ready %d\n", (int)getpid());   /* for perf record -p */
		fflush(stdout);
		run(fns, 3, atof(argv[2]));
		if (!strcmp(mode, "hotkill"))
			kill(getpid(), SIGKILL);
	} else if (!strcmp(mode, "twins") && argc == 3) {
		fns[0] = load("twin_left", 0);
		fns[1] = load("twin_right", 0);
		run(fns, 2, atof(argv[2]));
	} else if (!strcmp(mode, "kill") && argc == 3) {
		char name[32];
		int n = atoi(argv[2]);

		for (int i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "killed_%d", i);
			load(name, (unsigned char)i);
		}
		kill(getpid(), SIGKILL);
	} else if (!strcmp(mode, "runkill") && argc == 4) {
		char name[32];
		int n = atoi(argv[2]);

		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (int i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "jl_run_%d", i);
			fns[0] = load(name, (unsigned char)(i + 1));
			run(fns, 1, atof(argv[3]) / 1e3);
		}
		load("jl_last", (unsigned char)(n + 1));
		kill(getpid(), SIGKILL);
	} else if (!strcmp(mode, "fork") && argc == 2) {
		pid_t pid = load_three_and_fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			load("child_1", 4);
			load("child_2", 5);
			printf("child %d\n", (int)getpid());
			return 0;
		}
		if (!child_ok(pid))
			return 1;
		load("parent_1", 6);
		printf("parent %d\n", (int)getpid());
	} else if (!strcmp(mode, "forkexec") && argc == 2) {
		pid_t pid = load_three_and_fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			/* exec runs no atexit handler: what the child wrote must be in its files */
			execlp("true", "true", (char *)NULL);
			_exit(127);
		}
		if (!child_ok(pid))
			return 1;
		printf("child %d\nparent %d\n", (int)pid, (int)getpid());
	} else if (!strcmp(mode, "threads") && argc == 4) {
		int nt = atoi(argv[2]);
		pthread_t th[64];
		struct thread_arg args[64];

		if (nt < 1 || nt > 64)
			return 2;
		for (int i = 0; i < nt; i++) {
			args[i].id = i;
			args[i].n = atoi(argv[3]);
			if (pthread_create(&th[i], NULL, thread_main, &args[i]))
				return 1;
		}
		for (int i = 0; i < nt; i++)
			pthread_join(th[i], NULL);
	} else if (!strcmp(mode, "open") && argc == 3) {
		char name[32];
		int n = atoi(argv[2]), err;
		jitperf *jp;

		if ((err = jitperf_open(&jp, NULL)))
			die("jitperf_open", err);
		for (int i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "open_%d", i);
			load_into(jp, name, (unsigned char)i);
		}
		printf("%d\n", (int)getpid());
		return 0;       /* exit() with jp open */
	} else if (!strcmp(mode, "paced") && argc == 4) {
		char name[32];
		int n = atoi(argv[2]);
		long ms = atol(argv[3]);
		struct timespec pause = { ms / 1000, (ms % 1000) * 1000000L };

		for (int i = 0; i < n; i++) {
			if (i)
				nanosleep(&pause, NULL);
			snprintf(name, sizeof(name), "paced_%d", i);
			load(name, (unsigned char)i);
		}
		printf("%d\n", (int)getpid());
	} else {
		fprintf(stderr, "usage: jitload hot|hotkill|twins SECONDS | kill N | runkill N MS | fork | forkexec | "
			"threads T N | open N | paced N MS\n");
		return 2;
	}
	return 0;
}
