/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the readers of read/ share, and the command with them: reading a
 * file whole, growing an array, opening a file a JIT process of this user
 * left.
 */
#ifndef JITPERF_READ_UTIL_H
#define JITPERF_READ_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* what rd_open_regular returns for a FIFO, socket or device: rd_strerror says so */
#define RD_ENOTREG ENODEV

/* Largest file rd_slurp_path reads when its caller sets no bound. */
#define RD_MAX_FILE ((uint64_t)1 << 30)

/*
 * Everything fd gives until its end, after the headlen bytes of head (a
 * stream's first bytes, already read; NULL, 0 for none), into a malloc'ed
 * *data with a NUL after its *size bytes.  A regular file is read in one
 * allocation of its size.  max: -EFBIG beyond that many bytes (0: no
 * bound).  fd stays open.  0, or -errno (-EISDIR for a directory).
 */
int rd_slurp(int fd, const void *head, size_t headlen, size_t max, unsigned char **data,
	     size_t *size);

/*
 * The whole file at path, as rd_slurp reads it, opened by rd_open_regular
 * (max 0: RD_MAX_FILE); 0 or -errno.
 */
int rd_slurp_path(const char *path, size_t max, unsigned char **data, size_t *size);

/*
 * Room for need elements of elem bytes in the array *a of *cap elements:
 * the capacity doubles from 64 until it holds need; the new elements are
 * zeroed.  0, or -ENOMEM with *a and *cap as they were.
 */
int rd_grow(void **a, size_t *cap, size_t need, size_t elem);

/*
 * path opened with flags (O_CLOEXEC added) if it is a regular file of this
 * user: never through a symbolic link, never blocking on a FIFO; *st is its
 * stat.  The descriptor, or -errno: -EPERM for something else at the name.
 */
int rd_open_own(const char *path, int flags, struct stat *st);

/*
 * path opened for reading if it is a regular file of at most max bytes (0:
 * any size), without blocking: a FIFO, socket or device at a name a
 * recording gives is never read.  *st (may be NULL) is its stat.  The
 * descriptor, or -errno: -RD_ENOTREG for something other than a regular
 * file, -EFBIG for a larger one.
 */
int rd_open_regular(const char *path, uint64_t max, struct stat *st);

/* strerror(-err), with "not a regular file" for -RD_ENOTREG */
const char *rd_strerror(int err);

#endif
