/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finding and running perf (tools/perf.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "perf.h"

/* What execve(2) would say of path: 0, -ENOENT, -EACCES or -EISDIR. */
static int exec_check(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return S_ISREG(st.st_mode) && access(path, X_OK) == 0 ? 0 : -EACCES;
}

int perf_find_exec(const char *name, char **found)
{
	const char *path = getenv("PATH");
	int err = -ENOENT;

	*found = NULL;
	if (strchr(name, '/')) {
		err = exec_check(name);
		if (!err && !(*found = strdup(name)))
			err = -ENOMEM;
		return err;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		int len = (int)(end - path), e;
		char *buf;

		/* an empty PATH element is the current directory, as for execvp */
		if (asprintf(&buf, "%.*s/%s", len ? len : 1, len ? path : ".", name) < 0)
			return -ENOMEM;
		e = exec_check(buf);
		if (!e) {
			*found = buf;
			return 0;
		}
		free(buf);
		/* as execvp: a file found but not executable is what is said, unless
		 * an executable one comes later in PATH */
		if (e == -EACCES)
			err = e;
		path = *end ? end + 1 : end;
	}
	return err;
}

char *perf_find(void)
{
	const char *p = getenv("PERF");
	char *perf;

	perf_find_exec(p && *p ? p : "perf", &perf);
	return perf;
}

/* PROG followed by args, NULL-terminated: the argv of an exec. */
static const char **exec_argv(const char *prog, const char *const args[])
{
	size_t n = 0;
	const char **argv;

	while (args[n])
		n++;
	argv = calloc(n + 2, sizeof(*argv));
	if (!argv)
		return NULL;
	argv[0] = prog;
	memcpy(argv + 1, args, n * sizeof(*argv));
	return argv;
}

/* The child of perf_spawn: its signals and files set, then the program. */
static void __attribute__((noreturn))
start(const char *prog, const char **argv, const struct perf_io *io, int out)
{
	int errfd = io->errfd;

	if (io->sigint)
		sigaction(SIGINT, io->sigint, NULL);
	if (io->sigterm)
		sigaction(SIGTERM, io->sigterm, NULL);
	if (io->sigpipe_dfl)
		signal(SIGPIPE, SIG_DFL);
	if (out >= 0)
		dup2(out, 1);
	if (errfd == -1)
		errfd = open("/dev/null", O_WRONLY);
	if (errfd >= 0)
		dup2(errfd, 2);
	execvp(prog, (char *const *)argv);
	cmd_err("%s: %s", prog, strerror(errno));
	_exit(127);
}

int perf_spawn(const char *prog, const char *const args[], const struct perf_io *io,
	       pid_t *pid)
{
	const char **argv = exec_argv(prog, args);
	int pfd[2] = { -1, -1 }, err;

	if (!argv)
		return -ENOMEM;
	if (io->out && pipe2(pfd, O_CLOEXEC) < 0) {
		err = -errno;
		free(argv);
		return err;
	}
	*pid = fork();
	if (*pid < 0) {
		err = -errno;
		if (io->out) {
			close(pfd[0]);
			close(pfd[1]);
		}
		free(argv);
		return err;
	}
	if (*pid == 0)
		start(prog, argv, io, pfd[1]);
	free(argv);
	if (io->out) {
		close(pfd[1]);
		*io->out = pfd[0];
	}
	return 0;
}

int perf_exec(const char *perf, const char *const args[])
{
	const char **argv = exec_argv(perf, args);
	int err;

	if (!argv)
		return -ENOMEM;
	execvp(perf, (char *const *)argv);
	err = -errno;
	free(argv);
	return err;
}

int perf_running(pid_t pid)
{
	siginfo_t si = { 0 };

	/* WNOWAIT: an ended child stays to be reaped by perf_wait */
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0;
}

int perf_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 256 + WTERMSIG(st);
}

/*
 * perf's message on a bad event: "event syntax error: 'EV'" with the
 * reason perf points at on the next line ("\___ parser error"), joined.
 */
static int syntax_line(char *text, char *why, size_t len)
{
	char *line = strstr(text, "event syntax error: "), *end, *next;

	if (!line)
		return 0;
	end = strchrnul(line, '\n');
	next = *end ? end + 1 : end;
	next += strspn(next, " \t");
	if (!strncmp(next, "\\___ ", 5)) {
		next += 5;
		snprintf(why, len, "%.*s: %.*s", (int)(end - line), line,
			 (int)(strchrnul(next, '\n') - next), next);
	} else {
		snprintf(why, len, "%.*s", (int)(end - line), line);
	}
	return 1;
}

int perf_event_error(const char *perf, const char *event, char *why, size_t len)
{
	const char *const args[] = { "stat", "-x,", "-o", "/dev/null", "-e", event,
				     "--", "true", NULL };
	char text[4096], buf[256];
	ssize_t n, got = 0;
	pid_t pid;
	int out, errfd = memfd_create("perf-stat-err", MFD_CLOEXEC), bad = 0;

	if (errfd < 0)
		return 0;
	if (perf_spawn(perf, args, &(struct perf_io){ .out = &out, .errfd = errfd }, &pid)) {
		close(errfd);
		return 0;
	}
	while ((n = read(out, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
	close(out);
	if (perf_wait(pid) != 0 && lseek(errfd, 0, SEEK_SET) == 0) {
		while (got < (ssize_t)sizeof(text) - 1 &&
		       ((n = read(errfd, text + got, sizeof(text) - 1 - (size_t)got)) > 0 ||
			(n < 0 && errno == EINTR)))
			got += n > 0 ? n : 0;
		text[got] = '\0';
		bad = syntax_line(text, why, len);
	}
	close(errfd);
	return bad;
}
