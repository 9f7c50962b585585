/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * On-disk layout of jit-<pid>.tiers (documented in jitperf-tiers(5)): the
 * tier and compile events of a tiered JIT, beside its jitdump.  Shared by
 * the writer (lib/tiers.c) and the reader (read/tiers_read.c).
 *
 * A 40-byte header, then records, written whole by the library's write()s:
 * a record is in the file whole or not at all, also after SIGKILL.  A
 * COMPILE_BEGIN goes out with the first record that names its compile, so
 * it precedes them, but the file is in time order only without it.  Every
 * record starts with struct jptiers_record_header; its size includes the
 * header and is a multiple of 8.  Timestamps are CLOCK_MONOTONIC ns, the
 * jitdump's clock.  All integers are in the byte order of the writer (the
 * magic tells which).
 */
#ifndef JITPERF_FORMAT_TIERS_H
#define JITPERF_FORMAT_TIERS_H

#include <stdint.h>

#define JPTIERS_MAGIC         0x53524954u   /* "TIRS" read as a host u32 */
#define JPTIERS_MAGIC_SWAPPED 0x54495253u
#define JPTIERS_VERSION       1u
#define JPTIERS_TIERS         16u           /* tiers 0..15 */
#define JPTIERS_TAG_MAX       63u           /* bytes of a tag, without its NUL */
#define JPTIERS_CLOCK_MONOTONIC 1u          /* clock: CLOCK_MONOTONIC ns */

struct jptiers_file_header {
	uint32_t magic;         /* JPTIERS_MAGIC */
	uint32_t version;       /* JPTIERS_VERSION */
	uint32_t header_size;   /* of this header: offset of the first record */
	uint32_t pid;
	uint64_t timestamp;     /* when the file was made */
	uint32_t clock;         /* JPTIERS_CLOCK_MONOTONIC */
	uint32_t flags;         /* 0 */
	uint64_t reserved;
};

enum jptiers_record_type {
	JPTIERS_TIER_NAME     = 1,   /* from now on tier is called tag */
	JPTIERS_TIER_REQUEST  = 2,   /* the runtime decided to run func in tier */
	JPTIERS_COMPILE_BEGIN = 3,
	JPTIERS_COMPILE_END   = 4,
	JPTIERS_INSTALL       = 5,   /* code of a compile loaded: its CODE_LOAD's time and index */
	JPTIERS_CLOSE         = 6,   /* the session closed: no record follows */
	JPTIERS_TYPE_MAX,
};

struct jptiers_record_header {
	uint32_t type;          /* enum jptiers_record_type */
	uint32_t size;          /* of the whole record, header included, multiple of 8 */
	uint64_t timestamp;
};

struct jptiers_tier_name {      /* + tag, NUL-terminated, zero-padded to 8 */
	struct jptiers_record_header h;
	uint32_t tier;
	uint32_t reserved;
};

struct jptiers_tier_request {   /* + func, NUL-terminated, zero-padded to 8 */
	struct jptiers_record_header h;
	uint32_t tier;
	uint32_t tid;
};

struct jptiers_compile_begin {  /* + func, NUL-terminated, zero-padded to 8 */
	struct jptiers_record_header h;
	uint64_t id;            /* 1, 2, ... in the order compiles begin */
	uint64_t parent;        /* the compile open on this thread it nests in, 0: none */
	uint32_t tier;
	uint32_t tid;
};

struct jptiers_compile_end {
	struct jptiers_record_header h;
	uint64_t id;
	int32_t  status;        /* 0: code produced; < 0: failed or abandoned */
	uint32_t tid;
};

struct jptiers_install {
	struct jptiers_record_header h;   /* timestamp: the CODE_LOAD's */
	uint64_t compile;
	uint64_t code_index;    /* the CODE_LOAD's code_index */
	uint64_t code_addr;
	uint64_t code_size;
	uint32_t tid;
	uint32_t reserved;
};

/* The sizes jitperf-tiers(5) documents. */
_Static_assert(sizeof(struct jptiers_file_header) == 40, "header layout");
_Static_assert(sizeof(struct jptiers_tier_name) == 24, "record layout");
_Static_assert(sizeof(struct jptiers_tier_request) == 24, "record layout");
_Static_assert(sizeof(struct jptiers_compile_begin) == 40, "record layout");
_Static_assert(sizeof(struct jptiers_compile_end) == 32, "record layout");
_Static_assert(sizeof(struct jptiers_install) == 56, "record layout");

#endif /* JITPERF_FORMAT_TIERS_H */
