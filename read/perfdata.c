/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf.data reader (layout: tools/perf/Documentation/perf.data-file-format.txt
 * in the Linux tree).  The file is mapped whole; pd_open checks every
 * record's framing once and sorts one index of (time, offset) of all
 * records (index_records), which is what perf's ordered-events queue
 * amounts to for a whole file; pd_next takes the next entry and decodes its
 * record with the decoder of its type, without copying.  Every length read
 * from the file is checked against what is left of its record, so a
 * hostile or truncated file ends in one message naming the offset.
 * doc/perfdata-reader.md says why it is built so.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata.h"

#define PIPE_HEADER_SIZE   16
#define FILE_HEADER_SIZE   104
#define MAX_ATTR_SIZE      4096      /* perf_event_attr is 136 bytes today */
#define MAX_ATTRS          65536
#define MISC_BUILD_ID_SIZE (1u << 15)

struct pd_index {
	uint64_t time, off;
};

struct pd_idmap {
	uint64_t id;
	uint32_t attr;
};

struct pd_file {
	char                 *path;
	const unsigned char  *data;        /* the whole file */
	size_t                size;
	int                   mapped;
	int                   pipe;
	uint64_t              data_off, data_end;
	struct pd_attr       *attrs;
	size_t                nattrs;
	struct pd_idmap      *idmap;       /* sorted by id */
	size_t                nidmap;
	struct pd_build_id   *bids;
	size_t                nbids;
	char                 *cmdline;
	struct pd_index      *index;       /* every record, in the order pd_next hands them out */
	size_t                nindex, next;
	size_t                seen;        /* records handed out at least once */
	uint64_t              lost;
	int                   indexed;     /* index_records has run */
};

