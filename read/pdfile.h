/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the perf.data reader: the open file, shared by read/perfdata.c
 * (layout, attributes, features) and read/pdrecords.c (the index of the
 * records and their decoders).  Not for other modules: they use
 * read/perfdata.h.
 */
#ifndef JITPERF_PDFILE_H
#define JITPERF_PDFILE_H

#include <stdint.h>
#include <string.h>

#include "perfdata.h"

struct pd_index {
	uint64_t time, off;
};

struct pd_idmap {
	uint64_t id;
	uint32_t attr;
};

struct pd_file {
	char                 *path;
	const unsigned char  *data;        /* the whole file */
	size_t                size;
	int                   mapped;
	int                   pipe;
	uint64_t              data_off, data_end;
	struct pd_attr       *attrs;
	size_t                nattrs, capattrs;
	uint64_t              idbytes;     /* bytes of the file the attributes' ids take */
	struct pd_idmap      *idmap;       /* sorted by id */
	size_t                nidmap;
	int                   idmap_stale; /* ids were added since idmap was built */
	struct pd_build_id   *bids;
	size_t                nbids;
	char                 *cmdline;
	struct pd_index      *index;       /* every record, in the order pd_next hands them out */
	size_t                nindex, next;
	size_t                seen;        /* records handed out at least once */
	uint64_t              lost;
	int                   indexed;     /* pd_index_records has run */
};

static inline uint64_t u64at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t u32at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint16_t u16at(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* -EINVAL, with "PATH: offset OFF: " and the message in err */
__attribute__((format(printf, 5, 6)))
int pd_file_fail(const char *path, char *err, size_t errlen, uint64_t off, const char *fmt, ...);
/* the attribute a record belongs to, NULL if none */
const struct pd_attr *pd_record_attr(const struct pd_file *f, uint32_t type,
				     const unsigned char *r, size_t size);
/* time of a record from its sample fields or its sample_id trailer; 0 if none */
uint64_t pd_record_time(const struct pd_file *f, uint32_t type, const unsigned char *r,
			size_t size);
/* a header record of pipe mode (types from PD_HEADER_ATTR on) taken in; 0 or -errno */
int pd_header_record(struct pd_file *f, uint32_t type, const unsigned char *r, size_t size,
		     uint64_t off, char *err, size_t errlen);
/* the map from ids to attributes, (re)built from every attribute's ids; 0 or -ENOMEM */
int pd_build_idmap(struct pd_file *f);
/*
 * The header, attributes and features taken in (perfdata.c); in pipe mode
 * only the pipe header: its attributes come with the records.  0 or -errno.
 */
int pd_parse_header(struct pd_file *f, char *err, size_t errlen);
/* the pass over the records that checks and indexes them (pdrecords.c); 0 or -errno */
int pd_index_records(struct pd_file *f, char *err, size_t errlen);

#endif /* JITPERF_PDFILE_H */
