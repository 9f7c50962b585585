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
#include "jitdump_format.h"

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
 * Open a jitdump.  Errors: negative errno, with a one-line message in errbuf
 * naming path and offset (bad magic, short header, unreadable).
 */
int jd_open(struct jd_file **out, const char *path, char *errbuf, size_t errlen);
void jd_close(struct jd_file *f);
const struct jitdump_file_header *jd_header(const struct jd_file *f);   /* host order */
int jd_swapped(const struct jd_file *f);

/*
 * Next record: returns 1 with *rec filled, 0 at a clean end of file, or a
 * negative errno with errbuf naming path and offset (truncated or corrupt).
 */
int jd_next(struct jd_file *f, struct jd_record *rec, char *errbuf, size_t errlen);

#endif /* JITPERF_JITDUMP_READ_H */
