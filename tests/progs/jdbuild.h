/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Builder of jitdump files byte by byte, for tests: lets a test write the
 * exact file it needs (any byte order, any defect) instead of keeping
 * binary fixtures.  Each append returns the offset of the record it wrote.
 */
#ifndef JITPERF_TESTS_JDBUILD_H
#define JITPERF_TESTS_JDBUILD_H

#include <stddef.h>
#include <stdint.h>

struct jdb {
	unsigned char *buf;
	size_t         len, cap;
	int            swap;       /* write the other byte order */
};

struct jdb_line {
	uint64_t    addr;
	uint32_t    lineno, discrim;
	const char *file;
};

void   jdb_init(struct jdb *b, int swap);
void   jdb_free(struct jdb *b);
void   jdb_header(struct jdb *b, uint32_t version, uint32_t total_size, uint32_t elf_mach,
		  uint32_t pid, uint64_t timestamp, uint64_t flags);
/* pad: zero bytes between name and code (as the Java agent writes them) */
size_t jdb_load(struct jdb *b, uint64_t ts, uint32_t pid, uint32_t tid, uint64_t addr,
		const char *name, const void *code, uint64_t code_size, uint64_t index, size_t pad);
size_t jdb_move(struct jdb *b, uint64_t ts, uint32_t pid, uint32_t tid, uint64_t old_addr,
		uint64_t new_addr, uint64_t code_size, uint64_t index);
size_t jdb_debug(struct jdb *b, uint64_t ts, uint64_t code_addr,
		 const struct jdb_line *lines, size_t n);
size_t jdb_unwind(struct jdb *b, uint64_t ts, const void *data, uint64_t size,
		  uint64_t eh_frame_hdr_size, uint64_t mapped_size);
size_t jdb_close(struct jdb *b, uint64_t ts);
/* arbitrary bytes, e.g. a longer header */
void   jdb_bytes(struct jdb *b, const void *p, size_t n);
size_t jdb_raw(struct jdb *b, uint32_t id, uint64_t ts, const void *body, size_t len);
/* overwrite a field in place, in the file's byte order */
void   jdb_set32(struct jdb *b, size_t off, uint32_t v);
void   jdb_set64(struct jdb *b, size_t off, uint64_t v);
int    jdb_write(const struct jdb *b, const char *path);   /* 0 or -errno */

#endif
