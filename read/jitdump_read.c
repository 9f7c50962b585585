/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader of jitdump files (read/jitdump_read.h).
 *
 * The file is mapped read-only, and only a regular file is opened: a FIFO
 * at a jitdump's name gets one line, never a read that waits forever.
 * Every field is bounds-checked against what is really there: a record's
 * total_size is never trusted beyond the end of the file, and nothing is
 * allocated from a size taken out of the file.  Memory follows the
 * records read, not the file's size: a page of the mapping is touched only
 * when a record on it is read.
 */
#include "config.h"

#include <byteswap.h>
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

#include "jitdump_read.h"
#include "util.h"

/* Largest jitdump read: far above any real one, low enough to fail cleanly. */
#define JD_MAX_FILE ((uint64_t)4 << 30)

struct jd_file {
	char                      *path;
	unsigned char             *data;
	size_t                     size;
	int                        mapped;   /* data is a mapping of the file */
	size_t                     pos;      /* offset of the next record */
	int                        swapped;
	int                        stuck;    /* framing error: cannot go on */
	struct jitdump_file_header hdr;      /* host order */
};

static void seterr(char *errbuf, size_t errlen, const char *path, uint64_t off,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void seterr(char *errbuf, size_t errlen, const char *path, uint64_t off,
		   const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!errbuf || !errlen)
		return;
	n = snprintf(errbuf, errlen, "%s: offset %" PRIu64 ": ", path, off);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf + n, errlen - n, fmt, ap);
	va_end(ap);
}

static uint32_t get32(const struct jd_file *f, const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return f->swapped ? bswap_32(v) : v;
}

static uint64_t get64(const struct jd_file *f, const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return f->swapped ? bswap_64(v) : v;
}

static int parse_header(struct jd_file *f, char *errbuf, size_t errlen)
{
	const unsigned char *p = f->data;
	uint32_t magic;

	if (f->size < 4) {
		seterr(errbuf, errlen, f->path, 0, "file too short for a jitdump header "
		       "(%zu bytes, need %zu)", f->size, sizeof(f->hdr));
		return -EBADMSG;
	}
	memcpy(&magic, p, 4);
	if (magic == JITDUMP_MAGIC_SWAPPED)
		f->swapped = 1;
	else if (magic != JITDUMP_MAGIC) {
		seterr(errbuf, errlen, f->path, 0, "bad magic 0x%08" PRIx32
		       " (expected 0x%08x \"JiTD\"): not a jitdump", magic, JITDUMP_MAGIC);
		return -EBADMSG;
	}
	if (f->size < sizeof(f->hdr)) {
		seterr(errbuf, errlen, f->path, f->size, "jitdump header truncated "
		       "(%zu bytes, need %zu)", f->size, sizeof(f->hdr));
		return -EBADMSG;
	}
	f->hdr.magic = JITDUMP_MAGIC;
	f->hdr.version = get32(f, p + 4);
	f->hdr.total_size = get32(f, p + 8);
	f->hdr.elf_mach = get32(f, p + 12);
	f->hdr.pad1 = get32(f, p + 16);
	f->hdr.pid = get32(f, p + 20);
	f->hdr.timestamp = get64(f, p + 24);
	f->hdr.flags = get64(f, p + 32);
	/*
	 * Records follow the header's declared size when it is plausible (the
	 * spec lets the header grow); perf itself always reads them at 40,
	 * which `jitperf dump --check` reports.
	 */
	f->pos = sizeof(f->hdr);
	if (f->hdr.total_size > sizeof(f->hdr)) {
		if (f->hdr.total_size > f->size) {
			seterr(errbuf, errlen, f->path, 8, "header total_size %" PRIu32
			       " is beyond the end of the file (%zu bytes)",
			       f->hdr.total_size, f->size);
			return -EBADMSG;
		}
		f->pos = f->hdr.total_size;
	}
	return 0;
}

static int jd_setup(struct jd_file *f, char *errbuf, size_t errlen)
{
	return parse_header(f, errbuf, errlen);
}

int jd_open(struct jd_file **out, const char *path, char *errbuf, size_t errlen)
{
	struct jd_file *f;
	struct stat st;
	int err, fd;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		seterr(errbuf, errlen, path, 0, "out of memory");
		return -ENOMEM;
	}
	fd = rd_open_regular(path, JD_MAX_FILE, &st);
	if (fd < 0) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: %s", path, rd_strerror(fd));
		jd_close(f);
		return fd;
	}
	f->size = (size_t)st.st_size;
	if (f->size) {
		void *m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (m == MAP_FAILED) {
			err = -errno;
			if (errbuf && errlen)
				snprintf(errbuf, errlen, "%s: %s", path, strerror(-err));
			close(fd);
			jd_close(f);
			return err;
		}
		f->data = m;
		f->mapped = 1;
	} else if (!(f->data = malloc(1))) {
		close(fd);
		jd_close(f);
		seterr(errbuf, errlen, path, 0, "out of memory");
		return -ENOMEM;
	}
	close(fd);
	err = jd_setup(f, errbuf, errlen);
	if (err) {
		jd_close(f);
		return err;
	}
	*out = f;
	return 0;
}