__attribute__((format(printf, 5, 6)))
static int fail(const char *path, char *err, size_t errlen, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, errlen, "%s: offset %" PRIu64 ": ", path, off);
	if (n < 0 || (size_t)n >= errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static inline uint64_t u64at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t u32at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint16_t u16at(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

const char *pd_path(const struct pd_file *f) { return f->path; }
size_t pd_nattrs(const struct pd_file *f) { return f->nattrs; }
const struct pd_attr *pd_attr(const struct pd_file *f, size_t i) { return &f->attrs[i]; }
size_t pd_nbuild_ids(const struct pd_file *f) { return f->nbids; }
const struct pd_build_id *pd_build_id(const struct pd_file *f, size_t i) { return &f->bids[i]; }
const char *pd_cmdline(const struct pd_file *f) { return f->cmdline; }
int pd_pipe_mode(const struct pd_file *f) { return f->pipe; }
uint64_t pd_lost(const struct pd_file *f) { return f->lost; }

void pd_close(struct pd_file *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nattrs; i++) {
		free(f->attrs[i].name);
		free(f->attrs[i].ids);
	}
	for (i = 0; i < f->nbids; i++)
		free(f->bids[i].path);
	free(f->attrs);
	free(f->idmap);
	free(f->bids);
	free(f->cmdline);
	free(f->index);
	if (f->mapped)
		munmap((void *)f->data, f->size);
	else
		free((void *)f->data);
	free(f->path);
	free(f);
}

/* ---- attributes and the ids that point at them */

static int add_attr(struct pd_file *f, const unsigned char *p, size_t size, uint64_t off,
		    char *err, size_t errlen)
{
	struct pd_attr *a;

	if (f->nattrs >= MAX_ATTRS)
		return fail(f->path, err, errlen, off, "more than %u event attributes", MAX_ATTRS);
	if (size < PERF_ATTR_SIZE_VER0 || size > MAX_ATTR_SIZE)
		return fail(f->path, err, errlen, off, "event attribute of %zu bytes", size);
	a = realloc(f->attrs, (f->nattrs + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	f->attrs = a;
	a += f->nattrs++;
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, p, size < sizeof(a->attr) ? size : sizeof(a->attr));
	return 0;
}

static int add_ids(struct pd_file *f, struct pd_attr *a, const unsigned char *p, size_t n)
{
	uint64_t *ids = realloc(a->ids, (a->nids + n) * sizeof(*ids));

	if (n && !ids)
		return -ENOMEM;
	a->ids = ids;
	for (size_t i = 0; i < n; i++)
		ids[a->nids + i] = u64at(p + 8 * i);
	a->nids += n;
	return 0;
}

static int by_id(const void *x, const void *y)
{
	const struct pd_idmap *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

static int build_idmap(struct pd_file *f)
{
	size_t n = 0, i, j;

	free(f->idmap);
	f->idmap = NULL;
	f->nidmap = 0;
	for (i = 0; i < f->nattrs; i++)
		n += f->attrs[i].nids;
	if (!n)
		return 0;
	f->idmap = malloc(n * sizeof(*f->idmap));
	if (!f->idmap)
		return -ENOMEM;
	for (i = 0; i < f->nattrs; i++)
		for (j = 0; j < f->attrs[i].nids; j++)
			f->idmap[f->nidmap++] = (struct pd_idmap){ f->attrs[i].ids[j], (uint32_t)i };
	qsort(f->idmap, f->nidmap, sizeof(*f->idmap), by_id);
	return 0;
}

static const struct pd_attr *attr_of_id(const struct pd_file *f, uint64_t id)
{
	struct pd_idmap key = { id, 0 }, *m;

	m = bsearch(&key, f->idmap, f->nidmap, sizeof(*f->idmap), by_id);
	return m ? &f->attrs[m->attr] : NULL;
}

/*
 * The attribute a record belongs to.  With one event there is no choice;
 * otherwise the record carries an id where the first event's sample_type
 * puts it (perf requires every event to agree on that position).
 */
static const struct pd_attr *record_attr(const struct pd_file *f, uint32_t type,
					 const unsigned char *r, size_t size)
{
	uint64_t st, pos;

	if (f->nattrs == 0)
		return NULL;
	if (f->nattrs == 1)
		return &f->attrs[0];
	st = f->attrs[0].attr.sample_type;
	if (type == PERF_RECORD_SAMPLE) {
		if (st & PERF_SAMPLE_IDENTIFIER)
			pos = 8;
		else if (st & PERF_SAMPLE_ID)
			pos = 8 + 8 * (!!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
				       !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR));
		else
			return &f->attrs[0];
	} else {
		if (!f->attrs[0].attr.sample_id_all)
			return &f->attrs[0];
		if (st & PERF_SAMPLE_IDENTIFIER)
			pos = 8;
		else if (st & PERF_SAMPLE_ID)
			pos = 8 * (1 + !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU));
		else
			return &f->attrs[0];
		if (pos > size - 8)
			return NULL;
		pos = size - pos;
	}
	if (pos + 8 > size)
		return NULL;
	return attr_of_id(f, u64at(r + pos));
}

/* time of a record from its sample fields or its sample_id trailer; 0 if none */
static uint64_t record_time(const struct pd_file *f, uint32_t type,
			    const unsigned char *r, size_t size)
{
	const struct pd_attr *a;
	uint64_t st, pos;

	if (type >= PD_HEADER_ATTR)
		return 0;
	a = record_attr(f, type, r, size);
	if (!a)
		return 0;
	st = a->attr.sample_type;
	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	if (type == PERF_RECORD_SAMPLE) {
		pos = 8 + 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
			       !!(st & PERF_SAMPLE_TID));
	} else {
		if (!a->attr.sample_id_all)
			return 0;
		pos = 8 * (1 + !!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_CPU) +
			   !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_ID));
		if (pos > size - 8)
			return 0;
		pos = size - pos;
	}
	return pos + 8 <= size ? u64at(r + pos) : 0;
}

/* ---- feature sections */

/* perf's strings: u32 length (NUL padding included), then the bytes */
static int get_string(const unsigned char **p, const unsigned char *end, char **out)
{
	uint32_t len;

	if (end - *p < 4)
		return -1;
	len = u32at(*p);
	*p += 4;
	if ((size_t)(end - *p) < len)
		return -1;
	*out = strndup((const char *)*p, len);
	*p += len;
	return *out ? 0 : -2;
}

static int read_cmdline(struct pd_file *f, const unsigned char *p, const unsigned char *end)
{
	uint32_t nr, i;
	size_t len = 0;
	char *s, *all = NULL;
	int ret;

	if (end - p < 4)
		return -1;
	nr = u32at(p);
	p += 4;
	for (i = 0; i < nr; i++) {
		char *n;

		ret = get_string(&p, end, &s);
		if (ret) {
			free(all);
			return ret;
		}
		n = realloc(all, len + strlen(s) + 2);
		if (!n) {
			free(s);
			free(all);
			return -2;
		}
		all = n;
		len += sprintf(all + len, "%s%s", i ? " " : "", s);
		free(s);
	}
	free(f->cmdline);
	f->cmdline = all;
	return 0;
}

