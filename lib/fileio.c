/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whole-record writes.  Records go straight to the descriptor (no user-space
 * buffer a SIGKILL could lose); a write that fails half-way (full disk, bad
 * code pointer) is cut off again so the file always ends on a whole record.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "core.h"

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
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	*size += done;
	return 0;
undo:
	if (done && ftruncate(fd, (off_t)*size) < 0)
		return -EIO;
	return err;
}

/*
 * Create path afresh, mode 0644, and return a descriptor opened with flags.
 * A file of that name may be left by an earlier process that had our pid,
 * or planted by another user in a shared directory such as /tmp.  We never
 * open the name itself: we create a new file under a random name beside it
 * with O_EXCL|O_NOFOLLOW (no symlink or existing file is followed), make it
 * 0644 (perf may run as another user; never world-writable, whatever the
 * umask), and rename() it over the name.  rename() replaces a stale file or
 * symlink atomically without following it -- unlike unlink + O_EXCL there
 * is no moment where the name is free for someone else to take -- and fails
 * (EPERM) in a sticky directory when the stale file is another user's.
 */
int jp_create_fresh(const char *path, int flags, int *fdp)
{
	char tmp[PATH_MAX + 16];
	size_t n = sizeof(tmp);
	int fd = -1, err, i;

	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;

	for (i = 0; i < 16 && fd < 0; i++) {
		unsigned r = (unsigned)(jp_monotonic_ns() * 2654435761u) ^ (unsigned)i;

		snprintf(tmp, n, "%s.%08x", path, r);
		fd = open(tmp, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = -errno;
		jp_debug("cannot create %s: %s", tmp, strerror(errno));
		return err;
	}
	if (fchmod(fd, 0644) < 0 || rename(tmp, path) < 0) {
		err = -errno;
		jp_debug("cannot create %s: %s", path, strerror(errno));
		unlink(tmp);
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}
