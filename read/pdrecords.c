/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The records of a perf.data file (read/perfdata.h): one index of (time,
 * offset) of every record, sorted once, and pd_next, which takes the next
 * entry and decodes its record with the decoder of its type.  The layout,
 * attributes and features are read/perfdata.c's.  doc/perfdata-reader.md
 * says why it is built so.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pdfile.h"
#include "util.h"

/* ---- the record index */

/*
 * Every record of the data section gets one entry, (time, file offset),
 * and the entries are sorted once: pd_next hands the records out in that
 * order.  This is what perf's ordered-events queue amounts to for a whole
 * file: records by their sample time, records of equal time in file order.
 * A record's time is its own (sample time, or the time of its sample_id
 * trailer), or the time of the record before it in the file when it has
 * none, so a record without a time stays after the one it followed.
 * perf's own records (types from PD_HEADER_ATTR on) are read while the
 * index is built and are not in it.
 */

/*
 * Stable LSD radix sort by time, skipping the digits that are the same in
 * every record (the high bits of one recording's timestamps): a few linear
 * passes where qsort would compare n log n times.  The digit grows with n
 * (8 to 16 bits), so the counts never outweigh the entries.  Stable, so
 * records of equal time keep file order.
 */
static int sort_index(struct pd_file *f)
{
	struct pd_index *a = f->index, *b, *t;
	size_t n = f->nindex, i, *count, ndig;
	uint64_t lo = UINT64_MAX, hi = 0;
	int shift, bits = 8, sorted = 1;

	for (i = 0; i < n; i++) {
		lo = a[i].time < lo ? a[i].time : lo;
		hi = a[i].time > hi ? a[i].time : hi;
		sorted &= !i || a[i - 1].time <= a[i].time;
	}
	if (sorted)
		return 0;
	while (bits < 16 && ((size_t)1 << (bits + 1)) <= n)
		bits++;
	ndig = (size_t)1 << bits;
	b = malloc(n * sizeof(*b));
	count = malloc((ndig + 1) * sizeof(*count));
	if (!b || !count) {
		free(b);
		free(count);
		return -ENOMEM;
	}
	for (shift = 0; shift < 64 && ((lo ^ hi) >> shift); shift += bits) {
		uint64_t mask = ndig - 1;

		memset(count, 0, (ndig + 1) * sizeof(*count));
		for (i = 0; i < n; i++)
			count[((a[i].time >> shift) & mask) + 1]++;
		for (i = 1; i <= ndig; i++)
			count[i] += count[i - 1];
		for (i = 0; i < n; i++)
			b[count[(a[i].time >> shift) & mask]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	free(count);
	f->index = a;
	free(b);
	return 0;
}

static int index_add(struct pd_file *f, size_t *cap, uint64_t off)
{
	if (f->nindex == *cap) {
		size_t c = *cap ? *cap * 2 : 1024;
		struct pd_index *ix = realloc(f->index, c * sizeof(*ix));

		if (!ix)
			return -ENOMEM;
		f->index = ix;
		*cap = c;
	}
	f->index[f->nindex++] = (struct pd_index){ 0, off };
	return 0;
}

/* the times of the entries (pipe mode: once every attribute is known) */
static void index_times(struct pd_file *f)
{
	uint64_t last = 0;

	for (size_t i = 0; i < f->nindex; i++) {
		const unsigned char *r = f->data + f->index[i].off;
		uint64_t t = pd_record_time(f, u32at(r), r, u16at(r + 6));

		f->index[i].time = last = t ? t : last;
	}
}

/* 0, or the message for a record at off whose framing is wrong */
static int check_frame(struct pd_file *f, uint64_t off, uint64_t *extra, char *err,
		       size_t errlen)
{
	const unsigned char *r = f->data + off;
	uint32_t type;
	uint16_t size;

	*extra = 0;
	if (f->data_end - off < 8)
		return pd_file_fail(f->path, err, errlen, off, "truncated record header");
	type = u32at(r);
	size = u16at(r + 6);
	/* kernel records come in 8-byte units; perf's own may not (pipe mode) */
	if (size < 8 || (type < PD_HEADER_ATTR && size % 8))
		return pd_file_fail(f->path, err, errlen, off, "record of type %" PRIu32
			    " has a bad size %u", type, size);
	if (size > f->data_end - off)
		return pd_file_fail(f->path, err, errlen, off,
			    "truncated: record of %u bytes, %" PRIu64 " left", size,
			    f->data_end - off);
	if (type == PD_COMPRESSED)
		return pd_file_fail(f->path, err, errlen, off, "compressed records (perf record -z) "
			    "are not supported: decompress with perf inject -i IN -o OUT");
	if (type == PD_HEADER_TRACING_DATA) {   /* pipe mode: the tracing data follows */
		if (size < 12)
			return pd_file_fail(f->path, err, errlen, off, "truncated tracing data record");
		*extra = u32at(r + 8);
		if (*extra > f->data_end - off - size)
			return pd_file_fail(f->path, err, errlen, off,
				    "tracing data beyond the end of the data");
	}
	if (type == PD_AUXTRACE) {     /* its payload follows the record */
		if (size < 16)
			return pd_file_fail(f->path, err, errlen, off, "truncated auxtrace record");
		*extra = u64at(r + 8);
		if (*extra > f->data_end - off - size)
			return pd_file_fail(f->path, err, errlen, off,
				    "auxtrace data beyond the end of the data");
	}
	return 0;
}

/*
 * One pass over the data section: every record's framing checked, perf's
 * header records taken in (pipe mode), the others indexed with their
 * times, then the index sorted.  In pipe mode the attributes that give
 * records their times are themselves records, so times are read after
 * the pass.  So are the event names of PD_EVENT_UPDATE, which need the
 * map of ids: it is built once, after the pass, however the attributes
 * and names alternate.
 */
int pd_index_records(struct pd_file *f, char *err, size_t errlen)
{
	uint64_t off = f->data_off, extra, last = 0, *names = NULL;
	size_t cap = 0, nnames = 0, capnames = 0;
	int ret = 0;

	free(f->index);
	f->index = NULL;
	f->nindex = f->next = f->seen = 0;
	while (off < f->data_end) {
		const unsigned char *r = f->data + off;
		uint32_t type;
		uint16_t size;

		ret = check_frame(f, off, &extra, err, errlen);
		if (ret)
			goto out;
		type = u32at(r);
		size = u16at(r + 6);
		if (type == PD_EVENT_UPDATE) {
			ret = rd_grow((void **)&names, &capnames, nnames + 1, sizeof(*names));
			if (!ret)
				names[nnames++] = off;
		} else if (type >= PD_HEADER_ATTR) {
			ret = pd_header_record(f, type, r, size, off, err, errlen);
		} else {
			ret = index_add(f, &cap, off);
			if (!ret && !f->pipe) {
				uint64_t t = pd_record_time(f, type, r, size);

				f->index[f->nindex - 1].time = last = t ? t : last;
			}
		}
		if (ret)
			goto out;
		off += size + extra;
	}
	if (f->idmap_stale && (ret = pd_build_idmap(f)))
		goto out;
	for (size_t i = 0; i < nnames && !ret; i++) {
		const unsigned char *r = f->data + names[i];

		ret = pd_header_record(f, PD_EVENT_UPDATE, r, u16at(r + 6), names[i], err, errlen);
	}
	if (ret)
		goto out;
	if (f->pipe)
		index_times(f);
	ret = sort_index(f);
	f->indexed = !ret;
out:
	free(names);
	return ret;
}

int pd_index(struct pd_file *f, char *err, size_t errlen)
{
	int ret = f->indexed ? 0 : pd_index_records(f, err, errlen);

	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", f->path);
	return ret;
}

/* ---- decoding one record */

struct cursor {
	const unsigned char *p, *end;
};

static int take(struct cursor *c, size_t n, const unsigned char **out)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	*out = c->p;
	c->p += n;
	return 0;
}

static int take64(struct cursor *c, uint64_t *v)
{
	const unsigned char *p;

	if (take(c, 8, &p))
		return -1;
	*v = u64at(p);
	return 0;
}

static int skip64(struct cursor *c, uint64_t n)
{
	const unsigned char *p;

	if (n > (uint64_t)(c->end - c->p) / 8)
		return -1;
	return take(c, 8 * n, &p);
}

static int parse_sample(const struct pd_attr *a, struct cursor *c, struct pd_sample *s)
{
	uint64_t st = a->attr.sample_type, v, rf = a->attr.read_format;
	const unsigned char *p;

	memset(s, 0, sizeof(*s));
	s->attr = a;
	s->period = a->attr.freq ? 0 : a->attr.sample_period;
	if ((st & PERF_SAMPLE_IDENTIFIER) && take64(c, &s->id))
		return -1;
	if ((st & PERF_SAMPLE_IP) && take64(c, &s->ip))
		return -1;
	if (st & PERF_SAMPLE_TID) {
		if (take(c, 8, &p))
			return -1;
		s->pid = u32at(p);
		s->tid = u32at(p + 4);
	}
	if ((st & PERF_SAMPLE_TIME) && take64(c, &s->time))
		return -1;
	if ((st & PERF_SAMPLE_ADDR) && take64(c, &s->addr))
		return -1;
	if ((st & PERF_SAMPLE_ID) && take64(c, &s->id))
		return -1;
	if ((st & PERF_SAMPLE_STREAM_ID) && take64(c, &v))
		return -1;
	if (st & PERF_SAMPLE_CPU) {
		if (take(c, 8, &p))
			return -1;
		s->cpu = u32at(p);
	}
	if ((st & PERF_SAMPLE_PERIOD) && take64(c, &s->period))
		return -1;
	if (st & PERF_SAMPLE_READ) {
		uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST), nr = 1;
		uint64_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
				 !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

		if ((rf & PERF_FORMAT_GROUP) && take64(c, &nr))
			return -1;
		if (skip64(c, times) || nr > UINT64_MAX / 8 || skip64(c, nr * per))
			return -1;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (take64(c, &s->nr) || s->nr > (uint64_t)(c->end - c->p) / 8 ||
		    take(c, 8 * s->nr, &s->chain))
			return -1;
		s->has_callchain = 1;
	}
	if (st & PERF_SAMPLE_RAW) {
		if (take(c, 4, &p) || take(c, u32at(p), &p))
			return -1;
		/* the u32 size and the data are padded to 8 bytes together */
		c->p = (const unsigned char *)(((uintptr_t)c->p + 7) & ~(uintptr_t)7);
		if (c->p > c->end)
			return -1;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		if (take64(c, &v))
			return -1;
		if ((a->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) && skip64(c, 1))
			return -1;
		if (v > UINT64_MAX / 3 || skip64(c, 3 * v))
			return -1;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		if (take64(c, &v))
			return -1;
		if (v && skip64(c, __builtin_popcountll(a->attr.sample_regs_user)))
			return -1;
		s->has_regs_user = v != 0;
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		if (take64(c, &v))
			return -1;
		if (v) {
			if (take(c, v > (uint64_t)(c->end - c->p) ? (size_t)-1 : (size_t)v, &p) ||
			    skip64(c, 1))
				return -1;
			s->has_stack_user = 1;
		}
	}
	return 0;
}