int jd_open_mem(struct jd_file **out, const void *data, size_t len, const char *name,
		char *errbuf, size_t errlen)
{
	struct jd_file *f;
	int err;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(name)) || !(f->data = malloc(len ? len : 1))) {
		jd_close(f);
		seterr(errbuf, errlen, name, 0, "out of memory");
		return -ENOMEM;
	}
	if (len)
		memcpy(f->data, data, len);
	f->size = len;
	err = jd_setup(f, errbuf, errlen);
	if (err) {
		jd_close(f);
		return err;
	}
	*out = f;
	return 0;
}

void jd_close(struct jd_file *f)
{
	if (!f)
		return;
	if (f->mapped)
		munmap(f->data, f->size);
	else
		free(f->data);
	free(f->path);
	free(f);
}

const struct jitdump_file_header *jd_header(const struct jd_file *f)
{
	return &f->hdr;
}

int jd_swapped(const struct jd_file *f)
{
	return f->swapped;
}

const char *jd_path(const struct jd_file *f)
{
	return f->path;
}

static int check_fixed(const struct jd_file *f, const struct jd_record *rec, size_t need,
		       const char *what, char *errbuf, size_t errlen)
{
	if (rec->total_size >= need)
		return 0;
	seterr(errbuf, errlen, f->path, rec->offset, "%s record too short (total_size %"
	       PRIu32 ", need %zu)", what, rec->total_size, need);
	return -EINVAL;
}

/* pid, tid, vma, code_addr: the fields CODE_LOAD and CODE_MOVE begin with */
static void code_head(const struct jd_file *f, struct jd_record *rec)
{
	const unsigned char *b = rec->body;

	rec->pid = get32(f, b + 16);
	rec->tid = get32(f, b + 20);
	rec->vma = get64(f, b + 24);
	rec->code_addr = get64(f, b + 32);
}

static int decode_load(const struct jd_file *f, struct jd_record *rec,
		       char *errbuf, size_t errlen)
{
	const unsigned char *b = rec->body;
	const size_t fixed = sizeof(struct jitdump_code_load);
	const char *name, *nul;
	uint64_t room;

	if (rec->total_size < fixed + 1) {
		seterr(errbuf, errlen, f->path, rec->offset, "CODE_LOAD record too short "
		       "(total_size %" PRIu32 ", need at least %zu)", rec->total_size, fixed + 1);
		return -EINVAL;
	}
	code_head(f, rec);
	rec->code_size = get64(f, b + 40);
	rec->code_index = get64(f, b + 48);
	name = (const char *)b + fixed;
	nul = memchr(name, '\0', rec->total_size - fixed);
	if (!nul) {
		seterr(errbuf, errlen, f->path, rec->offset + fixed,
		       "CODE_LOAD name is not NUL-terminated within the record");
		return -EINVAL;
	}
	room = rec->total_size - fixed - (uint64_t)(nul - name + 1);
	if (rec->code_size > room) {
		seterr(errbuf, errlen, f->path, rec->offset + 40, "CODE_LOAD code_size %" PRIu64
		       " is larger than the %" PRIu64 " bytes left in the record",
		       rec->code_size, room);
		return -EINVAL;
	}
	rec->name = name;
	/*
	 * The code is the last code_size bytes of the record, as perf reads
	 * it: the Java agent pads between name and code to align the code.
	 */
	rec->code = b + rec->total_size - rec->code_size;
	return 0;
}

static int decode_move(const struct jd_file *f, struct jd_record *rec,
		       char *errbuf, size_t errlen)
{
	const unsigned char *b = rec->body;
	int err = check_fixed(f, rec, sizeof(struct jitdump_code_move), "CODE_MOVE",
			      errbuf, errlen);

	if (err)
		return err;
	code_head(f, rec);
	rec->new_code_addr = get64(f, b + 40);
	rec->code_size = get64(f, b + 48);
	rec->code_index = get64(f, b + 56);
	return 0;
}

