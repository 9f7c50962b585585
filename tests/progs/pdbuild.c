/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A perf.data of known content (tests/progs/pdbuild.h). */
#include "config.h"

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pdbuild.h"

struct out {
	unsigned char *b;
	size_t len, cap;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;
		unsigned char *b;

		while (cap < o->len + n)
			cap *= 2;
		b = realloc(o->b, cap);
		if (!b) {
			free(o->b);
			o->b = NULL;
			o->cap = o->len = 0;
			return;
		}
		o->b = b;
		o->cap = cap;
	}
	if (o->b) {
		memcpy(o->b + o->len, p, n);
		o->len += n;
	}
}

static void u64(struct out *o, uint64_t v) { put(o, &v, 8); }
static void u32(struct out *o, uint32_t v) { put(o, &v, 4); }

static void header(struct out *o, uint32_t type, uint16_t misc, uint16_t size)
{
	u32(o, type);
	put(o, &misc, 2);
	put(o, &size, 2);
}

/* sample_id trailer of non-sample records: TID, TIME, ID */
static void sample_id(struct out *o, uint32_t pid, uint32_t tid, uint64_t t)
{
	u32(o, pid);
	u32(o, tid);
	u64(o, t);
	u64(o, 7);
}

static void str(struct out *o, const char *s, size_t padded)
{
	size_t n = strlen(s);

	put(o, s, n);
	while (n++ < padded)
		put(o, "", 1);
}

static void comm(struct out *o, uint32_t pid, const char *name, uint64_t t)
{
	header(o, PERF_RECORD_COMM, 0, 8 + 8 + 8 + 24);
	u32(o, pid);
	u32(o, pid);
	str(o, name, 8);
	sample_id(o, pid, pid, t);
}

static void sample(struct out *o, uint32_t pid, uint64_t t, uint64_t period,
		   const uint64_t *chain, uint64_t nr)
{
	header(o, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(8 + 6 * 8 + 8 * nr));
	u64(o, chain[nr - 1]);           /* ip */
	u32(o, pid);
	u32(o, pid);
	u64(o, t);
	u64(o, 8);                       /* id */
	u64(o, period);
	u64(o, nr);
	for (uint64_t i = 0; i < nr; i++)
		u64(o, chain[i]);
}

static void attr(struct out *o)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.size = sizeof(a);
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;
	a.sample_id_all = 1;
	a.freq = 1;
	a.sample_freq = 4000;
	put(o, &a, sizeof(a));
}

static const uint64_t *extra_times;   /* pdb_build_times: samples after the others */
static size_t extra_n;

static void records(struct out *o)
{
	static const uint64_t c1[] = { (uint64_t)PERF_CONTEXT_USER, 0x400150, 0x400050 };
	static const uint64_t c2[] = { (uint64_t)PERF_CONTEXT_USER, 0x400050 };
	static const char anon[] = "//anon";

	comm(o, 10, "prog", 100);
	header(o, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 8 + 64 + 8 + 24);
	u32(o, 10);
	u32(o, 10);
	u64(o, 0x400000);
	u64(o, 0x1000);
	u64(o, 0);
	u64(o, 0);                       /* maj, min */
	u64(o, 0);                       /* ino */
	u64(o, 0);                       /* ino_generation */
	u32(o, 5);                       /* PROT_READ | PROT_EXEC */
	u32(o, 2);                       /* MAP_PRIVATE */
	str(o, anon, 8);
	sample_id(o, 10, 10, 110);
	header(o, PERF_RECORD_FORK, 0, 8 + 24 + 24);
	u32(o, 11);
	u32(o, 10);
	u32(o, 11);
	u32(o, 10);
	u64(o, 120);
	sample_id(o, 11, 11, 120);
	comm(o, 11, "child", 130);
	sample(o, 10, 300, 7, c1, 3);
	sample(o, 11, 200, 5, c2, 2);
	header(o, PERF_RECORD_LOST, 0, 8 + 16 + 24);
	u64(o, 8);
	u64(o, 3);
	sample_id(o, 10, 10, 400);
	for (size_t i = 0; i < extra_n; i++)
		sample(o, 11, extra_times[i], i + 1, c2, 2);
}