/* ---- the records, one decoder per type */

/*
 * Each decoder gets the record r of size bytes (its framing checked by
 * index_records) and fills its part of ev: 1, or -EINVAL with err naming
 * the record's offset.
 */

static int truncated(const struct pd_file *f, const struct pd_event *ev, uint16_t size,
		     char *err, size_t errlen)
{
	return pd_file_fail(f->path, err, errlen, ev->offset, "truncated record of type %" PRIu32
		    " (%u bytes)", ev->type, size);
}

static int decode_sample(struct pd_file *f, const unsigned char *r, uint16_t size,
			 struct pd_event *ev, char *err, size_t errlen)
{
	const struct pd_attr *a = pd_record_attr(f, ev->type, r, size);
	struct cursor c = { r + 8, r + size };

	if (!a)
		return pd_file_fail(f->path, err, errlen, ev->offset, "sample of an unknown event id");
	if (parse_sample(a, &c, &ev->sample))
		return pd_file_fail(f->path, err, errlen, ev->offset,
			    "sample record shorter than its fields (%u bytes)", size);
	return 1;
}

/* PERF_RECORD_MMAP and PERF_RECORD_MMAP2 */
static int decode_mmap(struct pd_file *f, const unsigned char *r, uint16_t size,
		       struct pd_event *ev, char *err, size_t errlen)
{
	size_t fixed = ev->type == PERF_RECORD_MMAP ? 32 : 64;
	const unsigned char *p = r + 8 + fixed;

