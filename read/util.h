/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the readers of read/ share, and the command with them: reading a
 * file whole, growing an array, opening a file a JIT process of this user
 * left.
 */
#ifndef JITPERF_READ_UTIL_H
#define JITPERF_READ_UTIL_H

#include <stddef.h>
#include <sys/stat.h>

/*
 * Everything fd gives until its end, after the headlen bytes of head (a
 * stream's first bytes, already read; NULL, 0 for none), into a malloc'ed
 * *data with a NUL after its *size bytes.  A regular file is read in one
 * allocation of its size.  max: -EFBIG beyond that many bytes (0: no
 * bound).  fd stays open.  0, or -errno (-EISDIR for a directory).
 */
int rd_slurp(int fd, const void *head, size_t headlen, size_t max, unsigned char **data,
	     size_t *size);

/* The whole file at path, as rd_slurp reads it; 0 or -errno. */
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

#endif
