/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader of jitdump files from any emitter (jitperf, the Java agent, V8,
 * LLVM, QEMU).  Used by `jitperf dump` and by `jitperf convert` (code loads
 * on the timeline).  Byte-swapped files are read too.
 */
#ifndef JITPERF_JITDUMP_READ_H
#define JITPERF_JITDUMP_READ_H

#include <stddef.h>
#include <stdint.h>
#include "format/jitdump.h"

struct jd_file;

/* One record, already converted to host byte order where the layout is known. */
struct jd_record {
	uint64_t    offset;        /* of the record header in the file */
	uint32_t    id;            /* enum jitdump_record_type, or unknown value */
	uint32_t    total_size;
	uint64_t    timestamp;
	const void *body;          /* total_size bytes starting at the record header */
	/* decoded for JIT_CODE_LOAD and JIT_CODE_MOVE (0/NULL otherwise) */
	uint32_t    pid, tid;
	uint64_t    vma, code_addr, new_code_addr, code_size, code_index;
	const char *name;          /* CODE_LOAD name, NUL-terminated inside body */
	const void *code;          /* CODE_LOAD code bytes (code_size) */
};

/*
 * Open a jitdump: a regular file only, mapped read-only (memory follows
 * the records read, not the file's size).  Errors: negative errno, with a
 * one-line message in errbuf naming path and offset (bad magic, short
 * header, unreadable; "PATH: not a regular file", -RD_ENOTREG, for a FIFO,
 * socket or device).
 */
int jd_open(struct jd_file **out, const char *path, char *errbuf, size_t errlen);
void jd_close(struct jd_file *f);
const struct jitdump_file_header *jd_header(const struct jd_file *f);   /* host order */
int jd_swapped(const struct jd_file *f);

/*
 * Next record: returns 1 with *rec filled, 0 at a clean end of file, or a
 * negative errno with errbuf naming path and offset (truncated or corrupt).
 * A file cut short by a crash is read up to its last whole record: the
 * records before the cut come out as usual, then -EBADMSG names where the
 * cut is (a writer killed between records leaves a clean end).
 */
int jd_next(struct jd_file *f, struct jd_record *rec, char *errbuf, size_t errlen);

/*
 * jd_next() errors come in two kinds: -EINVAL means
 * the record is framed but its body is malformed (rec holds offset, id,
 * total_size, timestamp, body; the next call continues after it); -EBADMSG
 * means the file cannot be read further (truncated or garbled framing).
 */

/* As jd_open, from a buffer (copied); name is used in messages. */
int jd_open_mem(struct jd_file **out, const void *data, size_t len, const char *name,
		char *errbuf, size_t errlen);
const char *jd_path(const struct jd_file *f);
/* "CODE_LOAD", ... for known record types, NULL for unknown ones. */
const char *jd_type_name(uint32_t id);

/* JIT_CODE_DEBUG_INFO: header fields, then its entries one by one. */
struct jd_debug_entry {
	uint64_t    offset;        /* of the entry in the file */
	uint64_t    addr;
	uint32_t    lineno, discrim;
	const char *file;          /* NUL-terminated inside the record */
};
struct jd_debug_iter {         /* opaque: filled by jd_debug_info */
	const struct jd_file *f;
	const unsigned char  *base, *p, *end;
	uint64_t              rec_offset, left;
};
/* 0 with code_addr, nr_entry and it set; -EINVAL if rec is not a complete DEBUG_INFO. */
int jd_debug_info(const struct jd_file *f, const struct jd_record *rec,
		  uint64_t *code_addr, uint64_t *nr_entry, struct jd_debug_iter *it);
/* 1 with *e filled, 0 after nr_entry entries, -EINVAL (errbuf) if the record ends first. */
int jd_debug_next(struct jd_debug_iter *it, struct jd_debug_entry *e,
		  char *errbuf, size_t errlen);

/* JIT_CODE_UNWINDING_INFO, sizes checked against the record. */
struct jd_unwinding {
	uint64_t    unwinding_size, eh_frame_hdr_size, mapped_size;
	const void *data;          /* unwinding_size bytes: .eh_frame then .eh_frame_hdr */
};
int jd_unwinding_info(const struct jd_file *f, const struct jd_record *rec,
		      struct jd_unwinding *u, char *errbuf, size_t errlen);

#endif /* JITPERF_JITDUMP_READ_H */
