/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * <file>.ring, which libjitperf leaves beside a perf map or jitdump when
 * its process is killed: the records it had not yet written to the file
 * (lib/ring_format.h).  ring_recover puts them where they belong.
 */
#ifndef JITPERF_RING_READ_H
#define JITPERF_RING_READ_H

#include <stddef.h>
#include <stdint.h>

/*
 * Put the records that path's ring holds into path, cut path to its
 * records (the zeros of its grown tail go too) and remove the ring.  Only
 * for a process that is gone (a running one still writes both), and only
 * regular files of this user, never through a link.  Returns the bytes
 * put in (>= 0); -ENOENT: no ring; -EBUSY: its process runs; another
 * -errno with a one-line message in err (naming the file) when the ring
 * or the file is not what it should be: both are then left as they are.
 */
int ring_recover(const char *path, char *err, size_t errlen);

/* How many of path's bytes its ring holds: 0, -ENOENT (no ring) or -errno (err says why). */
int ring_pending(const char *path, uint64_t *bytes, char *err, size_t errlen);

#endif
