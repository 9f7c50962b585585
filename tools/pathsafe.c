/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names others may control (tools/pathsafe.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pathsafe.h"

/* An entry of dir (already resolved) that another user put there. */
static int foreign_in_sticky(const char *dir, const struct stat *entry)
{
	struct stat d;

	if (stat(*dir ? dir : "/", &d) || !(d.st_mode & S_ISVTX) || !(d.st_mode & S_IWOTH))
		return 0;
	return entry->st_uid != geteuid() && entry->st_uid != d.st_uid;
}

/*
 * Resolve path one component at a time, as the kernel does, checking each
 * symbolic link in the directory that holds it; the last component is
 * checked when it is a FIFO too.  A component that does not exist ends the
 * walk: nothing was planted beyond it.
 */
int pathsafe_planted(const char *path, const char **why)
{
	char done[PATH_MAX], todo[PATH_MAX], link[PATH_MAX], cand[PATH_MAX];
	int links = 0;

	*why = NULL;
	if (*path == '/')
		done[0] = 0;
	else if (!getcwd(done, sizeof(done)))
		return 0;
	else if (!strcmp(done, "/"))
		done[0] = 0;
	if (snprintf(todo, sizeof(todo), "%s", path) >= (int)sizeof(todo))
		return 0;
	for (char *p = todo; *p;) {
		char *comp = p, *end = strchrnul(p, '/');
		struct stat st;
		ssize_t n;

		p = *end ? end + 1 : end;
		*end = 0;
		if (!*comp || !strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(done, '/');

			if (slash)              /* "" is the root: its ".." is itself */
				*slash = 0;
			continue;
		}
		if (snprintf(cand, sizeof(cand), "%s/%s", done, comp) >= (int)sizeof(cand) ||
		    lstat(cand, &st))
			return 0;
		if (S_ISFIFO(st.st_mode) && !*p && foreign_in_sticky(done, &st)) {
			*why = "a FIFO of another user in a sticky directory: not written";
			return 1;
		}
		if (!S_ISLNK(st.st_mode)) {
			strcpy(done, cand);
			continue;
		}
		if (foreign_in_sticky(done, &st)) {
			*why = "a symbolic link of another user in a sticky directory: not followed";
			return 1;
		}
		n = readlink(cand, link, sizeof(link) - 1);
		if (n <= 0 || ++links > 40)
			return 0;               /* the open that follows will say why */
		link[n] = 0;
		/* the link's text replaces the component: continue with it, then the rest */
		if (snprintf(cand, sizeof(cand), "%s%s%s", link, *p ? "/" : "", p) >=
		    (int)sizeof(cand))
			return 0;
		strcpy(todo, cand);
		p = todo;
		if (*link == '/')
			done[0] = 0;
	}
	return 0;
}

/* Remove name in dirfd and all under it; no link is followed (O_NOFOLLOW). */
static int remove_at(int dirfd, const char *name, int depth)
{
	struct dirent *e;
	int fd, err = 0, pass;
	DIR *d;

	if (!unlinkat(dirfd, name, 0))
		return 0;
	if (errno != EISDIR)
		return -errno;
	if (depth > 256)
		return -ELOOP;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	/* entries removed while reading may hide others: read again until empty */
	for (pass = 0; !err && pass < 8; pass++) {
		while (!err && (e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				err = remove_at(fd, e->d_name, depth + 1);
		if (err)
			break;
		if (!unlinkat(dirfd, name, AT_REMOVEDIR)) {
			closedir(d);
			return 0;
		}
		if (errno != ENOTEMPTY)
			err = -errno;
		rewinddir(d);
	}
	closedir(d);
	return err ? err : -ENOTEMPTY;
}

int pathsafe_remove_tree(const char *path)
{
	return remove_at(AT_FDCWD, path, 0);
}
