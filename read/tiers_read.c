/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reader of jit-<pid>.tiers (read/tiers_read.h). */
#include "config.h"

#include <byteswap.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiers_read.h"
#include "util.h"

#define MAX_FILE ((size_t)1 << 32)      /* 4 GiB: more is not a tiers file */

struct tr_file {
	unsigned char             *data;
	size_t                     size, pos;
	int                        swapped;
	struct jptiers_file_header hdr;
	char                       path[];
};

static uint32_t u32(const struct tr_file *f, const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return f->swapped ? bswap_32(v) : v;
}

static uint64_t u64(const struct tr_file *f, const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return f->swapped ? bswap_64(v) : v;
}

int tr_is_tiers(const void *head, size_t len)
{
	uint32_t m;

	if (len < sizeof(m))
		return 0;
	memcpy(&m, head, sizeof(m));
	return m == JPTIERS_MAGIC || m == JPTIERS_MAGIC_SWAPPED;
}

/* The header, checked; f->data holds the file. */
static int read_header(struct tr_file *f, char *errbuf, size_t errlen)
{
	const unsigned char *p = f->data;
	struct jptiers_file_header *h = &f->hdr;

	if (!tr_is_tiers(p, f->size)) {
		snprintf(errbuf, errlen, "%s: not a tiers file (bad magic)", f->path);
		return -EINVAL;
	}
	memcpy(&h->magic, p, sizeof(h->magic));
	f->swapped = h->magic == JPTIERS_MAGIC_SWAPPED;
	if (f->size < 16) {
		snprintf(errbuf, errlen, "%s: header cut short at offset %zu", f->path, f->size);
		return -EINVAL;
	}
	h->magic = JPTIERS_MAGIC;
	h->version = u32(f, p + 4);
	h->header_size = u32(f, p + 8);
	h->pid = u32(f, p + 12);
	if (h->version == 0 || h->version > JPTIERS_VERSION) {
		snprintf(errbuf, errlen, "%s: tiers version %" PRIu32 " (this reader knows 1 to %u)",
			 f->path, h->version, JPTIERS_VERSION);
		return h->version ? -EOPNOTSUPP : -EINVAL;
	}
	if (h->header_size < sizeof(*h) || h->header_size % 8 || h->header_size > f->size) {
		snprintf(errbuf, errlen, "%s: header_size %" PRIu32 " at offset 8 (file of %zu bytes)",
			 f->path, h->header_size, f->size);
		return -EINVAL;
	}
	h->timestamp = u64(f, p + 16);
	h->clock = u32(f, p + 24);
	h->flags = u32(f, p + 28);
	h->reserved = u64(f, p + 32);
	f->pos = h->header_size;
	return 0;
}

