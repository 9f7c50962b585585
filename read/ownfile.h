/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Opening a file that a JIT process of this user left, maybe in /tmp,
 * where anyone may have planted something at its name.
 */
#ifndef JITPERF_OWNFILE_H
#define JITPERF_OWNFILE_H

#include <sys/stat.h>

/*
 * path opened with flags (O_CLOEXEC added) if it is a regular file of this
 * user: never through a symbolic link, never blocking on a FIFO; *st is its
 * stat.  The descriptor, or -errno: -EPERM for something else at the name.
 */
int open_own(const char *path, int flags, struct stat *st);

#endif
