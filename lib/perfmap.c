/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /tmp/perf-<pid>.map: one "START SIZE name" line (lower-case hex, no 0x,
 * as perf parses it) per function, lines of several threads never mixed
 * (the caller holds the session lock), never half a line in the file.
 *
 * Batched (the default), the file is written through lib/batchfile.c: the
 * first line with one write(), every later one as "\nSTART SIZE name"
 * into the ring, written out in batches, a batch's leading newline last.
 * So while the process runs (or after it was killed) the last line has no
 * newline yet and is followed by the zeros of the file's grown tail: perf
 * reads its name up to the first NUL, and lines being written are hidden
 * behind that NUL until the newline before them is written.  perf 6.1
 * reads such a file whole (tests/lib/crash-perf.test).  At close the
 * final newline is written and the tail cut off; a killed process leaves
 * the lines not yet written in perf-<pid>.map.ring, which jitperf record
 * puts in.
 *
 * With JITPERF_IO=write, or when the file cannot be batched, each line
 * "START SIZE name\n" is one write() on an O_APPEND descriptor.
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
	uint64_t size;      /* write(): bytes written, where to cut back a failed write;
			     * batched: the size when batching began */
	int      batch;     /* to be batched from the next line on */
	struct jp_batchfile bf; /* batched: the last line has no newline yet */
	char     path[64];
};

int jp_perfmap_open(struct jp_perfmap **out, pid_t pid, int batched)
{
	struct jp_perfmap *pm;
	int err;

	*out = NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	snprintf(pm->path, sizeof(pm->path), "/tmp/perf-%d.map", (int)pid);
	/* a stale map of an earlier process with our pid, or a planted symlink,
	 * is replaced, never followed or appended to: see jp_create_fresh().
	 */
	err = jp_create_fresh(pm->path, O_RDWR | O_APPEND, &pm->fd);
	if (err) {
		free(pm);
		return err;
	}
	pm->batch = batched;
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

static int write_line(struct jp_perfmap *pm, const char *line, size_t n)
{
	struct iovec iov = { (void *)line, n };

	return jp_write_whole(pm->fd, &iov, 1, &pm->size);
}

/*
 * The line that begins the batching, unterminated, with one write(), then
 * the batching.  When the file cannot be batched, the line gets its
 * newline and write() goes on.
 */
static int first_line(struct jp_perfmap *pm, const char *line, size_t n)
{
	int err = write_line(pm, line, n - 1);

	if (err)
		return err;
	err = jp_batchfile_start(&pm->bf, pm->fd, pm->path, pm->size, 1, 1);
	if (!err)
		return 0;
	jp_debug("%s: cannot batch it (%s): one write() per line", pm->path, strerror(-err));
	pm->batch = 0;
	err = write_line(pm, "\n", 1);
	if (err && ftruncate(pm->fd, 0) == 0)
		pm->size = 0;           /* the call failed as a whole */
	return err;
}

int jp_perfmap_append(struct jp_perfmap *pm, const char *line, size_t n)
{
	if (pm->bf.ring)
		return jp_batchfile_append(&pm->bf, "\n", 1, line, n - 1);
	if (pm->batch)
		return first_line(pm, line, n);
	return write_line(pm, line, n);
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

const char *jp_perfmap_path(const struct jp_perfmap *pm)
{
	return pm->path;
}

/* Opened for nothing (the session failed): the empty file goes, if still ours. */
void jp_perfmap_discard(struct jp_perfmap *pm)
{
	if (!pm)
		return;
	jp_remove_own(pm->path, pm->fd);
	jp_perfmap_close(pm);
}

/* The file stays: perf reads it after the process is gone.  Its last line gets its newline. */
void jp_perfmap_close(struct jp_perfmap *pm)
{
	if (!pm)
		return;
	if (pm->bf.ring) {
		pm->size = pm->bf.size;
		if (jp_batchfile_finish(&pm->bf, 1) == 0)
			write_line(pm, "\n", 1);
	}
	close(pm->fd);
	free(pm);
}

/* Batched from the next line on (a fork child, once the inherited code is in). */
void jp_perfmap_batch(struct jp_perfmap *pm)
{
	if (pm && !pm->bf.ring)
		pm->batch = 1;
}

void jp_perfmap_drop(struct jp_perfmap *pm)
{
	if (!pm)
		return;
	jp_batchfile_finish(&pm->bf, 0);
	close(pm->fd);
	free(pm);
}

uint64_t jp_perfmap_mark(const struct jp_perfmap *pm)
{
	return pm->bf.ring ? pm->bf.size : pm->size;
}

void jp_perfmap_rollback(struct jp_perfmap *pm, uint64_t mark)
{
	if (pm->bf.ring && mark >= pm->size) {
		jp_batchfile_rollback(&pm->bf, mark);
	} else if (pm->bf.ring) {
		/* the line that began the batching goes too: the file ends on a
		 * whole line again, and is not batched until a line begins it again */
		jp_batchfile_rollback(&pm->bf, mark);
		jp_batchfile_finish(&pm->bf, 1);
		pm->size = mark;
	} else if (mark < pm->size && ftruncate(pm->fd, (off_t)mark) == 0) {
		pm->size = mark;
	}
}

int jp_perfmap_flush(struct jp_perfmap *pm)
{
	return jp_batchfile_flush(&pm->bf);
}
