/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A process in namespaces of its own (a container: its own pid and mount
 * namespaces, its own /tmp): the pid it knows itself by, which names its
 * perf map and jitdump, and a path as it sees it, through /proc/PID/root
 * while it lives (doc/attach.md).
 */
#ifndef JITPERF_NSPROC_H
#define JITPERF_NSPROC_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The pid that process pid (as this namespace sees it) knows itself by:
 * the last field of NSpid: in /proc/PID/status, pid itself when the
 * kernel does not say (before 4.1).  0, -ESRCH when it is gone, or
 * another -errno.  Never prints.
 */
int nsproc_pid(pid_t pid, pid_t *nspid);

/*
 * Whether pid sees files otherwise than this process: its root or its
 * mount namespace differs from ours.  1, 0, or -ESRCH when it is gone,
 * -EACCES when it is another user's.  Never prints.
 */
int nsproc_foreign(pid_t pid);

/*
 * The absolute path as process pid sees it, written into buf: path
 * itself when pid sees files as this process does, else
 * /proc/PID/root/PATH.  0, -ESRCH (gone), -EACCES (its root may not be
 * read: another user's process), -EINVAL (path not absolute),
 * -ENAMETOOLONG.  Never prints.
 */
int nsproc_path(pid_t pid, const char *path, char *buf, size_t len);

/*
 * Open path (absolute) as process pid sees it, with flags (O_RDONLY and
 * the like; O_CLOEXEC, O_NOFOLLOW and O_NONBLOCK are added).  Links inside
 * its tree resolve inside its root, never out into this one's (openat2
 * RESOLVE_IN_ROOT; without it, a link anywhere is refused).  The fd or
 * -errno: -ESRCH when pid is gone.  Never prints.
 */
int nsproc_open(pid_t pid, const char *path, int flags);

#endif
