/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * standby: the two ends of JITPERF=standby for tests/lib/standby.test.
 *
 *   standby run       register sb_hot (with two source lines), sb_cold and
 *                     sb_gone, unload sb_gone, fork; the child registers
 *                     sb_child.  Prints "parent PID child PID", then each
 *                     process runs its hot function until killed (the
 *                     parent sb_hot, the child sb_child).  SIGUSR1 is the
 *                     program's own: each one received is counted, and
 *                     the count printed at SIGTERM ("usr1 N").
 *   standby many N    register N functions sb_0, sb_1, ... (every third with a
 *                     source line), print "ready", and sleep until killed
 *   standby knock PID [DIR]
 *                     connect to @jitperf-standby-PID as a recorder does,
 *                     send "attach [DIR]" and print the reply; exit 3 when
 *                     nothing listens there.
 *
 * Exit 77 on other architectures.
 */
#include "config.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "jitperf.h"

typedef unsigned (*loop_fn)(unsigned);

/* mov $id,%ecx; mov %edi,%eax; 1: dec %eax; jnz 1b; ret */
static const unsigned char loop_code[] = { 0xb9, 0, 0, 0, 0, 0x89, 0xf8, 0xff, 0xc8, 0x75,
					   0xfc, 0xc3 };

static unsigned char *mem;
static volatile sig_atomic_t usr1, term;

static loop_fn load(jitperf *jp, const char *name, unsigned id, uint64_t *index)
{
	unsigned char *code = mem + id * 64;
	struct jitperf_line lines[2] = {
		{ (uintptr_t)code, 10, 0, "sb.c" },
		{ (uintptr_t)code + 7, 11, 0, "sb.c" },
	};
	struct jitperf_code c = { .size = sizeof(c), .name = name, .addr = code,
				  .len = sizeof(loop_code) };

	if (id == 0) {          /* sb_hot: with lines */
		c.lines = lines;
		c.nlines = 2;
	}
	if (jitperf_code_load_ex(jp, &c, index))
		fprintf(stderr, "standby: cannot register %s\n", name);
	return (loop_fn)(void *)code;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}

static int run(void)
{
	jitperf *jp = jitperf_default();
	struct sigaction sa = { 0 };
	uint64_t gone;
	loop_fn hot;
	pid_t child;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	for (unsigned i = 0; i < 4; i++) {
		memcpy(mem + i * 64, loop_code, sizeof(loop_code));
		memcpy(mem + i * 64 + 1, &i, 4);
	}
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	hot = load(jp, "sb_hot", 0, NULL);
	load(jp, "sb_cold", 1, NULL);
	load(jp, "sb_gone", 2, &gone);
	jitperf_code_unload(jp, gone);
	fflush(stdout);
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		hot = load(jp, "sb_child", 3, NULL);
	} else {
		printf("parent %d child %d\n", (int)getpid(), (int)child);
		fflush(stdout);
	}
	while (!term)
		hot(100000);
	if (child)
		printf("usr1 %d\n", (int)usr1);
	return 0;
}

static int many(unsigned n)
{
	jitperf *jp = jitperf_default();
	size_t slot = 16;

	mem = mmap(NULL, n * slot, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	for (unsigned i = 0; i < n; i++) {
		unsigned char *code = mem + i * slot;
		struct jitperf_line line = { (uintptr_t)code, i + 1, 0, "many.c" };
		struct jitperf_code c = { .size = sizeof(c), .addr = code, .len = sizeof(loop_code) };
		char name[32];

		memcpy(code, loop_code, sizeof(loop_code));
		memcpy(code + 1, &i, 4);
		snprintf(name, sizeof(name), "sb_%u", i);
		c.name = name;
		if (i % 3 == 0) {
			c.lines = &line;
			c.nlines = 1;
		}
		if (jitperf_code_load_ex(jp, &c, NULL))
			return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int knock(const char *pid, const char *dir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[4096];
	ssize_t r;
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "jitperf-standby-%s", pid);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)))
		return 3;
	n = snprintf(buf, sizeof(buf), "attach%s%s\n", dir ? " " : "", dir ? dir : "");
	/* a refused peer may be answered and closed before it writes: read the answer */
	signal(SIGPIPE, SIG_IGN);
	(void)!write(fd, buf, (size_t)n);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)r, stdout);
	return 0;
}

int main(int argc, char **argv)
{
#ifndef __x86_64__
	return 77;
#endif
	if (argc == 2 && !strcmp(argv[1], "run"))
		return run();
	if (argc == 3 && !strcmp(argv[1], "many"))
		return many((unsigned)atoi(argv[2]));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "knock"))
		return knock(argv[2], argc == 4 ? argv[3] : NULL);
	fprintf(stderr, "usage: standby run | standby many N | standby knock PID [DIR]\n");
	return 2;
}
