/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf.data reader (layout: tools/perf/Documentation/perf.data-file-format.txt
 * in the Linux tree): the header, the attributes and the feature sections,
 * and in pipe mode the records that carry them.  Below read/pdrecords.c,
 * which indexes and decodes the records, and read/pdopen.c, which opens
 * a file with both.
 * Every length read from the file is checked against what is left of its
 * section, so a hostile or truncated file ends in one message naming the
 * offset.  doc/perfdata-reader.md says why it is built so.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pdfile.h"
#include "util.h"

#define PIPE_HEADER_SIZE   16
#define FILE_HEADER_SIZE   104
#define MAX_ATTR_SIZE      4096      /* perf_event_attr is 136 bytes today */
#define MAX_ATTRS          65536
#define MISC_BUILD_ID_SIZE (1u << 15)

int pd_file_fail(const char *path, char *err, size_t errlen, uint64_t off, const char *fmt, ...)
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
		return pd_file_fail(f->path, err, errlen, off, "more than %u event attributes", MAX_ATTRS);
	if (size < PERF_ATTR_SIZE_VER0 || size > MAX_ATTR_SIZE)
		return pd_file_fail(f->path, err, errlen, off, "event attribute of %zu bytes", size);
	if (rd_grow((void **)&f->attrs, &f->capattrs, f->nattrs + 1, sizeof(*a)))
		return -ENOMEM;
	a = &f->attrs[f->nattrs++];
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, p, size < sizeof(a->attr) ? size : sizeof(a->attr));
	return 0;
}

/*
 * n ids at p for a.  Every id takes 8 bytes of the file, and no two
 * attributes may share them: the ids of all attributes together are
 * checked against the file's size before anything is allocated, so
 * attributes that all point at one large id section end here instead of
 * taking the section's size times their number.
 */
