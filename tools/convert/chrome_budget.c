/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How short an instrumented call may be and still go into the Chrome trace.
 * Viewers hold the whole JSON in memory, so the trace is bounded; the calls
 * worth keeping are the long ones (a call is never shorter than its
 * children, so keeping calls above a duration keeps whole subtrees' tops
 * and the file still nests).  A first pass over the input sizes the event
 * of every call into log2 buckets of its duration, and the threshold is the
 * lowest bucket edge above which everything fits.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "cvinput.h"

/* what a call's X event takes, besides its name: see put_x in writers/chrome.c */
#define CALL_EVENT_BYTES   90
#define COUNTER_BYTES      24

struct sizes {
	uint64_t bytes[65];    /* [b]: calls lasting [2^b, 2^(b+1)) ns; [0] also 0 ns */
};

static int size_call(const struct cv_call *c, void *arg)
{
	struct sizes *s = arg;
	uint64_t dur = c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;
	int b = dur > 1 ? 63 - __builtin_clzll(dur) : 0;

	s->bytes[b] += CALL_EVENT_BYTES + strlen(c->stack[c->depth]) +
		       COUNTER_BYTES * c->ncounters;
	return 0;
}

static int no_code(const struct cv_code *c, void *arg)
{
	(void)c;
	(void)arg;
	return 0;
}

static int no_thread(const struct cv_thread *t, void *arg)
{
	(void)t;
	(void)arg;
	return 0;
}

int cv_chrome_budget(struct cv_input *in, uint64_t max_bytes, uint64_t *min_call_ns,
		     char *err, size_t errlen)
{
	const struct cv_sink sink = { .call = size_call, .code = no_code, .thread = no_thread };
	/* samples, code loads and names share the file: an eighth is theirs */
	uint64_t budget = max_bytes - max_bytes / 8, used = 0;
	struct sizes s = { { 0 } };
	char *perfdata = in->perfdata;
	int ret;

	*min_call_ns = 0;
	in->perfdata = NULL;          /* calls only: perf samples are not read twice */
	ret = cv_input_read(in, 0, &sink, &s, err, errlen);
	in->perfdata = perfdata;
	if (ret)
		return ret;
	for (int b = 64; b >= 0; b--) {
		if (used + s.bytes[b] > budget) {
			*min_call_ns = b >= 63 ? UINT64_MAX : 1ull << (b + 1);
			break;
		}
		used += s.bytes[b];
	}
	return 0;
}
