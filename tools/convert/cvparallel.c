/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf script text read by several threads: a regular file is mapped and
 * cut at blank lines (where stackcollapse-perf.pl forgets everything of
 * the sample before), each piece parsed by a parser of its own into its
 * own sample callback, with the event filter every parser would have
 * chosen (the first sample header's event) set beforehand.  The pieces'
 * samples are then merged by the caller; the result is the same as one
 * parser's, as long as what the callbacks do does not depend on order.
 * An error in a piece is reported by reading the file again in one piece,
 * so its message has the line number of the whole file.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cvinput.h"

#define MIN_PIECE (4u << 20)        /* smaller inputs are not worth a thread */

struct piece {
	const char        *buf;
	size_t             len;
	struct ps_parser  *p;
	int                ret;
	pthread_t          th;
};

static void *parse_piece(void *arg)
{
	struct piece *pc = arg;

	pc->ret = ps_feed(pc->p, pc->buf, pc->len);
	if (!pc->ret)
		pc->ret = ps_finish(pc->p);
	return NULL;
}

/* the start of the line after the first blank line at or after from */
static size_t cut_after_blank(const char *b, size_t len, size_t from)
{
	const char *p = b + from, *e = b + len;

	while (p < e && (p = memchr(p, '\n', e - p)) && p + 1 < e) {
		if (p[1] == '\n')
			return p + 2 - b;
		p++;
	}
	return len;
}

int cv_read_text_parallel(struct cv_input *in, unsigned flags, size_t nthreads,
			  ps_sample_fn fn, void *const args[], uint64_t *nsamples,
			  int *filtered, char *err, size_t errlen)
{
	struct piece pcs[8];
	struct stat st;
	const char *map, *ev;
	size_t evlen, i, n, start;
	int ret = 0;

	if (nthreads < 2 || nthreads > 8 || in->fd <= 0 || fstat(in->fd, &st) ||
	    !S_ISREG(st.st_mode) || (size_t)st.st_size < nthreads * MIN_PIECE)
		return -EAGAIN;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
	if (map == MAP_FAILED)
		return -EAGAIN;
	madvise((void *)map, st.st_size, MADV_SEQUENTIAL | MADV_WILLNEED);
	evlen = ps_first_event(map, st.st_size, &ev);
	memset(pcs, 0, sizeof(pcs));
	for (i = 0, n = 0, start = 0; i < nthreads && start < (size_t)st.st_size; i++) {
		size_t end = i + 1 == nthreads ? (size_t)st.st_size :
			     cut_after_blank(map, st.st_size, (size_t)st.st_size / nthreads * (i + 1));

		if (end <= start)
			continue;
		pcs[n].buf = map + start;
		pcs[n].len = end - start;
		pcs[n].p = ps_new(flags, in->path, fn, args[n]);
		if (!pcs[n].p || (evlen && ps_set_event(pcs[n].p, ev, evlen))) {
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
	munmap((void *)map, st.st_size);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", in->path);
	return ret;
}