	if (size < 8 + fixed + 1)
		return truncated(f, ev, size, err, errlen);
	ev->mmap.pid = u32at(r + 8);
	ev->mmap.tid = u32at(r + 12);
	ev->mmap.addr = u64at(r + 16);
	ev->mmap.len = u64at(r + 24);
	ev->mmap.pgoff = u64at(r + 32);
	if (ev->type == PERF_RECORD_MMAP2) {
		if ((ev->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && r[40] <= 20) {
			ev->mmap.build_id_size = r[40];
			memcpy(ev->mmap.build_id, r + 44, r[40]);
		}
		ev->mmap.prot = u32at(r + 64);
		ev->mmap.flags = u32at(r + 68);
	} else {
		ev->mmap.prot = PROT_EXEC;
	}
	if (!memchr(p, 0, size - 8 - fixed))
		return pd_file_fail(f->path, err, errlen, ev->offset, "file name of a map not terminated");
	ev->mmap.filename = (const char *)p;
	return 1;
}

static int decode_comm(struct pd_file *f, const unsigned char *r, uint16_t size,
		       struct pd_event *ev, char *err, size_t errlen)
{
	if (size < 8 + 8 + 1)
		return truncated(f, ev, size, err, errlen);
	ev->comm.pid = u32at(r + 8);
	ev->comm.tid = u32at(r + 12);
	if (!memchr(r + 16, 0, size - 16))
		return pd_file_fail(f->path, err, errlen, ev->offset, "command name not terminated");
	ev->comm.comm = (const char *)r + 16;
	ev->comm.exec = !!(ev->misc & PERF_RECORD_MISC_COMM_EXEC);
	return 1;
}

/* PERF_RECORD_FORK and PERF_RECORD_EXIT */
static int decode_task(struct pd_file *f, const unsigned char *r, uint16_t size,
		       struct pd_event *ev, char *err, size_t errlen)
{
	if (size < 8 + 24)
		return truncated(f, ev, size, err, errlen);
	ev->task.pid = u32at(r + 8);
	ev->task.ppid = u32at(r + 12);
	ev->task.tid = u32at(r + 16);
	ev->task.ptid = u32at(r + 20);
	return 1;
}

static int decode_lost(struct pd_file *f, const unsigned char *r, uint16_t size,
		       struct pd_event *ev, char *err, size_t errlen)
{
	if (size < 8 + 16)
		return truncated(f, ev, size, err, errlen);
	ev->lost.id = u64at(r + 8);
	ev->lost.lost = u64at(r + 16);
	return 1;
}

/* the record an index entry names, decoded by its type */
static int decode(struct pd_file *f, const struct pd_index *ix, struct pd_event *ev,
		  char *err, size_t errlen)
{
	const unsigned char *r = f->data + ix->off;
	uint16_t size = u16at(r + 6);

	memset(ev, 0, sizeof(*ev));
	ev->type = u32at(r);
	ev->misc = u16at(r + 4);
	ev->offset = ix->off;
	ev->time = ix->time;
	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		return decode_sample(f, r, size, ev, err, errlen);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return decode_mmap(f, r, size, ev, err, errlen);
	case PERF_RECORD_COMM:
		return decode_comm(f, r, size, ev, err, errlen);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return decode_task(f, r, size, ev, err, errlen);
	case PERF_RECORD_LOST:
		return decode_lost(f, r, size, ev, err, errlen);
	default:                       /* type, misc, offset and time only */
		return 1;
	}
}

int pd_next(struct pd_file *f, struct pd_event *ev, char *err, size_t errlen)
{
	int ret;

	if (!f->indexed && (ret = pd_index(f, err, errlen)))
		return ret;
	if (f->next >= f->nindex)
		return 0;
	ret = decode(f, &f->index[f->next++], ev, err, errlen);
	/* counted once, however often pd_rewind hands it out again */
	if (ret == 1 && f->next > f->seen) {
		f->seen = f->next;
		if (ev->type == PERF_RECORD_LOST)
			f->lost += ev->lost.lost;
	}
	return ret;
}

void pd_rewind(struct pd_file *f)
{
	f->next = 0;
}
