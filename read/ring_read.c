/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Putting a killed process's waiting records in their file (read/ring_read.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/ring_format.h"
#include "read/ownfile.h"
#include "read/ring_read.h"

#define RING_MAX ((uint64_t)1 << 30)

/* pread() (out 0) or pwrite() (out 1) all n bytes at off. */
static int full_pio(int fd, void *buf, size_t n, uint64_t off, int out)
{
	while (n) {
		ssize_t r = out ? pwrite(fd, buf, n, (off_t)off) : pread(fd, buf, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		buf = (char *)buf + r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Where the file holds the ring's stream up to *flushed (see lib/ring_format.h). */
static void positions(const struct jp_ring_header *h, uint64_t *flushed, uint64_t *file_at)
{
	if (h->version == 1) {
		/* byte 64 held flushed, which was also its offset in the file */
		*flushed = *file_at = h->which;
	} else {
		*flushed = h->slot[h->which & 1].flushed;
		*file_at = h->slot[h->which & 1].file_at;
	}
}

static int fail(char *err, size_t errlen, int code, const char *path, const char *what)
{
	snprintf(err, errlen, "%s: %s", path, what);
	return code;
}

/* Open path's ring and check its header: the descriptor, or -errno (err says why). */
static int open_ring(const char *path, char *ring, size_t ringlen, struct jp_ring_header *h,
		     struct stat *rst, char *err, size_t errlen)
{
	uint64_t flushed, file_at;
	int rfd, r;

	if (snprintf(ring, ringlen, "%s%s", path, JP_RING_SUFFIX) >= (int)ringlen)
		return fail(err, errlen, -ENAMETOOLONG, path, "name too long");
	rfd = open_own(ring, O_RDONLY, rst);
	if (rfd == -ENOENT)
		return -ENOENT;
	if (rfd < 0)
		return fail(err, errlen, rfd, ring, rfd == -EPERM ? "not a regular file of this user" :
						    strerror(-rfd));
	r = full_pio(rfd, h, sizeof(*h), 0, 0);
	if (r || memcmp(h->magic, JP_RING_MAGIC, sizeof(h->magic)))
		r = fail(err, errlen, -EINVAL, ring, "not a libjitperf ring (bad magic or too short)");
	else if (h->version != JP_RING_VERSION && h->version != 1)
		r = fail(err, errlen, -EINVAL, ring, "ring version not known");
	else if (positions(h, &flushed, &file_at),
		 !h->ring_size || h->ring_size & (h->ring_size - 1) || h->ring_size > RING_MAX ||
		 h->data_offset < sizeof(*h) ||
		 (uint64_t)rst->st_size < h->data_offset + h->ring_size ||
		 (h->committed > flushed && h->committed - flushed > h->ring_size) ||
		 (h->committed < flushed && flushed - h->committed > file_at))
		r = fail(err, errlen, -EINVAL, ring, "ring header out of range");
	if (r) {
		close(rfd);
		return r;
	}
	return rfd;
}

int ring_pending(const char *path, uint64_t *bytes, char *err, size_t errlen)
{
	struct jp_ring_header h;
	struct stat rst;
	char ring[4096];
	int rfd = open_ring(path, ring, sizeof(ring), &h, &rst, err, errlen);
	uint64_t flushed, file_at;

	if (rfd < 0)
		return rfd;
	close(rfd);
	positions(&h, &flushed, &file_at);
	*bytes = h.committed > flushed ? h.committed - flushed : 0;
	return 0;
}

int ring_recover(const char *path, char *err, size_t errlen)
{
	struct jp_ring_header h;
	struct stat rst, st;
	char ring[4096];
	unsigned char *bytes = NULL;
	uint64_t n = 0, flushed, file_at, end;
	int rfd, fd = -1, r;

	rfd = open_ring(path, ring, sizeof(ring), &h, &rst, err, errlen);
	if (rfd < 0)
		return rfd;
	if (h.pid && h.pid == (uint64_t)(pid_t)h.pid && (kill((pid_t)h.pid, 0) == 0 || errno == EPERM)) {
		r = -EBUSY;     /* still writing it */
		goto out;
	}
	fd = open_own(path, O_WRONLY, &st);
	if (fd < 0) {
		r = fail(err, errlen, fd, path, fd == -EPERM ? "not a regular file of this user" :
						 strerror(-fd));
		goto out;
	}
	positions(&h, &flushed, &file_at);
	/* the file ends where the ring's bytes go; or, after a rollback cut
	 * short, where the records it undid began */
	end = h.committed < flushed ? file_at - (flushed - h.committed) : file_at;
	if ((uint64_t)st.st_size < end) {
		r = fail(err, errlen, -EINVAL, path, "shorter than its ring says it is written");
		goto out;
	}
	if (h.committed > flushed) {
		uint64_t at = flushed & (h.ring_size - 1), first;

		n = h.committed - flushed;
		first = at + n > h.ring_size ? h.ring_size - at : n;
		bytes = malloc((size_t)n);
		if (!bytes) {
			r = fail(err, errlen, -ENOMEM, ring, "out of memory");
			goto out;
		}
		r = full_pio(rfd, bytes, (size_t)first, h.data_offset + at, 0);
		if (!r && first < n)
			r = full_pio(rfd, bytes + first, (size_t)(n - first), h.data_offset, 0);
		if (!r)
			r = full_pio(fd, bytes, (size_t)n, file_at, 1);
		if (r) {
			r = fail(err, errlen, r, path, strerror(-r));
			goto out;
		}
	}
	if (ftruncate(fd, (off_t)(end + n)) < 0) {
		r = fail(err, errlen, -errno, path, strerror(errno));
		goto out;
	}
	/* the ring is spent: removed if the name still holds it */
	if (lstat(ring, &st) == 0 && st.st_dev == rst.st_dev && st.st_ino == rst.st_ino)
		unlink(ring);
	r = (int)(n > INT32_MAX ? INT32_MAX : n);
out:
	free(bytes);
	if (fd >= 0)
		close(fd);
	close(rfd);
	return r;
}
