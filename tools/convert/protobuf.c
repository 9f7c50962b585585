/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Protocol buffers wire format: https://protobuf.dev/programming-guides/encoding/ */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "protobuf.h"

static int room(struct pb *p, size_t n)
{
	size_t cap;
	unsigned char *b;

	if (p->oom)
		return 0;
	if (p->cap - p->len >= n)
		return 1;
	cap = p->cap ? p->cap : 256;
	while (cap - p->len < n)
		cap *= 2;
	b = realloc(p->b, cap);
	if (!b) {
		p->oom = 1;
		return 0;
	}
	p->b = b;
	p->cap = cap;
	return 1;
}

static void raw_varint(struct pb *p, uint64_t v)
{
	if (!room(p, 10))
		return;
	while (v >= 0x80) {
		p->b[p->len++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p->b[p->len++] = (unsigned char)v;
}

void pb_reset(struct pb *p)
{
	p->len = 0;
}

void pb_free(struct pb *p)
{
	free(p->b);
	memset(p, 0, sizeof(*p));
}

void pb_varint(struct pb *p, int field, uint64_t v)
{
	raw_varint(p, (uint64_t)field << 3);
	raw_varint(p, v);
}

void pb_varint_nz(struct pb *p, int field, uint64_t v)
{
	if (v)
		pb_varint(p, field, v);
}

void pb_bytes(struct pb *p, int field, const void *s, size_t n)
{
	raw_varint(p, (uint64_t)field << 3 | 2);
	raw_varint(p, n);
	if (n && room(p, n)) {
		memcpy(p->b + p->len, s, n);
		p->len += n;
	}
}

void pb_packed(struct pb *p, int field, const uint64_t *v, size_t n)
{
	size_t bytes = 0, i;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		uint64_t x = v[i];

		do {
			bytes++;
			x >>= 7;
		} while (x);
	}
	raw_varint(p, (uint64_t)field << 3 | 2);
	raw_varint(p, bytes);
	for (i = 0; i < n; i++)
		raw_varint(p, v[i]);
}