static int read_event_desc(struct pd_file *f, const unsigned char *p, const unsigned char *end)
{
	uint32_t nr, asz, i, nids;
	char *name;
	int ret;

	if (end - p < 8)
		return -1;
	nr = u32at(p);
	asz = u32at(p + 4);
	p += 8;
	for (i = 0; i < nr; i++) {
		if ((size_t)(end - p) < (size_t)asz + 4)
			return -1;
		p += asz;
		nids = u32at(p);
		p += 4;
		ret = get_string(&p, end, &name);
		if (ret)
			return ret;
		if ((size_t)(end - p) / 8 < nids) {
			free(name);
			return -1;
		}
		p += 8 * (size_t)nids;
		/* descriptions come in the order of the attributes */
		if (i < f->nattrs && !f->attrs[i].name)
			f->attrs[i].name = name;
		else
			free(name);
	}
	return 0;
}

/* build_id_event records: header, pid, build_id[24], filename */
static int read_build_ids(struct pd_file *f, const unsigned char *p, const unsigned char *end)
{
	while (end - p >= 8) {
		uint16_t misc = u16at(p + 4), size = u16at(p + 6);
		struct pd_build_id *b;

		if (size < 8 + 4 + 24 + 1 || size > end - p)
			return -1;
		if (!memchr(p + 36, 0, size - 36))
			return -1;
		b = realloc(f->bids, (f->nbids + 1) * sizeof(*b));
		if (!b)
			return -2;
		f->bids = b;
		b += f->nbids;
		memset(b, 0, sizeof(*b));
		memcpy(&b->pid, p + 8, 4);
		memcpy(b->id, p + 12, 20);
		b->size = (misc & MISC_BUILD_ID_SIZE) && p[32] <= 20 ? p[32] : 20;
		b->path = strdup((const char *)p + 36);
		if (!b->path)
			return -2;
		f->nbids++;
		p += size;
	}
	return 0;
}

static int read_feature(struct pd_file *f, int feat, const unsigned char *p, size_t n)
{
	switch (feat) {
	case PD_FEAT_BUILD_ID:
		return read_build_ids(f, p, p + n);
	case PD_FEAT_CMDLINE:
		return read_cmdline(f, p, p + n);
	case PD_FEAT_EVENT_DESC:
		return read_event_desc(f, p, p + n);
	}
	return 0;
}

static int feature_err(struct pd_file *f, int ret, uint64_t off, int feat, char *err,
		       size_t errlen)
{
	if (ret == -2)
		return -ENOMEM;
	return fail(f->path, err, errlen, off, "feature section %d is malformed", feat);
}

static int read_features(struct pd_file *f, const unsigned char *bits, char *err, size_t errlen)
{
	uint64_t off = f->data_end;
	int feat, ret;

	for (feat = 0; feat < PD_FEAT_BITS; feat++) {
		uint64_t so, ss;

		if (!(bits[feat / 8] & (1u << (feat % 8))))
			continue;
		if (off > f->size || f->size - off < 16)
			return fail(f->path, err, errlen, off,
				    "truncated: the feature table ends early");
		so = u64at(f->data + off);
		ss = u64at(f->data + off + 8);
		if (so > f->size || ss > f->size - so)
			return fail(f->path, err, errlen, off,
				    "feature section %d lies outside the file", feat);
		ret = read_feature(f, feat, f->data + so, ss);
		if (ret)
			return feature_err(f, ret, so, feat, err, errlen);
		off += 16;
	}
	return 0;
}

/* ---- pipe mode: what the header holds in a file comes as records */

