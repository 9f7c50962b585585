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
#define JP_RING_VERSION 2
#define JP_RING_SUFFIX  ".ring"

/*
 * Where the ring's bytes go in the file: byte p of the ring's stream goes
 * to file offset file_at + (p - flushed).  (The file also holds records
 * the ring never had: a jitdump's debug and unwind records, made by the
 * thread that writes the ring out, go in just before the load they
 * describe.)  The pair in force is slot[which]; it is changed by filling
 * the other slot, then storing which: one store, so a process killed at
 * any point leaves a pair that goes together.
 */
struct jp_ring_pos {
	uint64_t flushed;       /* of the ring's stream, the bytes before it are in the file */
	uint64_t file_at;       /* the file offset of byte flushed */
};

struct jp_ring_header {
	char     magic[8];      /* JP_RING_MAGIC */
	uint32_t version;       /* JP_RING_VERSION */
	uint32_t data_offset;   /* where the ring's bytes start in this file */
	uint64_t ring_size;     /* bytes in the ring: a power of two */
	uint64_t pid;           /* the process that wrote it */
	uint8_t  pad1[32];
	/* the ring holds [flushed, committed) of its stream, byte p at
	 * data_offset + p % ring_size.  Each is stored after the bytes it
	 * covers, in a cache line of its own (two threads store them).
	 * committed < flushed: a rollback was cut short, and the file ends
	 * at file_at - (flushed - committed). */
	uint64_t which;         /* at byte 64: 0 or 1 */
	struct jp_ring_pos slot[2];
	uint8_t  pad2[24];
	uint64_t committed;     /* at byte 128 */
};

_Static_assert(__builtin_offsetof(struct jp_ring_header, which) == 64 &&
	       __builtin_offsetof(struct jp_ring_header, committed) == 128,
	       "the ring header's layout");

#endif
