/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf.data as written by perf record and perf inject: the file header,
 * the attributes of its events, the feature sections jitperf uses (build
 * ids, command line, event names) and its records, handed out in time
 * order with every sample field decoded.  What the records mean (threads,
 * maps, symbols) is read/pdsession.c's job.
 *
 * Both layouts are read: a seekable file (header, attrs, data, features)
 * and pipe mode (perf record -o -: attributes, features and event names
 * arrive as records).  Errors name the file and the byte offset.
 */
#ifndef JITPERF_PERFDATA_H
#define JITPERF_PERFDATA_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* perf's own record types (tools/perf/util/event.h), beside the kernel's */
enum {
	PD_HEADER_ATTR = 64, PD_HEADER_EVENT_TYPE = 65, PD_HEADER_TRACING_DATA = 66,
	PD_HEADER_BUILD_ID = 67, PD_FINISHED_ROUND = 68, PD_ID_INDEX = 69,
	PD_AUXTRACE_INFO = 70, PD_AUXTRACE = 71, PD_AUXTRACE_ERROR = 72,
	PD_THREAD_MAP = 73, PD_CPU_MAP = 74, PD_STAT_CONFIG = 75, PD_STAT = 76,
	PD_STAT_ROUND = 77, PD_EVENT_UPDATE = 78, PD_TIME_CONV = 79,
	PD_HEADER_FEATURE = 80, PD_COMPRESSED = 81, PD_FINISHED_INIT = 82,
};

/* feature bits of the header (tools/perf/util/header.h) */
enum {
	PD_FEAT_BUILD_ID = 2, PD_FEAT_CMDLINE = 11, PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_BITS = 256,
};

struct pd_attr {
	struct perf_event_attr attr;   /* zero beyond what the file holds */
	char                  *name;   /* "cpu-clock", "cycles:u", ... */
	uint64_t              *ids;
	size_t                 nids;
};

struct pd_build_id {
	int32_t  pid;                  /* -1: kernel */
	uint8_t  id[20];
	uint8_t  size;                 /* bytes of id used (20 for SHA-1) */
	char    *path;
};

struct pd_sample {
	const struct pd_attr *attr;
	uint64_t        ip, time, period, addr, id;
	uint32_t        pid, tid, cpu;
	uint64_t        nr;            /* callchain entries, context markers included */
	const unsigned char *chain;    /* nr u64 values, leaf first (may be unaligned) */
	int             has_callchain;
	int             has_regs_user, has_stack_user;
};

struct pd_event {
	uint32_t type;                 /* PERF_RECORD_*, PD_* */
	uint16_t misc;
	uint64_t offset;               /* of the record in the file */
	uint64_t time;                 /* sample time or sample_id_all time; 0 if none */
	union {
		struct {               /* PERF_RECORD_MMAP, PERF_RECORD_MMAP2 */
			uint32_t    pid, tid;
			uint64_t    addr, len, pgoff;
			uint32_t    prot, flags;
			uint8_t     build_id[20];
			uint8_t     build_id_size;   /* 0: none in the record */
			const char *filename;
		} mmap;
		struct {               /* PERF_RECORD_COMM */
			uint32_t    pid, tid;
			const char *comm;
			int         exec;
		} comm;
		struct {               /* PERF_RECORD_FORK, PERF_RECORD_EXIT */
			uint32_t    pid, ppid, tid, ptid;
		} task;
		struct {               /* PERF_RECORD_LOST */
			uint64_t    id, lost;
		} lost;
		struct pd_sample sample;   /* PERF_RECORD_SAMPLE */
	};
};

struct pd_file;

/*
 * Open path ("-" = standard input, read whole) and index its records.
 * 0, or -errno with a one-line message naming the file (and the offset of
 * what is wrong) in err.
 */
int pd_open(struct pd_file **out, const char *path, char *err, size_t errlen);
/* The same on a buffer (copied); name is used in messages. */
int pd_open_mem(struct pd_file **out, const void *data, size_t len, const char *name,
		char *err, size_t errlen);
/* The rest of a stream fd whose first headlen bytes were already read into head. */
int pd_open_stream(struct pd_file **out, int fd, const void *head, size_t headlen,
		   const char *name, char *err, size_t errlen);
void pd_close(struct pd_file *f);
/*
 * pd_open up to the records, which pd_index then checks and orders (or the
 * first pd_next): the header, attributes and features can be put to use
 * while that pass over the whole file runs.  pd_index: 0 or -errno with the
 * message of pd_open in err.
 */
int pd_open_unindexed(struct pd_file **out, const char *path, char *err, size_t errlen);
int pd_index(struct pd_file *f, char *err, size_t errlen);
/*
 * Whether path opens as pd_open_unindexed opens it (header, attributes,
 * features, the data section within the file), touching only the pages
 * that takes: 0, or -errno with the message of pd_open in err.
 */
int pd_check_header(const char *path, char *err, size_t errlen);
/* bytes of records (the data section) */
size_t pd_data_size(const struct pd_file *f);

/*
 * The next record in time order (records of equal time in file order):
 * 1 with *ev filled (pointers into the file, valid until pd_close), 0 at
 * the end, -EINVAL with err naming the offset of a malformed record.
 */
int pd_next(struct pd_file *f, struct pd_event *ev, char *err, size_t errlen);
/* The next pd_next hands out the first record again. */
void pd_rewind(struct pd_file *f);

const char *pd_path(const struct pd_file *f);
size_t pd_nattrs(const struct pd_file *f);
const struct pd_attr *pd_attr(const struct pd_file *f, size_t i);
size_t pd_nbuild_ids(const struct pd_file *f);
const struct pd_build_id *pd_build_id(const struct pd_file *f, size_t i);
/* the perf record command line, NULL if the file has none */
const char *pd_cmdline(const struct pd_file *f);
int pd_pipe_mode(const struct pd_file *f);
/* sum of the PERF_RECORD_LOST counts pd_next has handed out (each once) */
uint64_t pd_lost(const struct pd_file *f);

/* a callchain entry */
static inline uint64_t pd_chain_ip(const struct pd_sample *s, uint64_t i)
{
	uint64_t v;

	__builtin_memcpy(&v, s->chain + 8 * i, 8);
	return v;
}

#endif /* JITPERF_PERFDATA_H */
