/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A set of files that appear in a directory all together or not at all
 * (jitperf dump --elf).  They are written into a private staging
 * directory inside the target (the same file system, so a rename moves
 * them) and moved into the target only when every one was written.  A
 * failure before or during the move leaves the target as it was: no new
 * file, and whatever held one of the names (a file, a link, a FIFO) kept
 * in place, never followed or opened.  The target may be made by
 * stagedir_open; it is removed again if nothing was committed.  A signal
 * that ends the command (tools/sigcleanup.h) removes what is staged as
 * stagedir_close would, before the process dies of it.
 */
#ifndef JITPERF_STAGEDIR_H
#define JITPERF_STAGEDIR_H

#include <stddef.h>
#include <stdint.h>

struct stagedir_file {
	char     *name;        /* in the target directory */
	uint64_t  tag;         /* the caller's, for messages (a record's offset) */
	int       aside;       /* while committing: the old entry is in old/ */
};

struct stagedir {
	char                 *dir;       /* the target, as given */
	int                   dirfd;
	int                   stagefd;   /* DIR/.jitperf-stage.XXXXXX */
	int                   newfd;     /* its new/: the files written */
	int                   oldfd;     /* its old/: what they replace, until done */
	char                 *stage;     /* the staging directory's name in DIR */
	struct stagedir_file *files;     /* in the order first created */
	size_t                n, cap;
	int                   created;   /* DIR was made by stagedir_open */
	struct stagedir      *next_live; /* the open ones, for a signal's cleanup */
};

/*
 * Make dir if it does not exist (mode 0777 & ~umask) and a staging
 * directory in it.  0 or -errno (-ENOTDIR: dir is something else); on
 * error nothing is left.  dir is followed if a symbolic link: check it
 * with pathsafe_planted() first.
 */
int stagedir_open(struct stagedir *sd, const char *dir);

/*
 * A new file to be committed as name (no '/'): an fd open for reading and
 * writing, or -errno.  Mode 0644 & ~umask: readable by others as a
 * compiler's output is, never writable by them whatever the umask.  Asked
 * again for a name of this set, the file is emptied and written anew (tag
 * replaced).
 */
int stagedir_create(struct stagedir *sd, const char *name, uint64_t tag);

/*
 * Move every file into the directory, replacing what has its name; a
 * directory of that name is not replaced (-EISDIR).  0, or -errno with
 * *failed the file that could not go in, and the directory as before.
 */
int stagedir_commit(struct stagedir *sd, const struct stagedir_file **failed);

/*
 * Remove what is still staged and the staging directory, and the target
 * if stagedir_open made it and nothing was committed; free.  A file that
 * a failed commit could not put back (the directory changed under it)
 * stays in the staging directory rather than be lost.
 */
void stagedir_close(struct stagedir *sd);

#endif /* JITPERF_STAGEDIR_H */
