/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /tmp/perf-<pid>.map: one "START SIZE name\n" line (lower-case hex, no 0x,
 * as perf parses it) per function, lines of several threads never mixed
 * (the caller holds the session lock).  Each line is one write() on an
 * O_APPEND descriptor: once it returns the line is in the page cache, where
 * perf reads it even if the process is killed the next instant.  A write
 * that fails half-way is cut off again (jp_write_whole), so the file never
 * ends in half a line.  See doc/registration.md.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "core.h"

struct jp_perfmap {
	int      fd;
	uint64_t size;      /* bytes written: where to cut back a failed write */
	char     path[64];
};

void jp_perfmap_name(char *buf, size_t len, pid_t pid)
{
	snprintf(buf, len, "/tmp/perf-%d.map", (int)pid);
}

int jp_perfmap_open(struct jp_perfmap **out, pid_t pid)
{
	struct jp_perfmap *pm;
	int err;

	*out = NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	jp_perfmap_name(pm->path, sizeof(pm->path), pid);
	/* a stale map of an earlier process with our pid, or a planted symlink,
	 * is replaced, never followed or appended to: see jp_create_fresh().
	 */
	err = jp_create_fresh(pm->path, O_WRONLY | O_APPEND, &pm->fd);
	if (err) {
		free(pm);
		return err;
	}
	*out = pm;
	return 0;
}

/* v in lower-case hex without leading zeros, written in place. */
static char *put_hex(char *p, uint64_t v)
{
	int n = v ? (64 - __builtin_clzll(v) + 3) / 4 : 1;
	char *end = p + n;

	while (n--) {
		p[n] = "0123456789abcdef"[v & 15];
		v >>= 4;
	}
	return end;
}

size_t jp_perfmap_line(char *line, uint64_t addr, uint64_t len, const char *name, size_t nlen)
{
	char *p = line;
	size_t n;

	p = put_hex(p, addr);
	*p++ = ' ';
	p = put_hex(p, len);
	*p++ = ' ';
	memcpy(p, name, nlen);
	/* a newline or carriage return would split the line for perf; a NUL
	 * cannot be in name */
	for (n = 0; n < nlen; n++)
		if (p[n] == '\n' || p[n] == '\r')
			p[n] = ' ';
	p += nlen;
	*p++ = '\n';
	return (size_t)(p - line);
}

int jp_perfmap_append(struct jp_perfmap *pm, const char *line, size_t n)
{
	struct iovec iov = { (void *)line, n };

	return jp_write_whole(pm->fd, &iov, 1, &pm->size);
}

int jp_perfmap_write(struct jp_perfmap *pm, uint64_t addr, uint64_t len, const char *name)
{
	size_t nlen = strlen(name);
	char small[512], *line = small;
	int err;

	if (nlen + JP_PERFMAP_LINE_EXTRA > sizeof(small)) {
		line = malloc(nlen + JP_PERFMAP_LINE_EXTRA);
		if (!line)
			return -ENOMEM;
	}
	err = jp_perfmap_append(pm, line, jp_perfmap_line(line, addr, len, name, nlen));
	if (line != small)
		free(line);
	return err;
}

/* Opened for nothing (the session failed): the empty file goes, if still ours. */
void jp_perfmap_discard(struct jp_perfmap *pm)
{
	if (!pm)
		return;
	jp_remove_own(pm->path, pm->fd);
	jp_perfmap_close(pm);
}

/* The file stays: perf reads it after the process is gone. */
void jp_perfmap_close(struct jp_perfmap *pm)
{
	if (!pm)
		return;
	close(pm->fd);
	free(pm);
}

/* After fork: the parent's file is the parent's. */
void jp_perfmap_drop(struct jp_perfmap *pm)
{
	jp_perfmap_close(pm);
}

uint64_t jp_perfmap_mark(const struct jp_perfmap *pm)
{
	return pm->size;
}

void jp_perfmap_rollback(struct jp_perfmap *pm, uint64_t mark)
{
	if (mark < pm->size && ftruncate(pm->fd, (off_t)mark) == 0)
		pm->size = mark;
}
