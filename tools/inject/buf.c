/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Growing byte buffers (struct ij_buf, tools/inject/inject.h) and the
 * LEB128 numbers DWARF and .eh_frame are written with: the bottom of
 * jitperf inject, which every part that writes bytes calls.  A buffer
 * grows by rd_grow (read/util.h), as inject's arrays do.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "read/util.h"

int ij_buf_put(struct ij_buf *b, const void *data, size_t len)
{
	if (!len)
		return 0;        /* b->p may still be NULL */
	if (rd_grow((void **)&b->p, &b->cap, b->len + len, 1))
		return -ENOMEM;
	if (data)
		memcpy(b->p + b->len, data, len);
	else
		memset(b->p + b->len, 0, len);
	b->len += len;
	return 0;
}

int ij_buf_uleb(struct ij_buf *b, uint64_t v)
{
	unsigned char c[10];
	size_t n = 0;

	do {
		c[n] = v & 0x7f;
		v >>= 7;
		if (v)
			c[n] |= 0x80;
		n++;
	} while (v);
	return ij_buf_put(b, c, n);
}

int ij_buf_sleb(struct ij_buf *b, int64_t v)
{
	unsigned char c[10];
	size_t n = 0;
	int more = 1;

	while (more) {
		unsigned char byte = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)))
			more = 0;
		else
			byte |= 0x80;
		c[n++] = byte;
	}
	return ij_buf_put(b, c, n);
}
