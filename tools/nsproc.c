/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process in namespaces of its own (tools/nsproc.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2_H 1
#endif
#endif

#include "nsproc.h"

/* /proc/PID/... gone: the process is */
static int gone(int err)
{
	return err == ENOENT || err == ESRCH ? -ESRCH : -err;
}

int nsproc_pid(pid_t pid, pid_t *nspid)
{
	char path[64], line[256];
	FILE *fp;
	int found = 0;

	*nspid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return gone(errno);
	while (!found && fgets(line, sizeof(line), fp)) {
		char *s = line + 6, *end;
		long v = 0;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* "NSpid:\t4711\t1": one pid per level, the innermost last */
		for (;;) {
			long n;

			errno = 0;
			n = strtol(s, &end, 10);
			if (end == s || errno)
				break;
			v = n;
			s = end;
		}
		found = v > 0 && v <= INT_MAX;
		if (found)
			*nspid = (pid_t)v;
	}
	fclose(fp);
	return 0;
}

/* st of /proc/PID/NAME (following it) */
static int proc_stat(pid_t pid, const char *name, struct stat *st)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	return stat(path, st) ? gone(errno) : 0;
}

int nsproc_foreign(pid_t pid)
{
	static const char *const what[] = { "root", "ns/mnt" };

	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		struct stat theirs, ours;
		int err = proc_stat(pid, what[i], &theirs);

		if (err)
			return err;
		if (proc_stat(0, what[i], &ours))
			continue;       /* no such link here (very old kernel): no difference seen */
		if (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino)
			return 1;
	}
	return 0;
}

int nsproc_path(pid_t pid, const char *path, char *buf, size_t len)
{
	int n, foreign;

	if (path[0] != '/')
		return -EINVAL;
	foreign = nsproc_foreign(pid);
	if (foreign < 0)
		return foreign;
	n = foreign ? snprintf(buf, len, "/proc/%d/root%s", (int)pid, path)
		    : snprintf(buf, len, "%s", path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Without openat2: component by component, a symbolic link anywhere refused. */
static int open_walk(int root, const char *path, int flags)
{
	char *copy = strdup(path), *save, *comp, *next;
	int dir = dup(root), err = 0;

	if (!copy || dir < 0) {
		err = !copy ? -ENOMEM : -errno;
		goto out;
	}
	for (comp = strtok_r(copy, "/", &save); comp; comp = next) {
		int fd;

		next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, "..")) {
			err = -EXDEV;   /* never above its root */
			break;
		}
		fd = next ? openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			  : openat(dir, comp, flags);
		if (fd < 0) {
			err = errno == ENOTDIR ? -ELOOP : -errno;
			break;
		}
		close(dir);
		dir = fd;
		if (!next) {
			free(copy);
			return dir;
		}
	}
	err = err ? err : -EISDIR;
out:
	free(copy);
	if (dir >= 0)
		close(dir);
	return err;
}

int nsproc_open(pid_t pid, const char *path, int flags)
{
	char rootpath[64];
	int root, fd, err;

	if (path[0] != '/')
		return -EINVAL;
	flags |= O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
	snprintf(rootpath, sizeof(rootpath), "/proc/%d/root", (int)pid);
	root = open(rootpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return gone(errno);
#if defined(HAVE_OPENAT2_H) && defined(SYS_openat2)
	{
		struct open_how how = { .flags = (unsigned long long)flags,
					.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };

		fd = (int)syscall(SYS_openat2, root, path + 1, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) {
			err = fd < 0 ? -errno : 0;
			close(root);
			return fd >= 0 ? fd : err;
		}
	}
#endif
	/* no openat2 here (or a seccomp profile that forbids it) */
	fd = open_walk(root, path, flags);
	close(root);
	return fd;
}
