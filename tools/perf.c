/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finding and running perf (tools/perf.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf.h"

char *find_exec(const char *name)
{
	const char *path = getenv("PATH");
	char *buf;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? strdup(name) : NULL;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		int len = (int)(end - path);
		struct stat st;

		/* an empty PATH element is the current directory, as for execvp */
		if (asprintf(&buf, "%.*s/%s", len ? len : 1, len ? path : ".", name) < 0)
			return NULL;
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return buf;
		free(buf);
		path = *end ? end + 1 : end;
	}
	return NULL;
}

char *perf_find(void)
{
	const char *p = getenv("PERF");

	return find_exec(p && *p ? p : "perf");
}

int perf_spawn(const char *perf, const char *const args[], int *out, int errfd, pid_t *pid)
{
	size_t n = 0;
	const char **argv;
	int pfd[2], err;

	while (args[n])
		n++;
	argv = calloc(n + 2, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	argv[0] = perf;
	memcpy(argv + 1, args, n * sizeof(*argv));
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		err = -errno;
		free(argv);
		return err;
	}
	*pid = fork();
	if (*pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		free(argv);
		return err;
	}
	if (*pid == 0) {
		if (errfd < 0)
			errfd = open("/dev/null", O_WRONLY);  /* perf's warnings are not ours */
		dup2(pfd[1], 1);
		if (errfd >= 0)
			dup2(errfd, 2);
		execv(perf, (char *const *)argv);
		_exit(127);
	}
	free(argv);
	close(pfd[1]);
	*out = pfd[0];
	return 0;
}

int perf_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 256 + WTERMSIG(st);
}
