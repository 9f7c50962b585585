/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Output files: how they are created (never by opening a name that exists)
 * and whole-record writes.  Records go straight to the descriptor (no
 * user-space buffer a SIGKILL could lose); a write that fails half-way
 * (full disk, bad code pointer) is cut off again so the file always ends
 * on a whole record.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "core.h"

/* Past done bytes of the n buffers at *iov (a short write): how many are left, *iov the first. */
static int iov_advance(struct iovec **iovp, int n, size_t done)
{
	struct iovec *iov = *iovp;

	while (n > 0 && done >= iov->iov_len) {
		done -= iov->iov_len;
		iov++;
		n--;
	}
	if (n > 0) {
		iov->iov_base = (char *)iov->iov_base + done;
		iov->iov_len -= done;
	}
	*iovp = iov;
	return n;
}

int jp_write_whole(int fd, struct iovec *iov, int n, uint64_t *size)
{
	uint64_t done = 0;
	int err;

	while (n > 0) {
		/* write() for one buffer: writev's iovec import is measurable here */
		ssize_t w = n == 1 ? write(fd, iov->iov_base, iov->iov_len) :
				     writev(fd, iov, n > IOV_MAX ? IOV_MAX : n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto undo;
		}
		if (w == 0) {
			err = -EIO;
			goto undo;
		}
		done += (uint64_t)w;
		n = iov_advance(&iov, n, (size_t)w);
	}
	*size += done;
	return 0;
undo:
	if (done && ftruncate(fd, (off_t)*size) < 0)
		return -EIO;
	return err;
}

/*
 * Creating the outputs.  Every file the library writes (perf map, jitdump,
 * trace, statistics) has a name predictable from the pid, and may live in
 * a directory other users can write to: /tmp for the perf map, and any
 * JITPERF_DIR.  Whatever another user planted at such a name -- a symbolic
 * link to one of our files, a hard link to one, a FIFO, a directory -- or a
 * stale file of an earlier process with our pid, must never be opened,
 * followed, truncated or appended to.  So no output name is ever opened:
 *
 *  - the file is created under an unguessable temporary name beside it,
 *    with O_CREAT|O_EXCL|O_NOFOLLOW (nothing that exists is ever opened),
 *    through a descriptor of the directory (the temporary and the final
 *    name are in the same directory even if a path component changes);
 *  - fchmod 0644: perf may run as another user, and no umask can make an
 *    output world-writable;
 *  - renameat() over the final name replaces what is there -- a stale
 *    file, a link, a FIFO -- atomically, without following it.  Unlike
 *    unlink + O_EXCL there is no moment in which the name is free for
 *    someone else to take.  It fails when the name is a directory
 *    (EISDIR), or in a sticky directory (/tmp) when the entry there
 *    belongs to another user (EPERM): a clear error, nothing written.
 *
 * A file that must be readable while it is written (perf map, jitdump,
 * trace: perf or a reader after SIGKILL looks for the final name) is
 * published at once, before any data; one that must appear whole
 * (statistics) is written under its temporary name and published last.
 */

#define NAME_KEEP 237         /* = sizeof(jp_newfile.tmp) - 19, the %.237s below */

/* Unguessable, so nothing can be planted at a temporary name in advance
 * (O_EXCL would refuse it anyway, but a guessed name makes every try fail). */
static uint64_t tmp_random(void)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	r = jp_monotonic_ns() ^ ((uint64_t)getpid() << 32);
	return r * UINT64_C(0x9e3779b97f4a7c15);
}

/* Split path into an O_PATH descriptor of its directory and its last name. */
static int open_parent(const char *path, char *name, size_t namelen)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int fd;

	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	if (strlen(base) >= namelen)
		return -ENAMETOOLONG;
	strcpy(name, base);
	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	/* The directory is the caller's choice: links on the way are followed. */
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Create a new, empty 0644 file that will become path, open with flags
 * (O_WRONLY or O_RDWR, maybe O_APPEND), under a temporary name of its own.
 * jp_newfile_publish() gives it the name, jp_newfile_discard() removes it.
 * 0 or -errno (nothing left behind).
 */