static int header_record(struct pd_file *f, uint32_t type, const unsigned char *r, size_t size,
			 uint64_t off, char *err, size_t errlen)
{
	uint64_t feat, kind, id;
	uint32_t asz;
	int ret;

	switch (type) {
	case PD_HEADER_ATTR:
		if (size < 8 + PERF_ATTR_SIZE_VER0)
			return fail(f->path, err, errlen, off, "truncated attribute record");
		asz = u32at(r + 8 + 4);       /* perf_event_attr.size */
		if (asz == 0)
			asz = PERF_ATTR_SIZE_VER0;
		if (asz > size - 8)
			return fail(f->path, err, errlen, off, "attribute larger than its record");
		ret = add_attr(f, r + 8, asz, off, err, errlen);
		if (!ret)
			ret = add_ids(f, &f->attrs[f->nattrs - 1], r + 8 + asz, (size - 8 - asz) / 8);
		return ret ? ret : build_idmap(f);
	case PD_HEADER_FEATURE:
		if (size < 16)
			return fail(f->path, err, errlen, off, "truncated feature record");
		feat = u64at(r + 8);
		ret = feat < PD_FEAT_BITS ? read_feature(f, (int)feat, r + 16, size - 16) : 0;
		return ret ? feature_err(f, ret, off, (int)feat, err, errlen) : 0;
	case PD_HEADER_BUILD_ID:
		ret = read_build_ids(f, r, r + size);
		return ret ? feature_err(f, ret, off, PD_FEAT_BUILD_ID, err, errlen) : 0;
	case PD_EVENT_UPDATE:
		/* type 1 = the event's name: u64 type, u64 id, name */
		if (size < 24)
			return fail(f->path, err, errlen, off, "truncated event update record");
		kind = u64at(r + 8);
		id = u64at(r + 16);
		if (kind == 1 && size > 24) {
			struct pd_attr *a = (struct pd_attr *)attr_of_id(f, id);

			if (a && !a->name && !(a->name = strndup((const char *)r + 24, size - 24)))
				return -ENOMEM;
		}
		return 0;
	}
	return 0;
}

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
		uint64_t t = record_time(f, u32at(r), r, u16at(r + 6));

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
		return fail(f->path, err, errlen, off, "truncated record header");
	type = u32at(r);
	size = u16at(r + 6);
	/* kernel records come in 8-byte units; perf's own may not (pipe mode) */
	if (size < 8 || (type < PD_HEADER_ATTR && size % 8))
		return fail(f->path, err, errlen, off, "record of type %" PRIu32
			    " has a bad size %u", type, size);
	if (size > f->data_end - off)
		return fail(f->path, err, errlen, off,
			    "truncated: record of %u bytes, %" PRIu64 " left", size,
			    f->data_end - off);
	if (type == PD_COMPRESSED)
		return fail(f->path, err, errlen, off, "compressed records (perf record -z) "
			    "are not supported: decompress with perf inject -i IN -o OUT");
	if (type == PD_AUXTRACE) {     /* its payload follows the record */
		if (size < 16)
			return fail(f->path, err, errlen, off, "truncated auxtrace record");
		*extra = u64at(r + 8);
		if (*extra > f->data_end - off - size)
			return fail(f->path, err, errlen, off,
				    "auxtrace data beyond the end of the data");
	}
	return 0;
}

/*
 * One pass over the data section: every record's framing checked, perf's
 * header records taken in (pipe mode), the others indexed with their
 * times, then the index sorted.  In pipe mode the attributes that give
 * records their times are themselves records, so times are read after
 * the pass.
 */
static int index_records(struct pd_file *f, char *err, size_t errlen)
{
	uint64_t off = f->data_off, extra, last = 0;
	size_t cap = 0;
	int ret;

	free(f->index);
	f->index = NULL;
	f->nindex = f->next = f->seen = 0;
	while (off < f->data_end) {
		const unsigned char *r = f->data + off;
		uint32_t type;
		uint16_t size;

		ret = check_frame(f, off, &extra, err, errlen);
		if (ret)
			return ret;
		type = u32at(r);
		size = u16at(r + 6);
		if (type >= PD_HEADER_ATTR) {
			ret = header_record(f, type, r, size, off, err, errlen);
		} else {
			ret = index_add(f, &cap, off);
			if (!ret && !f->pipe) {
				uint64_t t = record_time(f, type, r, size);

				f->index[f->nindex - 1].time = last = t ? t : last;
			}
		}
		if (ret)
			return ret;
		off += size + extra;
	}
	if (f->pipe)
		index_times(f);
	ret = sort_index(f);
	f->indexed = !ret;
	return ret;
}

