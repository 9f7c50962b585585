/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What jitperf inject knows of the input's processes (tools/inject/ctx.h):
 * the address ranges they map, which of them run JIT code, and the times
 * of their records and jitdump markers.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "read/perfdata.h"
#include "read/util.h"

int ij_add_range(struct ctx *c, const struct range *r)
{
	if (rd_grow((void **)&c->ranges, &c->capranges, c->nranges + 1, sizeof(*c->ranges)))
		return -ENOMEM;
	c->ranges[c->nranges++] = *r;
	return 0;
}

/* a mapping of anonymous memory, by the name perf gives it */
int ij_is_anon(const char *name)
{
	return !strncmp(name, "//anon", 6) || !strncmp(name, "[anon:", 6) ||
	       !strncmp(name, "/memfd:", 7);
}

/* did pid write a jitdump? */
static int is_jitpid(const struct ctx *c, uint32_t pid)
{
	for (size_t i = 0; i < c->njitpids; i++)
		if (c->jitpids[i] == pid)
			return 1;
	return 0;
}

/*
 * Whether the output leaves out pid's anonymous mapping made at time, as
 * perf inject --jit does: from the process's first marker on, its JIT
 * code is described by the jitdump instead (without times: every one of
 * a JIT process)
 */
int ij_anon_dropped(const struct ctx *c, uint32_t pid, uint64_t time)
{
	uint64_t t0;

	if (!time)
		return is_jitpid(c, pid);
	t0 = ij_marker_time(c, pid);
	return t0 && time >= t0;
}

/* is [start, end) free of pid's mappings that perf keeps, and of every image's code? */
int ij_is_free(const struct ctx *c, uint32_t pid, uint64_t start, uint64_t end, uint64_t *next)
{
	for (size_t i = 0; i < c->nranges; i++) {
		const struct range *r = &c->ranges[i];

		/* anonymous memory perf never sees, or never runs code in:
		 * the tables' mapping may cover it */
		if ((r->flags & IJ_RANGE_ANON) &&
		    ((r->flags & IJ_RANGE_DATA) || ij_anon_dropped(c, r->pid, r->time)))
			continue;
		if (r->pid == pid && r->start < end && start < r->end) {
			*next = r->end;
			return 0;
		}
	}
	for (size_t i = 0; i < c->nimages; i++) {
		const struct ij_image *im = &c->images[i];
		uint64_t ehend = im->eh_vaddr ? im->eh_vaddr + (im->base - IJ_TEXT_OFF) + ij_eh_size(im) : 0;

		/* an image's own tables follow its code: only others' are in the way */

		if (im->pid != pid || !im->nsyms)
			continue;
		if (im->base < end && start < im->end) {
			*next = im->end;
			return 0;
		}
		if (ehend && ehend - ij_eh_size(im) < end && start < ehend) {
			*next = ehend;
			return 0;
		}
	}
	return 1;
}

int ij_add_jitpid(struct ctx *c, uint32_t pid)
{
	uint32_t *p;

	for (size_t i = 0; i < c->njitpids; i++)
		if (c->jitpids[i] == pid)
			return 0;
	p = realloc(c->jitpids, (c->njitpids + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->jitpids = p;
	c->jitpids[c->njitpids++] = pid;
	return 0;
}

/*
 * A record's time: a sample's own, another kernel record's from its
 * sample_id fields at its end; 0 if it has none (perf's own records).
 */
uint64_t ij_record_time(const struct ctx *c, const unsigned char *p, uint16_t size)
{
	uint64_t st = c->sample_type, t = 0;
	size_t at = 8, after = 0;
	uint32_t type;

	memcpy(&type, p, 4);
	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	if (type == PERF_RECORD_SAMPLE) {
		at += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
		at += (st & PERF_SAMPLE_IP) ? 8 : 0;
		at += (st & PERF_SAMPLE_TID) ? 8 : 0;
		if (size >= at + 8)
			memcpy(&t, p + at, 8);
		return t;
	}
	if (!c->sample_id_all || type >= PERF_RECORD_MAX)
		return 0;
	after += (st & PERF_SAMPLE_ID) ? 8 : 0;
	after += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	after += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	after += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	if (size >= 8 + after + 8)
		memcpy(&t, p + size - after - 8, 8);
	return t;
}

/* the time of pid's first marker whose jitdump can be read; 0 if none */
uint64_t ij_marker_time(const struct ctx *c, uint32_t pid)
{
	for (size_t i = 0; i < c->nmarks; i++)
		if (c->marks[i].pid == pid)
			return c->marks[i].start;
	return 0;
}
