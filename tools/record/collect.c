/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What record gathers into the record directory (tools/record/collect.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect.h"
#include "read/jitdump_read.h"
#include "read/perfdata.h"
#include "read/perfmap_read.h"
#include "tools/cmds.h"
#include "tools/nsproc.h"
#include "tools/rundir.h"

struct marker {
	uint32_t pid;
	char    *path;
};

struct walk {
	struct collect *c;
	struct marker  *markers;       /* jitdumps perf saw mapped */
	size_t          nmarkers;
	int             err;
};

static struct collect_proc *proc(struct collect *c, uint32_t pid)
{
	struct collect_proc *p;

	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	p = realloc(c->procs, (c->nprocs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	c->procs = p;
	p = &c->procs[c->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "jit-<digits>.dump", the name every jitdump writer gives its file: its pid, else 0 */
static uint32_t dump_pid(const char *name)
{
	unsigned long v;
	char *end;

	if (strncmp(name, "jit-", 4) || name[4] < '0' || name[4] > '9')
		return 0;
	v = strtoul(name + 4, &end, 10);
	return strcmp(end, ".dump") || v > UINT32_MAX ? 0 : (uint32_t)v;
}

static int add_marker(struct walk *w, uint32_t pid, const char *path)
{
	struct marker *m;

	for (size_t i = 0; i < w->nmarkers; i++)
		if (!strcmp(w->markers[i].path, path))
			return 0;
	m = realloc(w->markers, (w->nmarkers + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	w->markers = m;
	m = &m[w->nmarkers];
	m->pid = pid;
	if (!(m->path = strdup(path)))
		return -ENOMEM;
	w->nmarkers++;
	return 0;
}

/*
 * COMM and FORK say which processes the run had and what they are called;
 * MMAP and MMAP2 of a jit-<pid>.dump are the markers that say where each
 * jitdump is.  Records come in time order, so a process keeps the name it
 * ended with: the latest exec (erl execs erlexec, then beam.smp).
 */
static int on_record(struct walk *w, const struct pd_event *ev)
{
	struct collect_proc *p;

	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		w->c->samples++;
		return 0;
	case PERF_RECORD_COMM:
		if (ev->comm.pid != ev->comm.tid)
			return 0;       /* a thread's name, not the process's */
		if (!(p = proc(w->c, ev->comm.pid)))
			return -ENOMEM;
		snprintf(p->comm, sizeof(p->comm), "%s", ev->comm.comm);
		return 0;
	case PERF_RECORD_FORK:
		if (ev->task.pid != ev->task.tid)
			return 0;       /* a new thread */
		if (!(p = proc(w->c, ev->task.pid)))
			return -ENOMEM;
		for (size_t i = 0; i < w->c->nprocs; i++)
			if (w->c->procs[i].pid == ev->task.ppid && !p->comm[0])
				memcpy(p->comm, w->c->procs[i].comm, sizeof(p->comm));
		return 0;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (!dump_pid(base(ev->mmap.filename)))
			return 0;
		if (!proc(w->c, ev->mmap.pid))
			return -ENOMEM;
		return add_marker(w, ev->mmap.pid, ev->mmap.filename);
	default:
		return 0;
	}
}

/* every record of perfdata through on_record; its reader's message said once */
static int walk_perfdata(struct walk *w, const char *perfdata)
{
	struct pd_file *f = NULL;
	struct pd_event ev;
	char err[PATH_MAX + 128];
	int ret = pd_open(&f, perfdata, err, sizeof(err));

	while (!ret && (ret = pd_next(f, &ev, err, sizeof(err))) == 1)
		ret = on_record(w, &ev);
	if (ret && ret != -ENOMEM)
		cmd_err("%s; no jitdump or perf map of the run was collected", err);
	pd_close(f);
	return ret;
}

static int newer(const struct stat *st, struct timespec since)
{
	return st->st_mtim.tv_sec > since.tv_sec ||
	       (st->st_mtim.tv_sec == since.tv_sec && st->st_mtim.tv_nsec >= since.tv_nsec);
}

/*
 * Open a file of the run to copy it: a regular file (never through a
 * symbolic link someone planted in /tmp), of this user or root, written
 * since the run began.  path is as process pid (0: jitperf) sees it: in a
 * container, through /proc/PID/root.  The fd, or -errno; -ESTALE for an
 * older file.
 */
static int open_source(pid_t pid, const char *path, struct timespec since, struct stat *st)
{
	int fd = pid && nsproc_foreign(pid) == 1 ? nsproc_open(pid, path, O_RDONLY)
						 : open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
							      O_NONBLOCK);

	if (fd < 0)
		return fd == -1 ? -errno : fd;
	if (fstat(fd, st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode) || (st->st_uid != geteuid() && st->st_uid != 0)) {
		close(fd);
		return -EPERM;
	}
	if (!newer(st, since)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* src's bytes into a new file dst (never over an existing one); *copied: how many. */
static int copy_fd(int in, const char *dst, off_t *copied)
{
	char buf[1 << 16];
	ssize_t n;
	int out, err = 0;

	*copied = 0;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		for (ssize_t done = 0, w; done < n; done += w) {
			w = write(out, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0) {
				err = -errno;
				break;
			}
		}
		if (err)
			break;
		*copied += n;
	}
	if (close(out) && !err)
		err = -errno;
	if (err)
		unlink(dst);
	return err;
}

/*
 * The source of a copy, removed once the copy is safe: its process (pid)
 * has ended, so nothing writes it any more; it is this user's; the copy
 * holds all of it (the file did not change while it was copied); and the
 * name still names the file that was copied.  1 if removed.
 */
static int remove_copied(const char *src, int fd, const struct stat *st, off_t copied,
			 uint32_t pid)
{
	struct stat now, at;

	if (!pid || st->st_uid != geteuid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;
	if (fstat(fd, &now) || now.st_size != copied || now.st_size != st->st_size ||
	    now.st_mtim.tv_sec != st->st_mtim.tv_sec || now.st_mtim.tv_nsec != st->st_mtim.tv_nsec)
		return 0;
	if (lstat(src, &at) || at.st_dev != st->st_dev || at.st_ino != st->st_ino)
		return 0;
	return unlink(src) == 0;
}

/*
 * src copied into a new file dst.  With pid (its writer), src is removed
 * when that is safe (remove_copied); *removed says whether it was.
 */
static int copy_file(const char *src, const char *dst, struct timespec since, uint32_t pid,
		     int *removed)
{
	struct stat st;
	off_t copied;
	int fd = open_source((pid_t)pid, src, since, &st), err;

	if (removed)
		*removed = 0;
	if (fd < 0)
		return fd;
	err = copy_fd(fd, dst, &copied);
	if (!err && removed)
		*removed = remove_copied(src, fd, &st, copied, pid);
	close(fd);
	return err;
}

/* Whether two paths name one directory. */
static int same_dir(const char *a, const char *b)
{
	struct stat x, y;

	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/*
 * The tier and compile events libjitperf writes beside a jitdump
 * (jit-<pid>.tiers, jitperf-tiers(5)), brought in with it.
 */
static void collect_tiers(struct collect *c, const char *from, const char *dir, uint32_t pid,
			  struct timespec since)
{
	char src[PATH_MAX], dst[PATH_MAX];
	int err, removed;

	snprintf(src, sizeof(src), "%s/jit-%" PRIu32 ".tiers", from, pid);
	snprintf(dst, sizeof(dst), "%s/jit-%" PRIu32 ".tiers", dir, pid);
	err = copy_file(src, dst, since, pid, &removed);
	if (!err)
		c->removed += removed;
	else if (err != -ENOENT && err != -ESTALE)
		cmd_err("%s: not copied into %s: %s", src, dir,
			err == -EEXIST ? "a file of that name is there already" :
			err == -EPERM ? "not a regular file of this user" : strerror(-err));
}

/* A jitdump outside dir, and its images, brought in. */
static int collect_dump(struct collect *c, const struct marker *m, const char *dir,
			struct timespec since)
{
	char dst[PATH_MAX], *from, *slash;
	struct collect_proc *p = proc(c, m->pid);
	int err, removed, own;

	if (!p)
		return -ENOMEM;
	if (!(from = strdup(m->path)))
		return -ENOMEM;
	slash = strrchr(from, '/');
	if (slash)
		*slash = '\0';
	/* a process in a pid namespace of its own names its jitdump by its pid there */
	own = dump_pid(base(m->path)) != m->pid;
	snprintf(dst, sizeof(dst), "%s/jit-%" PRIu32 ".dump", dir, m->pid);
	if (own && !access(dst, F_OK)) {
		p->has_dump = 1;        /* held and saved while it lived (watch.c) */
		free(from);
		return 0;
	}
	if (slash && same_dir(slash == from ? "/" : from, dir)) {
		char here[PATH_MAX];

		/* written there (libjitperf under jitperf record): named as perf.data knows it */
		snprintf(here, sizeof(here), "%s/%s", dir, base(m->path));
		p->has_dump = !own || !rename(here, dst);
		free(from);
		return 0;
	}
	if (!own)
		snprintf(dst, sizeof(dst), "%s/%s", dir, base(m->path));
	err = copy_file(m->path, dst, since, m->pid, &removed);
	if (!err) {
		p->has_dump = 1;
		c->dumps_copied++;
		c->removed += removed;
		collect_tiers(c, slash ? (slash == from ? "/" : from) : ".", dir, m->pid, since);
	} else if (err == -ENOMEM) {
		free(from);
		return err;
	} else if (err != -ESTALE) {
		cmd_err("%s: not copied into %s: %s", m->path, dir,
			err == -EEXIST ? "a jitdump of that name is there already" :
			err == -EPERM ? "not a regular file of this user" : strerror(-err));
	}
	free(from);
	return 0;
}

/* /tmp/perf-<pid>.map of a process of the run, copied into dir. */
static void collect_map(struct collect *c, struct collect_proc *p, const char *dir,
			struct timespec since)
{
	char src[64], dst[PATH_MAX];
	int err, removed;
	pid_t nspid;

	/* in a container: its own /tmp, its own pid (tools/nsproc.h) */
	if (nsproc_pid((pid_t)p->pid, &nspid))
		nspid = (pid_t)p->pid;
	snprintf(src, sizeof(src), "/tmp/perf-%d.map", (int)nspid);
	snprintf(dst, sizeof(dst), "%s/perf-%" PRIu32 ".map", dir, p->pid);
	if (!access(dst, F_OK)) {
		/* held and saved while it lived (watch.c) */
		p->has_map = 1;
		return;
	}
	err = copy_file(src, dst, since, p->pid, &removed);
	if (!err) {
		p->has_map = 1;
		c->maps_copied++;
		c->removed += removed;
	} else if (err != -ENOENT && err != -ESTALE) {
		cmd_err("%s: not copied into %s: %s", src, dir,
			err == -EPERM ? "not a regular file of this user" : strerror(-err));
	}
}

/* What the copies in dir hold: functions per process. */
static int count(struct collect_proc *p, const char *dir)
{
	char path[PATH_MAX], err[512];
	struct pm_map *m;
	struct rundir one = { 0 };
	char *dumps[1];

	if (p->has_map) {
		snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map", dir, p->pid);
		if (pm_read(path, &m, err, sizeof(err)) == -ENOMEM)
			return -ENOMEM;
		p->syms = m ? m->nsyms : 0;
		pm_free(m);
	}
	if (p->has_dump) {
		snprintf(path, sizeof(path), "%s/jit-%" PRIu32 ".dump", dir, p->pid);
		dumps[0] = path;
		one.dumps = dumps;
		one.ndumps = 1;
		p->loads = rundir_code_loads(&one);
	}
	return 0;
}

/* Each process's perf map into dir, what dir holds of it counted. */
static int finish_procs(struct collect *c, const char *dir, struct timespec since)
{
	char path[PATH_MAX];
	int err = 0;

	for (size_t i = 0; !err && i < c->nprocs; i++) {
		struct collect_proc *p = &c->procs[i];

		collect_map(c, p, dir, since);
		/* a jitdump in dir that perf saw no marker of */
		snprintf(path, sizeof(path), "%s/jit-%" PRIu32 ".dump", dir, p->pid);
		if (!p->has_dump && !access(path, F_OK))
			p->has_dump = 1;
		err = count(p, dir);
	}
	return err;
}

int collect_run(const char *dir, const char *perfdata, struct timespec since,
		struct collect *c)
{
	struct walk w = { .c = c };
	int err;

	memset(c, 0, sizeof(*c));
	err = walk_perfdata(&w, perfdata);
	c->read = !err;
	for (size_t i = 0; !err && i < w.nmarkers; i++)
		err = collect_dump(c, &w.markers[i], dir, since);
	err = err ?: finish_procs(c, dir, since);
	for (size_t i = 0; i < w.nmarkers; i++)
		free(w.markers[i].path);
	free(w.markers);
	return err;
}

/* the PID of DIR/PREFIX<PID>SUFFIX, as rundir_scan lists them */
static uint32_t pid_of(const char *path, const char *prefix)
{
	const char *b = base(path);

	return (uint32_t)strtoul(b + strlen(prefix), NULL, 10);
}

int collect_dir(const char *dir, struct timespec since, struct collect *c)
{
	struct rundir rd;
	int err = 0;

	memset(c, 0, sizeof(*c));
	if (rundir_scan(dir, &rd))
		return 0;
	for (size_t i = 0; !err && i < rd.ndumps; i++)
		err = proc(c, pid_of(rd.dumps[i], "jit-")) ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < rd.nstats; i++)
		err = proc(c, pid_of(rd.stats[i], "jitperf-")) ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < rd.ntraces; i++)
		err = proc(c, pid_of(rd.traces[i], "jitperf-")) ? 0 : -ENOMEM;
	rundir_free(&rd);
	return err ?: finish_procs(c, dir, since);
}

void collect_free(struct collect *c)
{
	free(c->procs);
	memset(c, 0, sizeof(*c));
}
