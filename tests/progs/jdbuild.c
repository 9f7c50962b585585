/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Builder of jitdump files for tests (tests/progs/jdbuild.h). */
#include "config.h"

#include <byteswap.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jdbuild.h"

static void grow(struct jdb *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	while (b->len + n > b->cap)
		b->cap = b->cap ? b->cap * 2 : 4096;
	b->buf = realloc(b->buf, b->cap);
	if (!b->buf)
		abort();        /* a test cannot go on without memory */
}

static void put(struct jdb *b, const void *p, size_t n)
{
	grow(b, n);
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void put32(struct jdb *b, uint32_t v)
{
	v = b->swap ? bswap_32(v) : v;
	put(b, &v, 4);
}

static void put64(struct jdb *b, uint64_t v)
{
	v = b->swap ? bswap_64(v) : v;
	put(b, &v, 8);
}

static void zeros(struct jdb *b, size_t n)
{
	grow(b, n);
	memset(b->buf + b->len, 0, n);
	b->len += n;
}

void jdb_init(struct jdb *b, int swap)
{
	memset(b, 0, sizeof(*b));
	b->swap = swap;
}

void jdb_free(struct jdb *b)
{
	free(b->buf);
	b->buf = NULL;
	b->len = b->cap = 0;
}

void jdb_header(struct jdb *b, uint32_t version, uint32_t total_size, uint32_t elf_mach,
		uint32_t pid, uint64_t timestamp, uint64_t flags)
{
	put32(b, 0x4A695444u);
	put32(b, version);
	put32(b, total_size);
	put32(b, elf_mach);
	put32(b, 0);
	put32(b, pid);
	put64(b, timestamp);
	put64(b, flags);
}

static size_t prefix(struct jdb *b, uint32_t id, size_t total, uint64_t ts)
{
	size_t off = b->len;

	put32(b, id);
	put32(b, (uint32_t)total);
	put64(b, ts);
	return off;
}

size_t jdb_load(struct jdb *b, uint64_t ts, uint32_t pid, uint32_t tid, uint64_t addr,
		const char *name, const void *code, uint64_t code_size, uint64_t index, size_t pad)
{
	size_t nlen = strlen(name) + 1;
	size_t off = prefix(b, 0, 56 + nlen + pad + code_size, ts);

	put32(b, pid);
	put32(b, tid);
	put64(b, addr);
	put64(b, addr);
	put64(b, code_size);
	put64(b, index);
	put(b, name, nlen);
	zeros(b, pad);
	put(b, code, code_size);
	return off;
}

size_t jdb_move(struct jdb *b, uint64_t ts, uint32_t pid, uint32_t tid, uint64_t old_addr,
		uint64_t new_addr, uint64_t code_size, uint64_t index)
{
	size_t off = prefix(b, 1, 64, ts);

	put32(b, pid);
	put32(b, tid);
	put64(b, new_addr);
	put64(b, old_addr);
	put64(b, new_addr);
	put64(b, code_size);
	put64(b, index);
	return off;
}

size_t jdb_debug(struct jdb *b, uint64_t ts, uint64_t code_addr,
		 const struct jdb_line *lines, size_t n)
{
	size_t total = 32, off;

	for (size_t i = 0; i < n; i++)
		total += 16 + strlen(lines[i].file) + 1;
	off = prefix(b, 2, total, ts);
	put64(b, code_addr);
	put64(b, n);
	for (size_t i = 0; i < n; i++) {
		put64(b, lines[i].addr);
		put32(b, lines[i].lineno);
		put32(b, lines[i].discrim);
		put(b, lines[i].file, strlen(lines[i].file) + 1);
	}
	return off;
}

size_t jdb_unwind(struct jdb *b, uint64_t ts, const void *data, uint64_t size,
		  uint64_t eh_frame_hdr_size, uint64_t mapped_size)
{
	size_t off = prefix(b, 4, 40 + size, ts);

	put64(b, size);
	put64(b, eh_frame_hdr_size);
	put64(b, mapped_size);
	put(b, data, size);
	return off;
}

size_t jdb_close(struct jdb *b, uint64_t ts)
{
	return prefix(b, 3, 16, ts);
}

size_t jdb_raw(struct jdb *b, uint32_t id, uint64_t ts, const void *body, size_t len)
{
	size_t off = prefix(b, id, 16 + len, ts);

	put(b, body, len);
	return off;
}

void jdb_bytes(struct jdb *b, const void *p, size_t n)
{
	put(b, p, n);
}

void jdb_set32(struct jdb *b, size_t off, uint32_t v)
{
	v = b->swap ? bswap_32(v) : v;
	memcpy(b->buf + off, &v, 4);
}

void jdb_set64(struct jdb *b, size_t off, uint64_t v)
{
	v = b->swap ? bswap_64(v) : v;
	memcpy(b->buf + off, &v, 8);
}

int jdb_write(const struct jdb *b, const char *path)
{
	FILE *fp = fopen(path, "wb");
	int err = 0;

	if (!fp)
		return -errno;
	if (fwrite(b->buf, 1, b->len, fp) != b->len)
		err = -EIO;
	if (fclose(fp) && !err)
		err = -errno;
	return err;
}
