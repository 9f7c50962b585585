/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Output files written to a temporary name and renamed on success. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "tools/pathsafe.h"
#include "tools/sigcleanup.h"

#define VBUF_SIZE (1u << 20)

/*
 * Temporary files being written, removed by a signal that ends the
 * process (tools/sigcleanup.h): an interrupted conversion leaves nothing.
 */
#define MAX_LIVE 16
static const char *live[MAX_LIVE];

static void remove_live(void)
{
	for (size_t i = 0; i < MAX_LIVE; i++)
		if (live[i])
			unlink(live[i]);
}

/* mkstemp(tmp), the file tracked before a signal can come between */
static int make_tracked(char *tmp)
{
	sigset_t old;
	int fd, e;

	sigcleanup_add(remove_live);
	sigcleanup_block(&old);
	fd = mkstemp(tmp);
	e = errno;
	for (size_t i = 0; fd >= 0 && i < MAX_LIVE; i++) {
		if (!live[i]) {
			live[i] = tmp;
			break;
		}
	}
	sigcleanup_unblock(&old);
	errno = e;
	return fd;
}

static void untrack(const char *tmp)
{
	sigset_t old;

	sigcleanup_block(&old);
	for (size_t i = 0; i < MAX_LIVE; i++)
		if (live[i] == tmp)
			live[i] = NULL;
	sigcleanup_unblock(&old);
}

/*
 * A device, FIFO or socket (/dev/null, /dev/stdout, a pipe made with
 * mkfifo) is written directly: renaming over it would replace it by a file.
 */
static int open_special(struct outfile *of, const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return 1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	of->fp = fdopen(fd, "w");
	if (!of->fp) {
		close(fd);
		return -errno;
	}
	of->direct = 1;
	of->vbuf = malloc(VBUF_SIZE);
	if (of->vbuf)
		setvbuf(of->fp, of->vbuf, _IOFBF, VBUF_SIZE);
	return 0;
}

int outfile_open(struct outfile *of, const char *path)
{
	const char *slash;
	size_t dirlen;
	mode_t mask;
	int fd, err;

	memset(of, 0, sizeof(*of));
	of->path = path;
	/* the user's name: followed if a link, unless another user planted it */
	if (strcmp(path, "-") && pathsafe_planted(path, &of->why))
		return -EPERM;
	err = open_special(of, path);
	if (err <= 0)
		return err;
	/* through a symbolic link, the file it names is replaced, not the link */
	of->real = realpath(path, NULL);
	if (of->real)
		path = of->real;
	slash = strrchr(path, '/');
	dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	if (!strcmp(path, "-")) {
		/* stdio may keep a reference to the buffer: keep it for good */
		static char stdout_buf[1u << 16];

		of->fp = stdout;
		setvbuf(stdout, stdout_buf, _IOFBF, sizeof(stdout_buf));
		return 0;
	}
	of->vbuf = malloc(VBUF_SIZE);
	if (!of->vbuf)
		return -ENOMEM;
	/* same directory, so that rename() cannot cross file systems */
	of->tmp = malloc(dirlen + strlen(path + dirlen) + 16);
	if (!of->tmp) {
		err = -ENOMEM;
		goto err_out;
	}
	sprintf(of->tmp, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
	fd = make_tracked(of->tmp);
	if (fd < 0) {
		err = -errno;
		free(of->tmp);
		of->tmp = NULL;
		goto err_out;
	}
	/* mkstemp makes 0600; a normal file gets 0666 & ~umask */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0 || !(of->fp = fdopen(fd, "w"))) {
		err = -errno;
		close(fd);
		goto err_out;
	}
	setvbuf(of->fp, of->vbuf, _IOFBF, VBUF_SIZE);
	return 0;
err_out:
	outfile_abort(of);
	return err;
}

int outfile_commit(struct outfile *of)
{
	int err = 0;

	if (!of->fp)
		return -EBADF;
	if (fflush(of->fp) || ferror(of->fp))
		err = -(errno ? errno : EIO);
	if (of->fp == stdout) {               /* stdout stays open */
		of->fp = NULL;
		return err;
	}
	if (fclose(of->fp) && !err)
		err = -(errno ? errno : EIO);
	of->fp = NULL;
	if (of->tmp) {
		if (!err && rename(of->tmp, of->real ? of->real : of->path) < 0)
			err = -errno;
		if (err)
			unlink(of->tmp);
		untrack(of->tmp);
		free(of->tmp);
		of->tmp = NULL;
	}
	outfile_abort(of);                    /* frees the rest */
	return err;
}

void outfile_abort(struct outfile *of)
{
	if (of->fp && (of->tmp || of->direct))
		fclose(of->fp);
	else if (of->fp)
		fflush(of->fp);
	if (of->tmp) {
		unlink(of->tmp);
		untrack(of->tmp);
	}
	of->fp = NULL;
	free(of->tmp);
	of->tmp = NULL;
	free(of->vbuf);
	of->vbuf = NULL;
	free(of->real);
	of->real = NULL;
	of->direct = 0;
}
