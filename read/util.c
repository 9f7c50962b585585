/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the readers share (read/util.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/util.h"

int rd_slurp(int fd, const void *head, size_t headlen, size_t max, unsigned char **data,
	     size_t *size)
{
	size_t cap = 65536, n = headlen;
	unsigned char *b, *nb;
	struct stat st;

	if (!max)
		max = SIZE_MAX - 1;
	if (fstat(fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uint64_t)st.st_size > max)
			return -EFBIG;
		cap = (size_t)st.st_size + 2;   /* its NUL, and a read that sees its end */
	}
	if (headlen > max)
		return -EFBIG;
	while (cap <= headlen)
		cap *= 2;
	if (!(b = malloc(cap)))
		return -ENOMEM;
	if (headlen)
		memcpy(b, head, headlen);
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			if (n >= max) {
				free(b);
				return -EFBIG;
			}
			if (!(nb = realloc(b, cap * 2))) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			free(b);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(b);
		return -EFBIG;
	}
	b[n] = '\0';
	*data = b;
	*size = n;
	return 0;
}

int rd_open_regular(const char *path, uint64_t max, struct stat *st)
{
	struct stat own;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err;

	if (!st)
		st = &own;
	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return S_ISDIR(st->st_mode) ? -EISDIR : -RD_ENOTREG;
	}
	if (max && (uint64_t)st->st_size > max) {
		close(fd);
		return -EFBIG;
	}
	return fd;
}

const char *rd_strerror(int err)
{
	return err == -RD_ENOTREG ? "not a regular file" : strerror(-err);
}

int rd_slurp_path(const char *path, size_t max, unsigned char **data, size_t *size)
{
	int fd, err;

	if (!max)
		max = RD_MAX_FILE;
	fd = rd_open_regular(path, max, NULL);
	if (fd < 0)
		return fd;
	err = rd_slurp(fd, NULL, 0, max, data, size);
	close(fd);
	return err;
}

int rd_grow(void **a, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / elem || !(p = realloc(*a, n * elem)))
		return -ENOMEM;
	memset((char *)p + *cap * elem, 0, (n - *cap) * elem);
	*a = p;
	*cap = n;
	return 0;
}

int rd_open_own(const char *path, int flags, struct stat *st)
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
