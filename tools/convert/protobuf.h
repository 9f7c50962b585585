/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small protocol buffers encoder (varints, length-delimited fields,
 * packed repeated varints) into a growing memory buffer: all that writing
 * profile.proto needs.  Nested messages are encoded into a buffer of their
 * own and then appended as bytes.
 */
#ifndef JITPERF_PROTOBUF_H
#define JITPERF_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

struct pb {
	unsigned char *b;
	size_t         len, cap;
	int            oom;      /* an allocation failed: the buffer is incomplete */
};

void pb_reset(struct pb *p);            /* empty, memory kept */
void pb_free(struct pb *p);
void pb_varint(struct pb *p, int field, uint64_t v);     /* wire type 0; 0 is written too */
void pb_varint_nz(struct pb *p, int field, uint64_t v);  /* omitted when 0, as proto3 does */
void pb_bytes(struct pb *p, int field, const void *s, size_t n);   /* wire type 2 */
void pb_packed(struct pb *p, int field, const uint64_t *v, size_t n);

#endif
