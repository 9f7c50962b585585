/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output files written whole: the data goes to a temporary file in the
 * target's directory, which is renamed over the target only when everything
 * was written.  A failed conversion leaves no file (and keeps an older one),
 * nor does one ended by SIGINT, SIGTERM, SIGHUP or SIGPIPE: the temporary
 * files are removed before the process dies of the signal.
 * The path "-" means standard output; devices and FIFOs (/dev/null) are
 * written in place, and through a symbolic link the file it names is
 * replaced (the user's own link; never one another user planted).
 */
#ifndef JITPERF_OUTFILE_H
#define JITPERF_OUTFILE_H

#include <stdio.h>

struct outfile {
	const char *path;     /* target, as given */
	char       *tmp;      /* temporary file, NULL for stdout */
	FILE       *fp;       /* write here (fully buffered) */
	char       *vbuf;
	char       *real;     /* the target with symbolic links resolved */
	int         direct;   /* a device or FIFO: written in place */
	const char *why;      /* set when outfile_open refuses path (strerror would not say) */
};

/*
 * 0 or -errno; on error nothing is left behind.  A symbolic link or FIFO
 * that another user planted on the way to path, in a sticky directory
 * (tools/pathsafe.h), is refused: -EPERM with of->why set.
 */
int outfile_open(struct outfile *of, const char *path);
/* Flush, close and rename into place: 0 or -errno (the temp file is removed). */
int outfile_commit(struct outfile *of);
/* Throw the output away; safe on an outfile that was never opened (zeroed). */
void outfile_abort(struct outfile *of);

#endif /* JITPERF_OUTFILE_H */
