/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Opening a file of this user, never through a link (read/ownfile.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "read/ownfile.h"

int open_own(const char *path, int flags, struct stat *st)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode) || st->st_uid != getuid()) {
		close(fd);
		return -EPERM;
	}
	return fd;
}
