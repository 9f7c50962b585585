/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf script text read by several threads: a regular file is cut at
 * blank lines (where stackcollapse-perf.pl forgets everything of the
 * sample before), each piece read with pread() into a buffer of its own
 * and parsed by a parser of its own into its own sample callback, with
 * the event filter every parser would have chosen (the first sample
 * header's event) set beforehand.  The pieces' samples are then merged by
 * the caller; the result is the same as one parser's, as long as what the
 * callbacks do does not depend on order.  An error in a piece (or a file
 * that changed under us) is reported by reading the file again in one
 * piece, so its message has the line number of the whole file.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cvinput.h"

#define MIN_PIECE (4u << 20)        /* smaller inputs are not worth a thread */
#define CHUNK     (1u << 20)        /* read at once: the copy stays in the cache */
#define HEAD      (1u << 20)        /* where the first sample's event is looked for */

struct piece {
	int                fd;
	off_t              off;
	size_t             len;
	struct ps_parser  *p;
	int                ret;
	pthread_t          th;
};

/* n bytes at off, all of them (0), or -EAGAIN: the file is shorter now */
static int read_at(int fd, char *buf, size_t n, off_t off)
{
	while (n) {
		ssize_t k = pread(fd, buf, n, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -EAGAIN;
		buf += k;
		n -= k;
		off += k;
	}
	return 0;
}

static void *parse_piece(void *arg)
{
	struct piece *pc = arg;
	char *buf = malloc(CHUNK);

	if (!buf) {
		pc->ret = -ENOMEM;
		return NULL;
	}
	for (size_t done = 0, n; !pc->ret && done < pc->len; done += n) {
		n = pc->len - done < CHUNK ? pc->len - done : CHUNK;
		pc->ret = read_at(pc->fd, buf, n, pc->off + done);
		if (!pc->ret)
			pc->ret = ps_feed(pc->p, buf, n);
	}
	free(buf);
	if (!pc->ret)
		pc->ret = ps_finish(pc->p);
	return NULL;
}

/* the start of the line after the first blank line at or after from */
static off_t cut_after_blank(int fd, off_t size, off_t from)
{
	char buf[64 << 10], prev = 0;

	for (off_t at = from; at < size; at += sizeof(buf)) {
		size_t n = size - at < (off_t)sizeof(buf) ? (size_t)(size - at) : sizeof(buf);

		if (read_at(fd, buf, n, at))
			return size;
		for (size_t i = 0; i < n; prev = buf[i++])
			if (buf[i] == '\n' && prev == '\n')
				return at + i + 1;
	}
	return size;
}

int cv_read_text_parallel(struct cv_input *in, unsigned flags, size_t nthreads,
			  ps_sample_fn fn, void *const args[], uint64_t *nsamples,
			  int *filtered, char *err, size_t errlen)
{
	struct piece pcs[8];
	struct stat st;
	char *head;
	const char *ev, *nl;
	size_t evlen, i, n, headlen;
	off_t start;
	int ret = 0;

	if (nthreads < 2 || nthreads > 8 || in->fd <= 0 || fstat(in->fd, &st) ||
	    !S_ISREG(st.st_mode) || (size_t)st.st_size < nthreads * MIN_PIECE)
		return -EAGAIN;
	/* the first event, from whole lines at the start; none there: one piece */
	head = malloc(HEAD);
	if (!head)
		return -EAGAIN;
	headlen = HEAD;
	if (read_at(in->fd, head, headlen, 0) || !(nl = memrchr(head, '\n', headlen)) ||
	    !(evlen = ps_first_event(head, nl + 1 - head, &ev))) {
		free(head);
		return -EAGAIN;
	}
	memset(pcs, 0, sizeof(pcs));
	for (i = 0, n = 0, start = 0; i < nthreads && start < st.st_size; i++) {
		off_t end = i + 1 == nthreads ? st.st_size :
			    cut_after_blank(in->fd, st.st_size, st.st_size / (off_t)nthreads * (i + 1));

		if (end <= start)
			continue;
		pcs[n].fd = in->fd;
		pcs[n].off = start;
		pcs[n].len = end - start;
		pcs[n].p = ps_new(flags, in->path, fn, args[n]);
		if (!pcs[n].p || ps_set_event(pcs[n].p, ev, evlen)) {
			ret = -ENOMEM;
			n += pcs[n].p != NULL;
			goto out;
		}
		n++;
		start = end;
	}
	for (i = 1; i < n; i++)
		if (pthread_create(&pcs[i].th, NULL, parse_piece, &pcs[i])) {
			pcs[i].th = 0;
			pcs[i].ret = -EAGAIN;
		}
	parse_piece(&pcs[0]);
	for (i = 1; i < n; i++)
		if (pcs[i].th)
			pthread_join(pcs[i].th, NULL);
	*nsamples = 0;
	*filtered = 0;
	for (i = 0; i < n && !ret; i++) {
		ret = pcs[i].ret;
		*nsamples += ps_samples(pcs[i].p);
		*filtered |= ps_filtered(pcs[i].p);
	}
	/* an error: the caller reads it all again, in one piece, for the message */
	if (ret && ret != -ENOMEM)
		ret = -EAGAIN;
out:
	for (i = 0; i < n; i++)
		ps_free(pcs[i].p);
	free(head);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", in->path);
	return ret;
}