/* As tr_open, from a buffer (copied); name is used in messages. */
static int open_mem(struct tr_file **out, const void *data, size_t len, const char *name,
		    char *errbuf, size_t errlen)
{
	struct tr_file *f;
	int err;

	*out = NULL;
	f = calloc(1, sizeof(*f) + strlen(name) + 1);
	if (!f || !(f->data = malloc(len ? len : 1))) {
		free(f);
		snprintf(errbuf, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	strcpy(f->path, name);
	memcpy(f->data, data, len);
	f->size = len;
	err = read_header(f, errbuf, errlen);
	if (err) {
		tr_close(f);
		return err;
	}
	*out = f;
	return 0;
}

int tr_open(struct tr_file **out, const char *path, char *errbuf, size_t errlen)
{
	unsigned char *data;
	size_t size;
	int err;

	*out = NULL;
	err = rd_slurp_path(path, MAX_FILE, &data, &size);
	if (err) {
		snprintf(errbuf, errlen, "%s: %s", path, strerror(-err));
		return err;
	}
	err = open_mem(out, data, size, path, errbuf, errlen);
	free(data);
	return err;
}

void tr_close(struct tr_file *f)
{
	if (!f)
		return;
	free(f->data);
	free(f);
}

const struct jptiers_file_header *tr_header(const struct tr_file *f)
{
	return &f->hdr;
}

int tr_swapped(const struct tr_file *f)
{
	return f->swapped;
}

const char *tr_type_name(uint32_t type)
{
	static const char *const names[JPTIERS_TYPE_MAX] = {
		[JPTIERS_TIER_NAME] = "TIER_NAME",
		[JPTIERS_TIER_REQUEST] = "TIER_REQUEST",
		[JPTIERS_COMPILE_BEGIN] = "COMPILE_BEGIN",
		[JPTIERS_COMPILE_END] = "COMPILE_END",
		[JPTIERS_INSTALL] = "INSTALL",
		[JPTIERS_CLOSE] = "CLOSE",
	};

	return type < JPTIERS_TYPE_MAX ? names[type] : NULL;
}

/* The fixed part each known type has at least (header included). */
static size_t fixed_size(uint32_t type)
{
	switch (type) {
	case JPTIERS_TIER_NAME:     return sizeof(struct jptiers_tier_name);
	case JPTIERS_TIER_REQUEST:  return sizeof(struct jptiers_tier_request);
	case JPTIERS_COMPILE_BEGIN: return sizeof(struct jptiers_compile_begin);
	case JPTIERS_COMPILE_END:   return sizeof(struct jptiers_compile_end);
	case JPTIERS_INSTALL:       return sizeof(struct jptiers_install);
	default:                    return sizeof(struct jptiers_record_header);
	}
}

static int bad(const struct tr_file *f, uint64_t off, char *errbuf, size_t errlen,
	       const char *what)
{
	snprintf(errbuf, errlen, "%s: record at offset %" PRIu64 ": %s", f->path, off, what);
	return -EBADMSG;
}

/* The string after a record's fixed part: NUL-terminated inside the record. */
static const char *text_at(const unsigned char *p, size_t from, size_t size)
{
	return memchr(p + from, 0, size - from) ? (const char *)p + from : NULL;
}

int tr_next(struct tr_file *f, struct tr_record *rec, char *errbuf, size_t errlen)
{
	const unsigned char *p = f->data + f->pos;
	size_t left = f->size - f->pos, fixed;

	memset(rec, 0, sizeof(*rec));
	if (!left)
		return 0;
	rec->offset = f->pos;
	if (left < sizeof(struct jptiers_record_header))
		return bad(f, rec->offset, errbuf, errlen, "cut short in its header");
	rec->type = u32(f, p);
	rec->size = u32(f, p + 4);
	rec->timestamp = u64(f, p + 8);
	fixed = fixed_size(rec->type);
	if (rec->size % 8 || rec->size < fixed) {
		char what[96];

		snprintf(what, sizeof(what), "size %" PRIu32 " (type %" PRIu32 ")", rec->size,
			 rec->type);
		return bad(f, rec->offset, errbuf, errlen, what);
	}
	if (rec->size > left)
		return bad(f, rec->offset, errbuf, errlen, "cut short (size past the end of the file)");
	switch (rec->type) {
	case JPTIERS_TIER_NAME:
		rec->tier = u32(f, p + 16);
		rec->text = text_at(p, fixed, rec->size);
		break;
	case JPTIERS_TIER_REQUEST:
		rec->tier = u32(f, p + 16);
		rec->tid = u32(f, p + 20);
		rec->text = text_at(p, fixed, rec->size);
		break;
	case JPTIERS_COMPILE_BEGIN:
		rec->id = u64(f, p + 16);
		rec->parent = u64(f, p + 24);
		rec->tier = u32(f, p + 32);
		rec->tid = u32(f, p + 36);
		rec->text = text_at(p, fixed, rec->size);
		break;
	case JPTIERS_COMPILE_END:
		rec->id = u64(f, p + 16);
		rec->status = (int32_t)u32(f, p + 24);
		rec->tid = u32(f, p + 28);
		break;
	case JPTIERS_INSTALL:
		rec->compile = u64(f, p + 16);
		rec->code_index = u64(f, p + 24);
		rec->code_addr = u64(f, p + 32);
		rec->code_size = u64(f, p + 40);
		rec->tid = u32(f, p + 48);
		break;
	default:
		break;
	}
	if ((rec->type == JPTIERS_TIER_NAME || rec->type == JPTIERS_TIER_REQUEST ||
	     rec->type == JPTIERS_COMPILE_BEGIN) && !rec->text)
		return bad(f, rec->offset, errbuf, errlen, "its name has no NUL");
	f->pos += rec->size;
	return 1;
}
