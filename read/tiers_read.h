/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader of jit-<pid>.tiers (format/tiers.h, jitperf-tiers(5)): the tier
 * and compile events libjitperf writes beside a jitdump.  Used by
 * `jitperf dump` and the tests.  Byte-swapped files are read too.
 */
#ifndef JITPERF_TIERS_READ_H
#define JITPERF_TIERS_READ_H

#include <stddef.h>
#include <stdint.h>

#include "format/tiers.h"

struct tr_file;

/* One record in host byte order; the fields its type has, the others 0. */
struct tr_record {
	uint64_t    offset;        /* of the record in the file */
	uint32_t    type;          /* enum jptiers_record_type, or an unknown value */
	uint32_t    size;
	uint64_t    timestamp;
	uint32_t    tier;          /* TIER_NAME, TIER_REQUEST, COMPILE_BEGIN */
	uint32_t    tid;           /* all but TIER_NAME and CLOSE */
	uint64_t    id;            /* COMPILE_BEGIN, COMPILE_END */
	uint64_t    parent;        /* COMPILE_BEGIN */
	int32_t     status;        /* COMPILE_END */
	uint64_t    compile, code_index, code_addr, code_size;   /* INSTALL */
	const char *text;          /* TIER_NAME: the tag; TIER_REQUEST, COMPILE_BEGIN: func */
};

/*
 * Open a tiers file (read whole).  0, or a negative errno with a one-line
 * message in errbuf naming the file (and the offset): -EINVAL for
 * something that is not a tiers file, -EOPNOTSUPP for a later version.
 */
int tr_open(struct tr_file **out, const char *path, char *errbuf, size_t errlen);
void tr_close(struct tr_file *f);
const struct jptiers_file_header *tr_header(const struct tr_file *f);  /* host order */
int tr_swapped(const struct tr_file *f);

/*
 * Next record: 1 with *rec filled, 0 at the end of the file, or -EBADMSG
 * with errbuf naming the file and the offset (a record cut short, a size
 * that is not a multiple of 8, a string without its NUL).  A record of a
 * type this reader does not know is returned with its header fields only.
 */
int tr_next(struct tr_file *f, struct tr_record *rec, char *errbuf, size_t errlen);

/* "COMPILE_BEGIN", ... for known record types, NULL for unknown ones. */
const char *tr_type_name(uint32_t type);

/* Whether the probe bytes (at least 4) start a tiers file, in either byte order. */
int tr_is_tiers(const void *head, size_t len);

#endif /* JITPERF_TIERS_READ_H */