static int add_ids(struct pd_file *f, struct pd_attr *a, const unsigned char *p, size_t n,
		   uint64_t off, char *err, size_t errlen)
{
	uint64_t *ids;

	if (n > (f->size - f->idbytes) / 8)
		return pd_file_fail(f->path, err, errlen, off, "the ids of the event attributes "
			    "take more than the %zu bytes of the file", f->size);
	f->idbytes += 8 * n;
	f->idmap_stale = 1;
	if (!n)
		return 0;
	ids = realloc(a->ids, (a->nids + n) * sizeof(*ids));
	if (!ids)
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

int pd_build_idmap(struct pd_file *f)
{
	size_t n = 0, i, j;

	f->idmap_stale = 0;
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
const struct pd_attr *pd_record_attr(const struct pd_file *f, uint32_t type,
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
uint64_t pd_record_time(const struct pd_file *f, uint32_t type, const unsigned char *r,
			size_t size)
{
	const struct pd_attr *a;
	uint64_t st, pos;

	if (type >= PD_HEADER_ATTR)
		return 0;
	a = pd_record_attr(f, type, r, size);
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
	return pd_file_fail(f->path, err, errlen, off, "feature section %d is malformed", feat);
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
			return pd_file_fail(f->path, err, errlen, off,
				    "truncated: the feature table ends early");
		so = u64at(f->data + off);
		ss = u64at(f->data + off + 8);
		if (so > f->size || ss > f->size - so)
			return pd_file_fail(f->path, err, errlen, off,
				    "feature section %d lies outside the file", feat);
		ret = read_feature(f, feat, f->data + so, ss);
		if (ret)
			return feature_err(f, ret, so, feat, err, errlen);
		off += 16;
	}
	return 0;
}

/* ---- pipe mode: what the header holds in a file comes as records */

int pd_header_record(struct pd_file *f, uint32_t type, const unsigned char *r, size_t size,
		     uint64_t off, char *err, size_t errlen)
{
	uint64_t feat, kind, id;
	uint32_t asz;
	int ret;

	switch (type) {
	case PD_HEADER_ATTR:
		if (size < 8 + PERF_ATTR_SIZE_VER0)
			return pd_file_fail(f->path, err, errlen, off, "truncated attribute record");
		asz = u32at(r + 8 + 4);       /* perf_event_attr.size */
		if (asz == 0)
			asz = PERF_ATTR_SIZE_VER0;
		if (asz > size - 8)
			return pd_file_fail(f->path, err, errlen, off, "attribute larger than its record");
		ret = add_attr(f, r + 8, asz, off, err, errlen);
		if (!ret)
			ret = add_ids(f, &f->attrs[f->nattrs - 1], r + 8 + asz, (size - 8 - asz) / 8,
				      off, err, errlen);
		return ret;
	case PD_HEADER_FEATURE:
		if (size < 16)
			return pd_file_fail(f->path, err, errlen, off, "truncated feature record");
		feat = u64at(r + 8);
		ret = feat < PD_FEAT_BITS ? read_feature(f, (int)feat, r + 16, size - 16) : 0;
		return ret ? feature_err(f, ret, off, (int)feat, err, errlen) : 0;
	case PD_HEADER_BUILD_ID:
		ret = read_build_ids(f, r, r + size);
		return ret ? feature_err(f, ret, off, PD_FEAT_BUILD_ID, err, errlen) : 0;
	case PD_EVENT_UPDATE:
		/* type 1 = the event's name: u64 type, u64 id, name */
		if (size < 24)
			return pd_file_fail(f->path, err, errlen, off, "truncated event update record");
		kind = u64at(r + 8);
		id = u64at(r + 16);
		if (kind == 1 && size > 24) {
			struct pd_attr *a;

			/* pd_index_records takes names in after the last
			 * attribute, so the map is built once */
			if (f->idmap_stale && (ret = pd_build_idmap(f)))
				return ret;
			a = (struct pd_attr *)attr_of_id(f, id);

			if (a && !a->name && !(a->name = strndup((const char *)r + 24, size - 24)))
				return -ENOMEM;
		}
		return 0;
	}
	return 0;
}

int pd_parse_header(struct pd_file *f, char *err, size_t errlen)
{
	uint64_t hsize, asz, aoff, alen, i;
	int ret;

	if (f->size < PIPE_HEADER_SIZE || memcmp(f->data, "PERFILE2", 8)) {
		if (f->size >= 8 && !memcmp(f->data, "2ELIFREP", 8))
			return pd_file_fail(f->path, err, errlen, 0,
				    "perf.data of the other byte order is not supported");
		if (f->size >= 8 && !memcmp(f->data, "PERFILE2", 8))
			return pd_file_fail(f->path, err, errlen, 0, "truncated: a header of %zu bytes",
				    f->size);
		return pd_file_fail(f->path, err, errlen, 0, f->size < 8 ? "truncated: no perf.data header"
			    : "not a perf.data file (no PERFILE2 magic)");
	}
	hsize = u64at(f->data + 8);
	if (hsize == PIPE_HEADER_SIZE) {
		f->pipe = 1;
		f->data_off = PIPE_HEADER_SIZE;
		f->data_end = f->size;
		return 0;       /* the attributes come in its records (pdopen.c) */
	}
	if (hsize < FILE_HEADER_SIZE || f->size < FILE_HEADER_SIZE)
		return pd_file_fail(f->path, err, errlen, 8, "truncated: header of %" PRIu64
			    " bytes in a file of %zu", hsize, f->size);
	asz = u64at(f->data + 16);
	aoff = u64at(f->data + 24);
	alen = u64at(f->data + 32);
	f->data_off = u64at(f->data + 40);
	f->data_end = u64at(f->data + 48);
	if (f->data_off > f->size || f->data_end > f->size - f->data_off)
		return pd_file_fail(f->path, err, errlen, 40, "truncated: the data section (%" PRIu64
			    " bytes at %" PRIu64 ") ends beyond the file (%zu bytes)",
			    f->data_end, f->data_off, f->size);
	f->data_end += f->data_off;
	if (asz < 16 + PERF_ATTR_SIZE_VER0 || asz > MAX_ATTR_SIZE + 16)
		return pd_file_fail(f->path, err, errlen, 16, "bad attribute size %" PRIu64, asz);
	if (aoff > f->size || alen > f->size - aoff)
		return pd_file_fail(f->path, err, errlen, 24, "the attribute section lies outside the file");
	for (i = 0; i + asz <= alen; i += asz) {
		const unsigned char *a = f->data + aoff + i;
		uint64_t io = u64at(a + asz - 16), is = u64at(a + asz - 8);

		ret = add_attr(f, a, asz - 16, aoff + i, err, errlen);
		if (ret)
			return ret;
		if (io > f->size || is > f->size - io)
			return pd_file_fail(f->path, err, errlen, aoff + i + asz - 16,
				    "the ids of an attribute lie outside the file");
		ret = add_ids(f, &f->attrs[f->nattrs - 1], f->data + io, is / 8,
			      aoff + i + asz - 16, err, errlen);
		if (ret)
			return ret;
	}
	if (!f->nattrs)
		return pd_file_fail(f->path, err, errlen, 24, "no event attributes");
	ret = pd_build_idmap(f);
	if (!ret)
		ret = read_features(f, f->data + 72, err, errlen);
	return ret;
}


size_t pd_data_size(const struct pd_file *f)
{
	return f->data_end - f->data_off;
}