static int parse_layout(struct pd_file *f, char *err, size_t errlen)
{
	uint64_t hsize, asz, aoff, alen, i;
	int ret;

	if (f->size < PIPE_HEADER_SIZE || memcmp(f->data, "PERFILE2", 8)) {
		if (f->size >= 8 && !memcmp(f->data, "2ELIFREP", 8))
			return fail(f->path, err, errlen, 0,
				    "perf.data of the other byte order is not supported");
		if (f->size >= 8 && !memcmp(f->data, "PERFILE2", 8))
			return fail(f->path, err, errlen, 0, "truncated: a header of %zu bytes",
				    f->size);
		return fail(f->path, err, errlen, 0, f->size < 8 ? "truncated: no perf.data header"
			    : "not a perf.data file (no PERFILE2 magic)");
	}
	hsize = u64at(f->data + 8);
	if (hsize == PIPE_HEADER_SIZE) {
		f->pipe = 1;
		f->data_off = PIPE_HEADER_SIZE;
		f->data_end = f->size;
		return index_records(f, err, errlen);
	}
	if (hsize < FILE_HEADER_SIZE || f->size < FILE_HEADER_SIZE)
		return fail(f->path, err, errlen, 8, "truncated: header of %" PRIu64
			    " bytes in a file of %zu", hsize, f->size);
	asz = u64at(f->data + 16);
	aoff = u64at(f->data + 24);
	alen = u64at(f->data + 32);
	f->data_off = u64at(f->data + 40);
	f->data_end = u64at(f->data + 48);
	if (f->data_off > f->size || f->data_end > f->size - f->data_off)
		return fail(f->path, err, errlen, 40, "truncated: the data section (%" PRIu64
			    " bytes at %" PRIu64 ") ends beyond the file (%zu bytes)",
			    f->data_end, f->data_off, f->size);
	f->data_end += f->data_off;
	if (asz < 16 + PERF_ATTR_SIZE_VER0 || asz > MAX_ATTR_SIZE + 16)
		return fail(f->path, err, errlen, 16, "bad attribute size %" PRIu64, asz);
	if (aoff > f->size || alen > f->size - aoff)
		return fail(f->path, err, errlen, 24, "the attribute section lies outside the file");
	for (i = 0; i + asz <= alen; i += asz) {
		const unsigned char *a = f->data + aoff + i;
		uint64_t io = u64at(a + asz - 16), is = u64at(a + asz - 8);

		ret = add_attr(f, a, asz - 16, aoff + i, err, errlen);
		if (ret)
			return ret;
		if (io > f->size || is > f->size - io)
			return fail(f->path, err, errlen, aoff + i + asz - 16,
				    "the ids of an attribute lie outside the file");
		ret = add_ids(f, &f->attrs[f->nattrs - 1], f->data + io, is / 8);
		if (ret)
			return ret;
	}
	if (!f->nattrs)
		return fail(f->path, err, errlen, 24, "no event attributes");
	ret = build_idmap(f);
	if (!ret)
		ret = read_features(f, f->data + 72, err, errlen);
	return ret;
}

int pd_index(struct pd_file *f, char *err, size_t errlen)
{
	int ret = f->indexed ? 0 : index_records(f, err, errlen);

	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", f->path);
	return ret;
}

/*
 * An event without a recorded name is named from its type and config as
 * perf names it (evsel__name), for the common events at least.
 */
static int name_attrs(struct pd_file *f)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branch-instructions", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles",
	};
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
		"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
		"bpf-output", "cgroup-switches",
	};
	size_t i;

	for (i = 0; i < f->nattrs; i++) {
		struct pd_attr *a = &f->attrs[i];
		const char *n = NULL;
		char buf[64];

		if (a->name)
			continue;
		if (a->attr.type == PERF_TYPE_HARDWARE && a->attr.config < 10)
			n = hw[a->attr.config];
		else if (a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config < 12)
			n = sw[a->attr.config];
		if (!n) {
			snprintf(buf, sizeof(buf), "raw-%u-0x%llx", a->attr.type,
				 (unsigned long long)a->attr.config);
			n = buf;
		}
		a->name = strdup(n);
		if (!a->name)
			return -ENOMEM;
	}
	return 0;
}

