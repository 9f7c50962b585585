/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A container's JIT files, held while its processes live
 * (tools/record/collect.h).  A process in a mount namespace of its own
 * writes /tmp/perf-NSPID.map and its jitdump into its own /tmp, a tmpfs
 * that goes with the container; a JIT may also remove its files as it
 * exits.  An open descriptor keeps a file's bytes whatever becomes of its
 * name or its file system, so the files are opened while the process
 * lives (through /proc/PID/root, tools/nsproc.h) and copied after the run.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect.h"
#include "tools/cmds.h"
#include "tools/nsproc.h"

/* how deep a tree of processes is followed */
#define MAX_DEPTH 32

/* pid, added to those watched */
static struct collect_held *add(struct collect_watch *w, pid_t pid)
{
	struct collect_held *h = realloc(w->procs, (w->nprocs + 1) * sizeof(*h));

	if (!h)
		return NULL;
	w->procs = h;
	h = &h[w->nprocs++];
	memset(h, 0, sizeof(*h));
	h->pid = h->nspid = pid;
	h->map_fd = h->dump_fd = -1;
	return h;
}

/* a regular file of ours written since the run began: kept open, else closed */
static int keep(int fd, struct timespec since)
{
	struct stat st;

	if (fd < 0)
		return -1;
	/* the container's own files: of this user (its root mapped to us) or root */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != 0) || st.st_mtim.tv_sec < since.tv_sec ||
	    (st.st_mtim.tv_sec == since.tv_sec && st.st_mtim.tv_nsec < since.tv_nsec)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The jitdump h's process maps (the marker every writer keeps), as it sees its path. */
static int find_dump(struct collect_held *h, struct timespec since)
{
	char path[64], line[PATH_MAX + 256], want[32];
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)h->pid);
	snprintf(want, sizeof(want), "/jit-%d.dump", (int)h->nspid);
	if (!(fp = fopen(path, "re")))
		return 0;
	while (h->dump_fd < 0 && fgets(line, sizeof(line), fp)) {
		char *name = strchr(line, '/'), *nl = strchr(line, '\n');
		size_t n;

		if (nl)
			*nl = '\0';
		if (!name || (n = strlen(name)) < strlen(want) ||
		    strcmp(name + n - strlen(want), want))
			continue;
		h->dump_fd = keep(nsproc_open(h->pid, name, O_RDONLY), since);
		if (h->dump_fd >= 0 && !(h->dump_path = strdup(name))) {
			close(h->dump_fd);
			h->dump_fd = -1;
			fclose(fp);
			return -ENOMEM;
		}
	}
	fclose(fp);
	return 0;
}

/*
 * One process: one in a container gets what it wrote so far.  Only those
 * are kept in w: the others (a build's thousands of processes) cost a
 * look at their namespace per tick, and no memory.
 */
static int look(struct collect_watch *w, pid_t pid)
{
	struct collect_held *h = NULL;
	char path[64];

	for (size_t i = 0; i < w->nprocs && !h; i++)
		if (w->procs[i].pid == pid)
			h = &w->procs[i];
	if (!h && nsproc_foreign(pid) != 1)
		return 0;
	if (!h && !(h = add(w, pid)))
		return -ENOMEM;
	if (!h->foreign) {
		pid_t ns;

		h->foreign = 1;
		if (!nsproc_pid(pid, &ns))
			h->nspid = ns;
	}
	if (h->map_fd < 0) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)h->nspid);
		h->map_fd = keep(nsproc_open(pid, path, O_RDONLY), w->since);
	}
	return h->dump_fd < 0 ? find_dump(h, w->since) : 0;
}

/* pid, then the children of each of its threads, and theirs */
static int visit(struct collect_watch *w, pid_t pid, int depth)
{
	char path[320];
	struct dirent *de;
	DIR *d;
	int err = look(w, pid);

	if (err || depth >= MAX_DEPTH)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while (!err && (de = readdir(d))) {
		FILE *fp;
		int child;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)pid, de->d_name);
		if (!(fp = fopen(path, "re")))
			continue;
		while (!err && fscanf(fp, "%d", &child) == 1)
			err = visit(w, (pid_t)child, depth + 1);
		fclose(fp);
	}
	closedir(d);
	return err;
}

int collect_watch(struct collect_watch *w, pid_t pid)
{
	return visit(w, pid, 0);
}

/* the bytes of fd into a new file dst (never over one) */
static int copy_held(int fd, const char *dst)
{
	char buf[1 << 16];
	off_t off = 0;
	ssize_t n;
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644), err = 0;

	if (out < 0)
		return -errno;
	while (!err && (n = pread(fd, buf, sizeof(buf), off)) != 0) {
		if (n < 0) {
			err = errno == EINTR ? 0 : -errno;
			continue;
		}
		for (ssize_t done = 0, k; !err && done < n; done += k)
			if ((k = write(out, buf + done, (size_t)(n - done))) < 0)
				err = errno == EINTR ? (k = 0) : -errno;
		off += n;
	}
	if (close(out) && !err)
		err = -errno;
	if (err)
		unlink(dst);
	return err;
}

/* fd is the file at path */
static int same_file(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void save(int fd, const char *what, const char *dir, pid_t pid, const char *seen)
{
	char dst[PATH_MAX], there[PATH_MAX];
	const char *base = seen ? strrchr(seen, '/') : NULL;
	int err;

	snprintf(dst, sizeof(dst), "%s/%s-%d.%s", dir, what, (int)pid,
		 strcmp(what, "jit") ? "map" : "dump");
	if (!access(dst, F_OK))
		return;         /* its own already (a process that sees dir as jitperf does) */
	/* written into dir under the pid it knows itself by: named as perf.data knows it */
	if (base && snprintf(there, sizeof(there), "%s%s", dir, base) < (int)sizeof(there) &&
	    same_file(fd, there)) {
		if (rename(there, dst))
			cmd_err("%s: not renamed %s: %s", there, dst, strerror(errno));
		return;
	}
	err = copy_held(fd, dst);
	if (err)
		cmd_err("%s of process %d (%s in its container): not copied into %s: %s",
			strcmp(what, "jit") ? "perf map" : "jitdump", (int)pid,
			seen ? seen : "/tmp", dir, strerror(-err));
}

void collect_watch_save(struct collect_watch *w, const char *dir)
{
	for (size_t i = 0; i < w->nprocs; i++) {
		struct collect_held *h = &w->procs[i];

		if (h->dump_fd >= 0)
			save(h->dump_fd, "jit", dir, h->pid, h->dump_path);
		if (h->map_fd >= 0)
			save(h->map_fd, "perf", dir, h->pid, NULL);
	}
}

void collect_watch_free(struct collect_watch *w)
{
	for (size_t i = 0; i < w->nprocs; i++) {
		if (w->procs[i].map_fd >= 0)
			close(w->procs[i].map_fd);
		if (w->procs[i].dump_fd >= 0)
			close(w->procs[i].dump_fd);
		free(w->procs[i].dump_path);
	}
	free(w->procs);
	memset(w, 0, sizeof(*w));
}