int jd_next(struct jd_file *f, struct jd_record *rec, char *errbuf, size_t errlen)
{
	const unsigned char *b;
	size_t left;

	memset(rec, 0, sizeof(*rec));
	if (f->stuck) {
		seterr(errbuf, errlen, f->path, f->pos, "cannot read on after a framing error");
		return -EBADMSG;
	}
	if (f->pos == f->size)
		return 0;
	left = f->size - f->pos;
	b = f->data + f->pos;
	rec->offset = f->pos;
	if (left < sizeof(struct jitdump_record_header)) {
		f->stuck = 1;
		seterr(errbuf, errlen, f->path, f->pos, "truncated record header "
		       "(%zu bytes left, need 16)", left);
		return -EBADMSG;
	}
	rec->id = get32(f, b);
	rec->total_size = get32(f, b + 4);
	rec->timestamp = get64(f, b + 8);
	rec->body = b;
	if (rec->total_size < sizeof(struct jitdump_record_header)) {
		f->stuck = 1;
		seterr(errbuf, errlen, f->path, f->pos, "record total_size %" PRIu32
		       " is smaller than a record header (16)", rec->total_size);
		return -EBADMSG;
	}
	if (rec->total_size > left) {
		f->stuck = 1;
		seterr(errbuf, errlen, f->path, f->pos, "truncated record: total_size %" PRIu32
		       " but only %zu bytes left in the file", rec->total_size, left);
		return -EBADMSG;
	}
	/* Framed: whatever the body holds, the next call reads the next record. */
	f->pos += rec->total_size;

	switch (rec->id) {
	case JIT_CODE_LOAD:
		return decode_load(f, rec, errbuf, errlen) ?: 1;
	case JIT_CODE_MOVE:
		return decode_move(f, rec, errbuf, errlen) ?: 1;
	case JIT_CODE_DEBUG_INFO:
		return check_fixed(f, rec, sizeof(struct jitdump_debug_info), "DEBUG_INFO",
				   errbuf, errlen) ?: 1;
	case JIT_CODE_UNWINDING_INFO:
		return check_fixed(f, rec, sizeof(struct jitdump_unwinding_info),
				   "UNWINDING_INFO", errbuf, errlen) ?: 1;
	default:
		return 1;    /* CODE_CLOSE has no body; unknown types are passed on */
	}
}

int jd_debug_info(const struct jd_file *f, const struct jd_record *rec,
		  uint64_t *code_addr, uint64_t *nr_entry, struct jd_debug_iter *it)
{
	const unsigned char *b = rec->body;
	const size_t fixed = sizeof(struct jitdump_debug_info);

	if (rec->id != JIT_CODE_DEBUG_INFO || rec->total_size < fixed)
		return -EINVAL;
	*code_addr = get64(f, b + 16);
	*nr_entry = get64(f, b + 24);
	it->f = f;
	it->rec_offset = rec->offset;
	it->p = b + fixed;
	it->end = b + rec->total_size;
	it->left = *nr_entry;
	it->base = b;
	return 0;
}

int jd_debug_next(struct jd_debug_iter *it, struct jd_debug_entry *e,
		  char *errbuf, size_t errlen)
{
	const size_t fixed = sizeof(struct jitdump_debug_entry);
	const char *nul;
	size_t room;

	if (it->left == 0)
		return 0;
	room = (size_t)(it->end - it->p);
	e->offset = it->rec_offset + (uint64_t)(it->p - it->base);
	if (room < fixed + 1) {
		seterr(errbuf, errlen, it->f->path, e->offset, "debug entry truncated: "
		       "%" PRIu64 " entries announced but the record ends", it->left);
		return -EINVAL;
	}
	e->addr = get64(it->f, it->p);
	e->lineno = get32(it->f, it->p + 8);
	e->discrim = get32(it->f, it->p + 12);
	e->file = (const char *)it->p + fixed;
	nul = memchr(e->file, '\0', room - fixed);
	if (!nul) {
		seterr(errbuf, errlen, it->f->path, e->offset + fixed,
		       "debug entry file name is not NUL-terminated within the record");
		return -EINVAL;
	}
	it->p = (const unsigned char *)nul + 1;
	it->left--;
	return 1;
}

int jd_unwinding_info(const struct jd_file *f, const struct jd_record *rec,
		      struct jd_unwinding *u, char *errbuf, size_t errlen)
{
	const unsigned char *b = rec->body;
	const size_t fixed = sizeof(struct jitdump_unwinding_info);
	uint64_t room;

	if (rec->id != JIT_CODE_UNWINDING_INFO || rec->total_size < fixed) {
		seterr(errbuf, errlen, f->path, rec->offset, "not a complete UNWINDING_INFO record");
		return -EINVAL;
	}
	u->unwinding_size = get64(f, b + 16);
	u->eh_frame_hdr_size = get64(f, b + 24);
	u->mapped_size = get64(f, b + 32);
	u->data = b + fixed;
	room = rec->total_size - fixed;
	if (u->unwinding_size > room) {
		seterr(errbuf, errlen, f->path, rec->offset + 16, "unwinding_size %" PRIu64
		       " is larger than the %" PRIu64 " bytes of data in the record",
		       u->unwinding_size, room);
		return -EINVAL;
	}
	if (u->eh_frame_hdr_size > u->unwinding_size) {
		seterr(errbuf, errlen, f->path, rec->offset + 24, "eh_frame_hdr_size %" PRIu64
		       " is larger than unwinding_size %" PRIu64,
		       u->eh_frame_hdr_size, u->unwinding_size);
		return -EINVAL;
	}
	return 0;
}

const char *jd_type_name(uint32_t id)
{
	static const char *const names[] = {
		[JIT_CODE_LOAD] = "CODE_LOAD",
		[JIT_CODE_MOVE] = "CODE_MOVE",
		[JIT_CODE_DEBUG_INFO] = "DEBUG_INFO",
		[JIT_CODE_CLOSE] = "CODE_CLOSE",
		[JIT_CODE_UNWINDING_INFO] = "UNWINDING_INFO",
	};

	return id < JIT_CODE_MAX ? names[id] : NULL;
}
