/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <file>.ring: where libjitperf keeps the records of <file> (a perf map or
 * a jitdump) that are not yet written to it (lib/batchfile.c).  A process
 * that was killed leaves it beside the file; read/ring_read.c puts its
 * records where they belong.  Native byte order: read on the machine that
 * wrote it.
 */
#ifndef JITPERF_RING_FORMAT_H
#define JITPERF_RING_FORMAT_H

#include <stdint.h>

#define JP_RING_MAGIC   "JPRING\0\0"
#define JP_RING_VERSION 1
#define JP_RING_SUFFIX  ".ring"

struct jp_ring_header {
	char     magic[8];      /* JP_RING_MAGIC */
	uint32_t version;       /* JP_RING_VERSION */
	uint32_t data_offset;   /* where the ring's bytes start in this file */
	uint64_t ring_size;     /* bytes in the ring: a power of two */
	uint64_t pid;           /* the process that wrote it */
	uint8_t  pad1[32];
	/* the file holds [0, flushed); the ring holds [flushed, committed) of
	 * the file's bytes, byte i at data_offset + i % ring_size.  Each is
	 * stored after the bytes it covers, in a cache line of its own (two
	 * threads store them).  committed < flushed: a rollback was cut
	 * short, and the file ends at committed. */
	uint64_t flushed;       /* at byte 64 */
	uint8_t  pad2[56];
	uint64_t committed;     /* at byte 128 */
};

_Static_assert(__builtin_offsetof(struct jp_ring_header, flushed) == 64 &&
	       __builtin_offsetof(struct jp_ring_header, committed) == 128,
	       "the ring header's layout");

#endif
