/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Debug and unwind records made when the jitdump is written out, not when
 * the code is registered (lib/later.h): the batchfile's later (struct
 * jp_later) of a jitperf__code_load_later.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "later.h"

static int make(struct jp_later *l, void **buf, size_t *len)
{
	struct jp_dump_later *d = (struct jp_dump_later *)l;
	struct jitperf_code c = { .size = sizeof(c), .addr = (const void *)(uintptr_t)d->addr,
				  .len = d->len, .name = "" };
	unsigned char hdr_space[256], *hdr = NULL;
	struct jp_jitdump_load ld;
	size_t hdr_len = 0;
	int err;

	err = d->user->fill(d->user, &c);
	if (err)
		return err;
	/* what jitperf_code_load_ex would refuse is left out, the rest kept */
	c.addr = (const void *)(uintptr_t)d->addr;
	c.len = d->len;
	c.name = "";
	if (jp_code_check(&c)) {
		jp_debug("code at %#llx: lines outside it, left out", (unsigned long long)d->addr);
		c.lines = NULL;
		c.nlines = 0;
	}
	if (c.eh_frame_len && (!c.eh_frame ||
			       jp_ehframe_hdr(c.eh_frame, c.eh_frame_len, d->addr, d->len, hdr_space,
					      sizeof(hdr_space), &hdr, &hdr_len))) {
		jp_debug("code at %#llx: .eh_frame refused, left out", (unsigned long long)d->addr);
		c.eh_frame_len = 0;
		hdr = NULL;
		hdr_len = 0;
	}
	memset(&ld, 0, sizeof(ld));
	ld.name = "";
	ld.addr = d->addr;
	ld.len = d->len;
	ld.lines = c.lines;
	ld.nlines = c.nlines;
	ld.eh_frame = c.eh_frame;
	ld.eh_frame_len = c.eh_frame_len;
	ld.eh_hdr = hdr;
	ld.eh_hdr_len = hdr_len;
	err = jp_jitdump_extras(&ld, d->ts, buf, len);
	if (hdr != hdr_space)
		free(hdr);
	return err;
}

static void drop(struct jp_later *l)
{
	struct jp_dump_later *d = (struct jp_dump_later *)l;

	d->user->done(d->user);
	free(d);
}

struct jp_dump_later *jp_dump_later_new(struct jitperf__later *user, uint64_t addr, uint64_t len)
{
	struct jp_dump_later *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->l.make = make;
	d->l.drop = drop;
	d->user = user;
	d->addr = addr;
	d->len = len;
	return d;
}
