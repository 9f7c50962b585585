/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whole-record writes.  Records go straight to the descriptor (no user-space
 * buffer a SIGKILL could lose); a write that fails half-way (full disk, bad
 * code pointer) is cut off again so the file always ends on a whole record.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <sys/uio.h>

#include "core.h"

int jp_write_whole(int fd, struct iovec *iov, int n, uint64_t *size)
{
	uint64_t done = 0;
	int err;

	while (n > 0) {
		ssize_t w = writev(fd, iov, n > IOV_MAX ? IOV_MAX : n);

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
