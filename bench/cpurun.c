/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/cpurun: run a command and append to FILE its wall time and the CPU
 * time of all its threads and of the processes it waited for (user +
 * system, from wait4's rusage), in ns:
 *
 *   cpurun FILE COMMAND [ARG...]    appends "WALL_NS CPU_NS\n"
 *
 * The command's output goes where cpurun's goes; its exit status is
 * cpurun's (1 if it could not run).  The benchmark scripts use it so that
 * what a tool leaves to other threads or processes (a trace filler, a
 * recorder) counts.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double tv_ns(struct timeval tv)
{
	return tv.tv_sec * 1e9 + tv.tv_usec * 1e3;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: cpurun FILE COMMAND [ARG...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("cpurun: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("cpurun: wait4");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out = fopen(argv[1], "a");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "%.0f %.0f\n", (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec),
		tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime));
	fclose(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