static void cmdline_feature(struct out *o)
{
	u32(o, 3);
	u32(o, 8);
	str(o, "perf", 8);
	u32(o, 8);
	str(o, "record", 8);
	u32(o, 8);
	str(o, "prog", 8);
}

static void event_desc_feature(struct out *o)
{
	u32(o, 1);
	u32(o, sizeof(struct perf_event_attr));
	attr(o);
	u32(o, 2);
	u32(o, 16);
	str(o, "cpu-clock", 16);
	u64(o, 7);
	u64(o, 8);
}

static void build_id_feature(struct out *o)
{
	unsigned char id[24] = { 0xab, 0xcd };

	header(o, 0, 1u << 15, 8 + 4 + 24 + 16);
	u32(o, (uint32_t)-1);
	id[20] = 20;
	put(o, id, 24);
	str(o, "/bin/prog", 16);
}

unsigned char *pdb_build(int pipe, size_t *len)
{
	struct out o = { 0 }, f = { 0 };
	uint64_t data_off, data_len, feat_off, off;
	size_t a, b, c;

	if (pipe) {
		put(&o, "PERFILE2", 8);
		u64(&o, 16);
		header(&o, 64, 0, 8 + sizeof(struct perf_event_attr) + 16);   /* HEADER_ATTR */
		attr(&o);
		u64(&o, 7);
		u64(&o, 8);
		/* HEADER_FEATURE EVENT_DESC and CMDLINE, perf's way: not 8-byte multiples */
		event_desc_feature(&f);
		header(&o, 80, 0, (uint16_t)(16 + f.len));
		u64(&o, 12);
		put(&o, f.b, f.len);
		free(f.b);
		f = (struct out){ 0 };
		cmdline_feature(&f);
		header(&o, 80, 0, (uint16_t)(16 + f.len));
		u64(&o, 11);
		put(&o, f.b, f.len);
		free(f.b);
		records(&o);
		*len = o.len;
		return o.b;
	}
	/* header, attr + its ids section, ids, data, feature table, features */
	put(&o, "PERFILE2", 8);
	u64(&o, 104);
	u64(&o, sizeof(struct perf_event_attr) + 16);
	u64(&o, 104);                                      /* attrs */
	u64(&o, sizeof(struct perf_event_attr) + 16);
	off = 104 + sizeof(struct perf_event_attr) + 16 + 16;
	data_off = off;
	records(&f);
	data_len = f.len;
	u64(&o, data_off);                                 /* data */
	u64(&o, data_len);
	u64(&o, 0);                                        /* event_types */
	u64(&o, 0);
	{
		uint64_t bits[4] = { (1u << 2) | (1u << 11) | (1u << 12), 0, 0, 0 };

		put(&o, bits, 32);
	}
	attr(&o);
	u64(&o, 104 + sizeof(struct perf_event_attr) + 16); /* ids */
	u64(&o, 16);
	u64(&o, 7);
	u64(&o, 8);
	put(&o, f.b, f.len);
	free(f.b);
	/* features in bit order: BUILD_ID (2), CMDLINE (11), EVENT_DESC (12) */
	feat_off = data_off + data_len + 3 * 16;
	f = (struct out){ 0 };
	build_id_feature(&f);
	a = f.len;
	cmdline_feature(&f);
	b = f.len;
	event_desc_feature(&f);
	c = f.len;
	u64(&o, feat_off);
	u64(&o, a);
	u64(&o, feat_off + a);
	u64(&o, b - a);
	u64(&o, feat_off + b);
	u64(&o, c - b);
	put(&o, f.b, f.len);
	free(f.b);
	*len = o.len;
	return o.b;
}

unsigned char *pdb_build_times(int pipe, const uint64_t *times, size_t n, size_t *len)
{
	unsigned char *b;

	extra_times = times;
	extra_n = n;
	b = pdb_build(pipe, len);
	extra_times = NULL;
	extra_n = 0;
	return b;
}
