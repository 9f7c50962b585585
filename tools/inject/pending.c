/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A jitdump's mmap events wait here for their place in the output.
 *
 * perf reads a file in rounds, closed by FINISHED_ROUND records: at the
 * end of a round it delivers, in time order, the queued events up to the
 * latest time it had seen at the end of the round before.  An event that
 * comes with a time from the future raises that latest time, so the next
 * round delivers everything up to it and the samples of the rounds
 * between come too late ("out of order events"): a function loaded at the
 * end of the run would own its address from the start.  So an injected
 * event of time t goes into the first round whose latest input time
 * reaches t (doc/inject.md).  A min-heap on (time, order of queueing).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ctx.h"
#include "read/util.h"

struct ij_pend {
	uint64_t time, seq, start, len, pgoff;
	uint32_t image, pid, tid;
};

static int before(const struct ij_pend *a, const struct ij_pend *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

int ij_queue_mmap(struct ctx *c, size_t img, uint32_t pid, uint32_t tid, uint64_t start,
		  uint64_t len, uint64_t pgoff, uint64_t time)
{
	struct ij_pend e = { time, c->npend_seq++, start, len, pgoff, (uint32_t)img, pid, tid };
	size_t i;

	if (rd_grow((void **)&c->pend, &c->cappend, c->npend + 1, sizeof(*c->pend)))
		return -ENOMEM;
	for (i = c->npend++; i > 0 && before(&e, &c->pend[(i - 1) / 2]); i = (i - 1) / 2)
		c->pend[i] = c->pend[(i - 1) / 2];
	c->pend[i] = e;
	return 0;
}

static void pop(struct ctx *c)
{
	struct ij_pend last = c->pend[--c->npend];
	size_t i = 0, n = c->npend;

	for (;;) {
		size_t k = 2 * i + 1;

		if (k >= n)
			break;
		if (k + 1 < n && before(&c->pend[k + 1], &c->pend[k]))
			k++;
		if (!before(&c->pend[k], &last))
			break;
		c->pend[i] = c->pend[k];
		i = k;
	}
	if (n)
		c->pend[i] = last;
}

int ij_flush_pending(struct ctx *c, uint64_t upto)
{
	while (c->npend && c->pend[0].time <= upto) {
		const struct ij_pend *e = &c->pend[0];
		int err = ij_emit_mmap(c, &c->images[e->image], e->pid, e->tid, e->start, e->len,
				       e->pgoff, e->time);

		if (err)
			return err;
		pop(c);
	}
	return 0;
}
