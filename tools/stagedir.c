/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Files that appear in a directory together or not at all (tools/stagedir.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stagedir.h"
#include "tools/sigcleanup.h"

/* The open staging directories, removed by a signal that ends the command. */
static struct stagedir *live;

/* A private subdirectory of the staging directory: its fd, or -errno. */
static int make_sub(int stagefd, const char *name)
{
	int fd;

	if (mkdirat(stagefd, name, 0700) < 0)
		return -errno;
	fd = openat(stagefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int open_staged(struct stagedir *sd, const char *dir)
{
	char *path = NULL;
	int err;

	sd->dir = strdup(dir);
	if (!sd->dir)
		return -ENOMEM;
	if (mkdir(dir, 0777) == 0)
		sd->created = 1;
	else if (errno != EEXIST) {
		err = -errno;
		goto fail;
	}
	sd->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sd->dirfd < 0) {
		err = -errno;
		goto fail;
	}
	/*
	 * In the target, not next to it: the same file system whatever
	 * links lead there, so the commit is a rename; mkdtemp's 0700 keeps
	 * others out of what is staged.
	 */
	if (asprintf(&path, "%s/.jitperf-stage.XXXXXX", dir) < 0) {
		path = NULL;
		err = -ENOMEM;
		goto fail;
	}
	if (!mkdtemp(path)) {
		err = -errno;
		goto fail;
	}
	sd->stage = strdup(path + strlen(dir) + 1);
	if (!sd->stage) {
		rmdir(path);
		err = -ENOMEM;
		goto fail;
	}
	sd->stagefd = openat(sd->dirfd, sd->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sd->stagefd < 0) {
		err = -errno;
		goto fail;
	}
	sd->newfd = make_sub(sd->stagefd, "new");
	if (sd->newfd < 0) {
		err = sd->newfd;
		goto fail;
	}
	sd->oldfd = make_sub(sd->stagefd, "old");
	if (sd->oldfd < 0) {
		err = sd->oldfd;
		goto fail;
	}
	free(path);
	return 0;
fail:
	free(path);
	return err;
}

/* Remove what is staged: async-signal-safe, the signal handler does it too. */
static void unstage(const struct stagedir *sd)
{
	int kept = 0;

	for (size_t i = 0; i < sd->n; i++) {
		if (sd->newfd >= 0)
			unlinkat(sd->newfd, sd->files[i].name, 0);
		kept |= sd->files[i].aside;
	}
	if (sd->stagefd >= 0) {
		unlinkat(sd->stagefd, "new", AT_REMOVEDIR);
		if (!kept)
			unlinkat(sd->stagefd, "old", AT_REMOVEDIR);
	}
	if (sd->stage && sd->dirfd >= 0 && !kept)
		unlinkat(sd->dirfd, sd->stage, AT_REMOVEDIR);
	/* made here and left empty: as if never made (not empty: not ours to remove) */
	if (sd->created && sd->dir)
		rmdir(sd->dir);
}

static void unstage_live(void)
{
	for (const struct stagedir *sd = live; sd; sd = sd->next_live)
		unstage(sd);
}

/*
 * Each change to what is staged is made with the fatal signals held off,
 * so that unstage_live sees it whole.
 */
int stagedir_open(struct stagedir *sd, const char *dir)
{
	sigset_t old;
	int err;

	memset(sd, 0, sizeof(*sd));
	sd->dirfd = sd->stagefd = sd->newfd = sd->oldfd = -1;
	sigcleanup_add(unstage_live);
	sigcleanup_block(&old);
	sd->next_live = live;
	live = sd;
	err = open_staged(sd, dir);
	sigcleanup_unblock(&old);
	if (err)
		stagedir_close(sd);
	return err;
}

static struct stagedir_file *find(struct stagedir *sd, const char *name)
{
	for (size_t i = 0; i < sd->n; i++)
		if (!strcmp(sd->files[i].name, name))
			return &sd->files[i];
	return NULL;
}

static int add(struct stagedir *sd, const char *name, uint64_t tag)
{
	struct stagedir_file *f;

	if (sd->n == sd->cap) {
		size_t cap = sd->cap ? 2 * sd->cap : 64;

		f = realloc(sd->files, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		sd->files = f;
		sd->cap = cap;
	}
	f = &sd->files[sd->n];
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	f->tag = tag;
	f->aside = 0;
	sd->n++;
	return 0;
}

static int create(struct stagedir *sd, const char *name, uint64_t tag)
{
	struct stagedir_file *f;
	int fd, err;

	fd = openat(sd->newfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		err = add(sd, name, tag);
		if (err) {
			unlinkat(sd->newfd, name, 0);
			close(fd);
			return err;
		}
		return fd;
	}
	/* only this set's own files are in new/: a repeated name is rewritten */
	if (errno != EEXIST || !(f = find(sd, name)))
		return -errno;
	fd = openat(sd->newfd, name, O_RDWR | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f->tag = tag;
	return fd;
}

int stagedir_create(struct stagedir *sd, const char *name, uint64_t tag)
{
	sigset_t old;
	int fd;

	sigcleanup_block(&old);
	fd = create(sd, name, tag);
	sigcleanup_unblock(&old);
	return fd;
}

/*
 * Two passes, so that every failure comes while the directory can still
 * be put back: first what holds the names moves aside into old/ (a
 * rename neither follows nor opens it, and fails where replacing it would,
 * as for another user's entry in a sticky directory), then the new files
 * move in, where nothing is in their way any more.
 */
static int commit(struct stagedir *sd, const struct stagedir_file **failed)
{
	struct stat st;
	size_t i, moved = 0;
	int err = 0;

	for (i = 0; i < sd->n; i++) {
		struct stagedir_file *f = &sd->files[i];

		if (fstatat(sd->dirfd, f->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			err = -errno;
			goto undo;
		}
		if (S_ISDIR(st.st_mode)) {
			err = -EISDIR;
			goto undo;
		}
		if (renameat(sd->dirfd, f->name, sd->oldfd, f->name) < 0) {
			err = -errno;
			goto undo;
		}
		f->aside = 1;
	}
	for (i = 0; i < sd->n; i++, moved++) {
		if (renameat(sd->newfd, sd->files[i].name, sd->dirfd, sd->files[i].name) < 0) {
			err = -errno;
			goto undo;
		}
	}
	for (i = 0; i < sd->n; i++) {
		if (sd->files[i].aside)
			unlinkat(sd->oldfd, sd->files[i].name, 0);
		sd->files[i].aside = 0;
	}
	sd->created = 0;
	return 0;
undo:
	*failed = &sd->files[i];
	for (size_t j = 0; j < moved; j++)
		renameat(sd->dirfd, sd->files[j].name, sd->newfd, sd->files[j].name);
	for (size_t j = 0; j < sd->n; j++) {
		struct stagedir_file *f = &sd->files[j];

		if (f->aside && renameat(sd->oldfd, f->name, sd->dirfd, f->name) == 0)
			f->aside = 0;
	}
	return err;
}

int stagedir_commit(struct stagedir *sd, const struct stagedir_file **failed)
{
	sigset_t old;
	int err;

	sigcleanup_block(&old);
	err = commit(sd, failed);
	sigcleanup_unblock(&old);
	return err;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void stagedir_close(struct stagedir *sd)
{
	struct stagedir **p;
	sigset_t old;

	sigcleanup_block(&old);
	unstage(sd);
	for (p = &live; *p && *p != sd; p = &(*p)->next_live)
		;
	if (*p)
		*p = sd->next_live;
	sigcleanup_unblock(&old);
	for (size_t i = 0; i < sd->n; i++)
		free(sd->files[i].name);
	free(sd->files);
	sd->files = NULL;
	sd->n = sd->cap = 0;
	close_fd(&sd->newfd);
	close_fd(&sd->oldfd);
	close_fd(&sd->stagefd);
	close_fd(&sd->dirfd);
	free(sd->stage);
	free(sd->dir);
	sd->stage = sd->dir = NULL;
	sd->created = 0;
}