int jp_newfile_create(struct jp_newfile *nf, const char *path, int flags)
{
	int err, i;

	nf->path = path;
	nf->fd = -1;
	nf->tmp[0] = 0;
	/* ".NAME.<16 hex>" must fit in nf->tmp: NAME up to NAME_KEEP bytes */
	nf->dirfd = open_parent(path, nf->name, NAME_KEEP + 1);
	if (nf->dirfd < 0) {
		err = nf->dirfd;
		goto fail;
	}
	for (i = 0; i < 16 && nf->fd < 0; i++) {
		snprintf(nf->tmp, sizeof(nf->tmp), ".%.237s.%016" PRIx64, nf->name, tmp_random());
		nf->fd = openat(nf->dirfd, nf->tmp,
				flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (nf->fd < 0 && errno != EEXIST)
			break;
	}
	if (nf->fd < 0) {
		err = -errno;
		nf->tmp[0] = 0;
		goto fail;
	}
	if (fchmod(nf->fd, 0644) < 0) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	jp_debug("cannot create %s: %s", path, strerror(-err));
	jp_newfile_discard(nf);
	return err;
}

/*
 * renameat() over the final name.  RENAME_NOREPLACE first, only so that
 * JITPERF_DEBUG can say when the name was taken (a stale file, or something
 * planted) and is being replaced; a file system without it (EINVAL) gets
 * the plain rename.
 */
static int rename_over(struct jp_newfile *nf)
{
	if (!renameat2(nf->dirfd, nf->tmp, nf->dirfd, nf->name, RENAME_NOREPLACE))
		return 0;
	if (errno == EEXIST)
		jp_debug("%s exists: replaced, neither followed nor opened", nf->path);
	else if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	return renameat(nf->dirfd, nf->tmp, nf->dirfd, nf->name) < 0 ? -errno : 0;
}

/* Give the new file its final name; the descriptor stays open. */
int jp_newfile_publish(struct jp_newfile *nf)
{
	int err = rename_over(nf);

	if (err) {
		jp_debug("cannot create %s: %s", nf->path, strerror(-err));
		return err;
	}
	nf->tmp[0] = 0;
	close(nf->dirfd);
	nf->dirfd = -1;
	return 0;
}

/* Remove a file not yet published and close what is open; idempotent. */
void jp_newfile_discard(struct jp_newfile *nf)
{
	if (nf->tmp[0] && nf->dirfd >= 0)
		unlinkat(nf->dirfd, nf->tmp, 0);
	nf->tmp[0] = 0;
	if (nf->fd >= 0)
		close(nf->fd);
	if (nf->dirfd >= 0)
		close(nf->dirfd);
	nf->fd = nf->dirfd = -1;
}

/* Create path afresh and publish it at once: see jp_newfile_create(). */
int jp_create_fresh(const char *path, int flags, int *fdp)
{
	struct jp_newfile nf;
	int err;

	err = jp_newfile_create(&nf, path, flags);
	if (!err)
		err = jp_newfile_publish(&nf);
	if (err) {
		jp_newfile_discard(&nf);
		return err;
	}
	*fdp = nf.fd;
	return 0;
}

/*
 * Remove path, an output we published and hold open as fd, when an error
 * makes it worthless -- but only while the name still holds our file: a
 * name is never removed on the word of a path alone.
 */
void jp_remove_own(const char *path, int fd)
{
	struct stat ours, there;

	if (fstat(fd, &ours) == 0 && lstat(path, &there) == 0 &&
	    ours.st_dev == there.st_dev && ours.st_ino == there.st_ino)
		unlink(path);
}

static int mkdir_parts(char *path)
{
	struct stat st;

	/* each component from the top; an existing one must be a directory */
	for (char *p = path + 1; ; p++) {
		char c = *p;

		if (c != '/' && c)
			continue;
		*p = '\0';
		if (mkdir(path, 0777) < 0 && errno != EEXIST)
			return -errno;
		if (stat(path, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		*p = c;
		if (!c)
			return 0;
	}
}

int jp_mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);
	int err;

	if (n == 0)
		return -ENOENT;
	if (n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	err = mkdir_parts(path);
	if (err)
		jp_debug("cannot make %s: %s", dir, strerror(-err));
	else
		jp_debug("%s: made, as JITPERF_DIR or jitperf_options.dir names it", dir);
	return err;
}