static int finish_open(struct pd_file *f, struct pd_file **out, int index, char *err,
		       size_t errlen)
{
	int ret = parse_layout(f, err, errlen);

	if (!ret)
		ret = name_attrs(f);
	if (!ret && index && !f->indexed)
		ret = index_records(f, err, errlen);

	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", f->path);
	if (ret) {
		pd_close(f);
		return ret;
	}
	if (f->nattrs == 0) {
		ret = fail(f->path, err, errlen, f->size, "no event attributes");
		pd_close(f);
		return ret;
	}
	*out = f;
	return 0;
}

int pd_open_mem(struct pd_file **out, const void *data, size_t len, const char *name,
		char *err, size_t errlen)
{
	struct pd_file *f = calloc(1, sizeof(*f));
	void *copy = malloc(len ? len : 1);

	if (!f || !copy || !(f->path = strdup(name))) {
		free(copy);
		free(f);
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	memcpy(copy, data, len);
	f->data = copy;
	f->size = len;
	return finish_open(f, out, 1, err, errlen);
}

/* a pipe or standard input: read to the end, after head */
static int slurp(int fd, const void *head, size_t headlen, unsigned char **data, size_t *size)
{
	size_t cap = 1 << 20, n = headlen;
	unsigned char *b;

	while (cap < headlen)
		cap *= 2;
	b = malloc(cap);
	if (!b)
		return -ENOMEM;
	if (headlen)
		memcpy(b, head, headlen);
	for (;;) {
		ssize_t r;

		if (n == cap) {
			unsigned char *nb = realloc(b, cap *= 2);

			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(b);
			return -e;
		}
		if (r == 0)
			break;
		n += r;
	}
	*data = b;
	*size = n;
	return 0;
}

int pd_open_stream(struct pd_file **out, int fd, const void *head, size_t headlen,
		   const char *name, char *err, size_t errlen)
{
	struct pd_file *f = calloc(1, sizeof(*f));
	unsigned char *d = NULL;
	int ret;

	if (!f || !(f->path = strdup(name))) {
		free(f);
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	ret = slurp(fd, head, headlen, &d, &f->size);
	if (ret) {
		snprintf(err, errlen, "%s: %s", name, strerror(-ret));
		pd_close(f);
		return ret;
	}
	f->data = d;
	return finish_open(f, out, 1, err, errlen);
}

static int open_path(struct pd_file **out, const char *path, int index, char *err,
		     size_t errlen)
{
	struct pd_file *f = calloc(1, sizeof(*f));
	struct stat st;
	int fd = -1, ret;

	if (!f || !(f->path = strdup(path))) {
		free(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out_err;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		/* every page is read: fault them in at once */
		void *m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);

		if (m == MAP_FAILED) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out_err;
		}
		madvise(m, st.st_size, MADV_WILLNEED);
		f->data = m;
		f->size = st.st_size;
		f->mapped = 1;
	} else {
		unsigned char *d = NULL;

		ret = slurp(fd, NULL, 0, &d, &f->size);
		if (ret) {
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
			goto out_err;
		}
		f->data = d;
	}
	if (fd > 0)
		close(fd);
	return finish_open(f, out, index, err, errlen);
out_err:
	if (fd > 0)
		close(fd);
	pd_close(f);
	return ret;
}

int pd_open(struct pd_file **out, const char *path, char *err, size_t errlen)
{
	return open_path(out, path, 1, err, errlen);
}

int pd_open_unindexed(struct pd_file **out, const char *path, char *err, size_t errlen)
{
	return open_path(out, path, 0, err, errlen);
}

size_t pd_data_size(const struct pd_file *f)
{
	return f->data_end - f->data_off;
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
	return fail(f->path, err, errlen, ev->offset, "truncated record of type %" PRIu32
		    " (%u bytes)", ev->type, size);
}

static int decode_sample(struct pd_file *f, const unsigned char *r, uint16_t size,
			 struct pd_event *ev, char *err, size_t errlen)
{
	const struct pd_attr *a = record_attr(f, ev->type, r, size);
	struct cursor c = { r + 8, r + size };

	if (!a)
		return fail(f->path, err, errlen, ev->offset, "sample of an unknown event id");
	if (parse_sample(a, &c, &ev->sample))
		return fail(f->path, err, errlen, ev->offset,
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
		return fail(f->path, err, errlen, ev->offset, "file name of a map not terminated");
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
		return fail(f->path, err, errlen, ev->offset, "command name not terminated");
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
