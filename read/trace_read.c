/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader of jitperf-<pid>.trace (format: jitperf-trace(5), layout in
 * format/trace.h).  Every length and offset is checked before use: a
 * corrupt, truncated or random file gives an error naming the file and
 * the byte offset, never a crash.  A file whose writer was killed is read
 * up to what each block committed, and reported as truncated.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize.h"
#include "format/trace.h"
#include "trace_read.h"
#include "util.h"

#define BLOCK_HDR ((uint64_t)sizeof(struct jpt_block_header))
#define CONTEXT_MAX (1u << 20)     /* a context deeper than this is corrupt */

struct evblock {                      /* one events block of a thread */
	uint32_t seq;
	uint64_t off;                     /* file offset of the block */
	uint32_t used;                    /* usable payload bytes */
};

struct rthread {
	struct jpt_thread pub;
	char             *name;
	struct evblock   *blocks;
	size_t            nblocks, cap;
	int               seen;
	int               wrapped;        /* its first blocks were overwritten (ring) */
};

struct jpt_reader {
	char              *path;
	unsigned char     *data;
	uint64_t           size;
	int                mapped;        /* data is a mapping of a closed trace */
	struct jpt_info    info;
	const char        *cnames[JPT_MAX_COUNTERS];
	uint32_t           block_size;
	uint64_t           open_tick, open_ns;
	double             ns_per_tick;
	struct jpt_fn     *fns;           /* index = id; name NULL = no such id */
	char             **fnnames;
	uint32_t           nfns;          /* highest id */
	struct rthread    *threads;       /* index = thread serial */
	size_t             nthreads;
	struct jpt_code   *codes;
	uint64_t          *code_ticks;
	char             **codenames;
	size_t             ncodes;
	uint64_t           far_tick, far_ns;  /* calibration pair farthest from open */
};

static int fail(const struct jpt_reader *r, char *errbuf, size_t errlen, int err,
		uint64_t off, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int fail(const struct jpt_reader *r, char *errbuf, size_t errlen, int err,
		uint64_t off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		snprintf(errbuf, errlen, "%s: %s at offset %llu", r->path, msg,
			 (unsigned long long)off);
	}
	return err;
}

static uint32_t rd32(const struct jpt_reader *r, uint64_t off)
{
	uint32_t v;

	memcpy(&v, r->data + off, 4);
	return v;
}

static uint64_t rd64(const struct jpt_reader *r, uint64_t off)
{
	uint64_t v;

	memcpy(&v, r->data + off, 8);
	return v;
}

static void calib(struct jpt_reader *r, uint64_t tick, uint64_t ns)
{
	uint64_t d = ns > r->open_ns ? ns - r->open_ns : 0;

	if (tick > r->open_tick && d > (r->far_ns > r->open_ns ? r->far_ns - r->open_ns : 0)) {
		r->far_tick = tick;
		r->far_ns = ns;
	}
}

static uint64_t tick_ns(const struct jpt_reader *r, uint64_t tick)
{
	double d = tick >= r->open_tick ? (double)(tick - r->open_tick) : -(double)(r->open_tick - tick);
	double ns = (double)r->open_ns + d * r->ns_per_tick;

	return ns < 0 ? 0 : (uint64_t)(ns + 0.5);
}

static struct rthread *thread_get(struct jpt_reader *r, uint32_t serial)
{
	if (serial >= r->nthreads) {
		size_t n = serial + 1;
		struct rthread *t;

		/* Every thread has a block or a 16-byte record: bounds a corrupt number. */
		if (serial > r->size / 16 || !(t = realloc(r->threads, n * sizeof(*t))))
			return NULL;
		memset(t + r->nthreads, 0, (n - r->nthreads) * sizeof(*t));
		r->threads = t;
		r->nthreads = n;
	}
	return &r->threads[serial];
}

static int set_name(char **dst, const char *src, size_t len)
{
	char *s = strndup(src, len);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* A NUL-terminated string inside [off, end). */
static int str_in(const struct jpt_reader *r, uint64_t off, uint64_t end, size_t *len)
{
	const void *z = off < end ? memchr(r->data + off, 0, end - off) : NULL;

	if (!z)
		return -1;
	*len = (size_t)((const unsigned char *)z - (r->data + off));
	return 0;
}

static int header(struct jpt_reader *r, char *eb, size_t el)
{
	struct jpt_file_header h;
	size_t off = 0, names;

	if (r->size < JPT_HEADER_SIZE)
		return fail(r, eb, el, -EINVAL, r->size, "file too short for the %d-byte header",
			    JPT_HEADER_SIZE);
	memcpy(&h, r->data, sizeof(h));
	if (memcmp(h.magic, JPT_MAGIC, 8))
		return fail(r, eb, el, -EINVAL, 0, "not a jitperf trace (bad magic)");
	if (h.version < 1 || h.version > JPT_VERSION)
		return fail(r, eb, el, -EOPNOTSUPP, 8, "unsupported version %u", h.version);
	if (h.header_size != JPT_HEADER_SIZE)
		return fail(r, eb, el, -EINVAL, 12, "bad header size %u", h.header_size);
	if (h.block_size < 4096 || h.block_size > (1u << 24) || (h.block_size & (h.block_size - 1)))
		return fail(r, eb, el, -EINVAL, 16, "bad block size %u", h.block_size);
	if (h.clock > JPT_CLOCK_TSC)
		return fail(r, eb, el, -EINVAL, 24, "unknown clock %u", h.clock);
	if (h.ncounters > JPT_MAX_COUNTERS)
		return fail(r, eb, el, -EINVAL, 32, "%u counters (at most %d)", h.ncounters,
			    JPT_MAX_COUNTERS);
	if (!h.ticks_per_sec)
		return fail(r, eb, el, -EINVAL, offsetof(struct jpt_file_header, ticks_per_sec),
			    "zero tick rate");
	names = h.version == 1 ? JPT_NAMES_V1 : JPT_NAMES_V2;
	for (unsigned i = 0; i < h.ncounters; i++) {
		const char *s = (const char *)r->data + names + off;
		size_t len = strnlen(s, JPT_NAMES_MAX - off);

		if (!len || off + len >= JPT_NAMES_MAX)
			return fail(r, eb, el, -EINVAL, names + off, "bad counter name %u", i);
		r->cnames[i] = s;
		off += len + 1;
	}
	r->block_size = h.block_size;
	r->info.version = h.version;
	r->info.pid = h.pid;
	r->info.clock = h.clock == JPT_CLOCK_TSC ? "tsc" : "monotonic";
	r->info.start_ns = h.start_ns;
	r->info.ncounters = h.ncounters;
	r->info.counter_names = h.ncounters ? r->cnames : NULL;
	r->info.truncated = !(h.flags & JPT_FLAG_CLOSED);
	r->info.closed = !!(h.flags & JPT_FLAG_CLOSED);
	if (h.version == 1) {
		/* version 1 sampled whole call trees; every call of a traced tree */
		r->info.sample_every = h.sample_every ? h.sample_every : 1;
	} else {
		r->info.sample_every = h.sample_every;
		r->info.timed_per_sec = h.timed_per_sec;
		r->info.max_bytes = h.max_bytes;
		r->info.ring_bytes = h.flags & JPT_FLAG_RING ? h.ring_bytes : 0;
		r->info.min_ns = h.min_ns;
		for (int i = 0; i < JPT_NCOSTS; i++)
			r->info.probe_ns[i] = h.probe_ps[i] / 1000.0;
		if (r->info.closed) {
			r->info.calls = h.calls;
			r->info.timed = h.timed;
			r->info.dropped_full = h.dropped_full;
			r->info.dropped_short = h.dropped_short;
			r->info.dropped_ring = h.dropped_ring;
		}
	}
	r->open_tick = h.open_tick;
	r->open_ns = h.open_ns;
	r->far_tick = h.open_tick;
	r->far_ns = h.open_ns;
	r->ns_per_tick = 1e9 / (double)h.ticks_per_sec;
	if (h.flags & JPT_FLAG_CLOSED)
		calib(r, h.close_tick, h.close_ns);
	return 0;
}

static int add_fn(struct jpt_reader *r, uint64_t off, uint64_t end, char *eb, size_t el)
{
	struct jpt_meta_fn m;
	size_t len;

	memcpy(&m, r->data + off, sizeof(m));
	if (str_in(r, off + sizeof(m), end, &len))
		return fail(r, eb, el, -EINVAL, off, "function name not terminated");
	/* Ids are dense and each takes a 40-byte record at least. */
	if (!m.id || m.id > JPT_FN_MAX || m.id > r->size / 40)
		return fail(r, eb, el, -EINVAL, off, "bad function id %u", m.id);
	if (m.id > r->nfns) {
		struct jpt_fn *f = realloc(r->fns, ((size_t)m.id + 1) * sizeof(*f));
		char **n;

		if (!f)
			return -ENOMEM;
		r->fns = f;
		if (!(n = realloc(r->fnnames, ((size_t)m.id + 1) * sizeof(*n))))
			return -ENOMEM;
		r->fnnames = n;
		memset(f + r->nfns + 1, 0, (m.id - r->nfns) * sizeof(*f));
		memset(n + r->nfns + 1, 0, (m.id - r->nfns) * sizeof(*n));
		if (!r->nfns) {
			memset(f, 0, sizeof(*f));
			n[0] = NULL;
		}
		r->nfns = m.id;
	}
	if (r->fnnames[m.id])
		return fail(r, eb, el, -EINVAL, off, "function id %u defined twice", m.id);
	if (set_name(&r->fnnames[m.id], (const char *)r->data + off + sizeof(m), len))
		return -ENOMEM;
	if (!strncmp(r->fnnames[m.id], SYM_NATIVE_PREFIX, strlen(SYM_NATIVE_PREFIX))) {
		char buf[4096];

		sym_native_name(r->fnnames[m.id], buf, sizeof(buf));
		if (set_name(&r->fnnames[m.id], buf, strlen(buf)))
			return -ENOMEM;
	}
	r->fns[m.id].id = m.id;
	r->fns[m.id].addr = m.addr;
	r->fns[m.id].len = m.len;
	r->fns[m.id].name = r->fnnames[m.id];
	return 0;
}

static int add_code(struct jpt_reader *r, uint64_t off, uint64_t end, char *eb, size_t el)
{
	struct jpt_meta_code m;
	size_t len, n = r->ncodes + 1;
	void *p;

	memcpy(&m, r->data + off, sizeof(m));
	if (str_in(r, off + sizeof(m), end, &len))
		return fail(r, eb, el, -EINVAL, off, "code name not terminated");
	if (m.kind > JPT_CODE_UNLOAD)
		return fail(r, eb, el, -EINVAL, off, "unknown code event kind %u", m.kind);
	if (!(p = realloc(r->codes, n * sizeof(*r->codes))))
		return -ENOMEM;
	r->codes = p;
	if (!(p = realloc(r->code_ticks, n * sizeof(*r->code_ticks))))
		return -ENOMEM;
	r->code_ticks = p;
	if (!(p = realloc(r->codenames, n * sizeof(*r->codenames))))
		return -ENOMEM;
	r->codenames = p;
	r->codenames[r->ncodes] = NULL;
	if (set_name(&r->codenames[r->ncodes], (const char *)r->data + off + sizeof(m), len))
		return -ENOMEM;
	r->codes[r->ncodes] = (struct jpt_code){
		.kind = (enum jpt_code_kind)m.kind, .tid = m.tid, .index = m.index, .addr = m.addr,
		.len = m.len, .name = r->codenames[r->ncodes],
	};
	r->code_ticks[r->ncodes] = m.tick;
	r->ncodes++;
	return 0;
}

static int meta_block(struct jpt_reader *r, uint64_t boff, uint32_t used, char *eb, size_t el)
{
	uint64_t off = boff + BLOCK_HDR, end = off + used;

	while (off < end) {
		struct jpt_meta_header h;
		uint64_t rend;
		size_t len;
		int err = 0;

		if (end - off < sizeof(h))
			return fail(r, eb, el, -EINVAL, off, "metadata record cut short");
		memcpy(&h, r->data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > end - off)
			return fail(r, eb, el, -EINVAL, off, "bad metadata record size %u", h.size);
		rend = off + h.size;
		switch (h.type) {
		case JPT_META_FN:
			err = h.size < sizeof(struct jpt_meta_fn) ? -1 : add_fn(r, off, rend, eb, el);
			break;
		case JPT_META_CODE:
			err = h.size < sizeof(struct jpt_meta_code) ? -1 : add_code(r, off, rend, eb, el);
			break;
		case JPT_META_THREAD: {
			struct jpt_meta_thread m;
			struct rthread *t;

			if (h.size < sizeof(m)) {
				err = -1;
				break;
			}
			memcpy(&m, r->data + off, sizeof(m));
			if (str_in(r, off + sizeof(m), rend, &len))
				return fail(r, eb, el, -EINVAL, off, "thread name not terminated");
			if (!(t = thread_get(r, m.thread)))
				return fail(r, eb, el, -EINVAL, off, "bad thread number %u", m.thread);
			t->pub.tid = m.tid;
			if (set_name(&t->name, (const char *)r->data + off + sizeof(m), len))
				return -ENOMEM;
			t->seen = 1;
			break;
		}
		case JPT_META_CAL:
			if (h.size < sizeof(struct jpt_meta_cal))
				err = -1;
			else
				calib(r, rd64(r, off + 8), rd64(r, off + 16));
			break;
		default:
			return fail(r, eb, el, -EINVAL, off, "unknown metadata record type %u", h.type);
		}
		if (err == -1)
			return fail(r, eb, el, -EINVAL, off, "metadata record of type %u too short", h.type);
		if (err)
			return err;
		off = rend;
	}
	return 0;
}

static int events_block(struct jpt_reader *r, uint64_t boff, uint32_t used, char *eb, size_t el)
{
	struct jpt_block_header b;
	struct rthread *t;

	memcpy(&b, r->data + boff, sizeof(b));
	if (!(t = thread_get(r, b.thread)))
		return fail(r, eb, el, -EINVAL, boff + 8, "bad thread number %u", b.thread);
	if (t->nblocks == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct evblock *p = realloc(t->blocks, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->blocks = p;
		t->cap = cap;
	}
	t->blocks[t->nblocks++] = (struct evblock){ b.seq, boff, used };
	if (!t->seen || (!t->name && b.seq == 0)) {
		t->pub.tid = b.tid;
		if (!t->name && set_name(&t->name, b.name, strnlen(b.name, sizeof(b.name))))
			return -ENOMEM;
		t->seen = 1;
	}
	calib(r, b.cal_tick, b.cal_ns);
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	const struct evblock *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct metaref { uint32_t seq; uint64_t off; uint32_t used; };

static int meta_by_seq(const void *a, const void *b)
{
	const struct metaref *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int blocks(struct jpt_reader *r, char *eb, size_t el)
{
	uint64_t B = r->block_size, nb = (r->size - JPT_HEADER_SIZE + B - 1) / B;
	struct metaref *meta = NULL;
	size_t nmeta = 0;
	int err = 0;

	if ((r->size - JPT_HEADER_SIZE) % B)
		r->info.truncated = 1;
	for (uint64_t i = 0; i < nb && !err; i++) {
		uint64_t off = JPT_HEADER_SIZE + i * B, avail = r->size - off;
		uint32_t magic, kind, used;

		if (avail > B)
			avail = B;
		if (avail < BLOCK_HDR)
			break;
		magic = rd32(r, off);
		if (!magic)
			continue;                          /* claimed or grown, never written */
		if (magic != JPT_BLOCK_MAGIC) {
			err = fail(r, eb, el, -EINVAL, off, "bad block magic 0x%08x", magic);
			break;
		}
		kind = rd32(r, off + 4);
		used = rd32(r, off + offsetof(struct jpt_block_header, used));
		if (used > B - BLOCK_HDR) {
			err = fail(r, eb, el, -EINVAL, off + offsetof(struct jpt_block_header, used),
				   "block payload %u larger than the block", used);
			break;
		}
		if (used > avail - BLOCK_HDR) {             /* the file ends inside the block */
			used = (uint32_t)(avail - BLOCK_HDR);
			r->info.truncated = 1;
		}
		if (kind == JPT_BLOCK_EVENTS) {
			err = events_block(r, off, used, eb, el);
		} else if (kind == JPT_BLOCK_META) {
			struct metaref *p = realloc(meta, (nmeta + 1) * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			meta = p;
			meta[nmeta++] = (struct metaref){ rd32(r, off + 16), off, used };
		} else {
			err = fail(r, eb, el, -EINVAL, off + 4, "unknown block kind %u", kind);
		}
	}
	/* Metadata in the order it was written: names before they are renamed. */
	if (!err && nmeta)
		qsort(meta, nmeta, sizeof(*meta), meta_by_seq);
	for (size_t i = 0; i < nmeta && !err; i++)
		err = meta_block(r, meta[i].off, meta[i].used, eb, el);
	free(meta);
	for (size_t i = 0; i < r->nthreads && !err; i++) {
		struct rthread *t = &r->threads[i];

		if (t->nblocks)
			qsort(t->blocks, t->nblocks, sizeof(*t->blocks), by_seq);
		for (size_t k = 1; k < t->nblocks; k++)
			if (t->blocks[k].seq == t->blocks[k - 1].seq)
				return fail(r, eb, el, -EINVAL, t->blocks[k].off + 16,
					    "block %u of thread %zu appears twice",
					    t->blocks[k].seq, i);
		if (r->info.ring_bytes) {
			/* A ring reuses its oldest block: the thread's events are
			 * the newest run of consecutive blocks. */
			size_t first = 0;

			for (size_t k = 1; k < t->nblocks; k++)
				if (t->blocks[k].seq != t->blocks[k - 1].seq + 1)
					first = k;
			if (first) {
				memmove(t->blocks, t->blocks + first,
					(t->nblocks - first) * sizeof(*t->blocks));
				t->nblocks -= first;
			}
			if (t->nblocks && t->blocks[0].seq) {
				t->wrapped = 1;
				r->info.ring_blocks += t->blocks[0].seq;
			}
		} else {
			for (size_t k = 0; k < t->nblocks; k++)
				if (t->blocks[k].seq != k) {
					t->nblocks = k;    /* a lost block: keep what precedes it */
					r->info.truncated = 1;
				}
		}
		t->pub.name = t->name ? t->name : "";
	}
	return err;
}

/*
 * A closed trace (its writer set JPT_FLAG_CLOSED with its final nblocks)
 * is mapped, not copied: its pages are in the page cache already, where a
 * copy needs as many fresh pages, zeroed first and each a page fault.
 * Only its final length is mapped: the writer cuts the blocks it grew
 * ahead just after it sets the flag, and those are never touched, so that
 * cut cannot turn into SIGBUS here; nothing else shortens the file (a
 * writer replaces its name, never an old file).  0 when mapped, -1 to
 * read it instead.
 */
static int map_closed(struct jpt_reader *r, int fd)
{
	struct jpt_file_header h;
	uint64_t len;
	void *m;

	/* h is a copy: the rest of the header is checked where it is parsed */
	if (r->size < JPT_HEADER_SIZE || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, JPT_MAGIC, 8) || !(h.flags & JPT_FLAG_CLOSED) ||
	    h.header_size != JPT_HEADER_SIZE || h.block_size < 4096 ||
	    h.nblocks > (r->size - JPT_HEADER_SIZE) / h.block_size)
		return -1;
	len = JPT_HEADER_SIZE + h.nblocks * h.block_size;
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	r->data = m;
	r->size = len;
	r->mapped = 1;
	return 0;
}

/*
 * A trace of hundreds of MiB is read into memory: in 2 MiB pages where the
 * system gives them on request, the kernel takes one fault per 2 MiB of
 * it instead of one per 4 KiB, where faults are a large part of reading.
 * Only advice: without it, small pages.
 */
static void hugepages(void *p, uint64_t size)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + size) & ~(huge - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

int jpt_open(struct jpt_reader **out, const char *path, char *errbuf, size_t errlen)
{
	struct jpt_reader *r = calloc(1, sizeof(*r));
	struct stat st;
	uint64_t got = 0;
	int fd = -1, err;

	*out = NULL;
	if (!r || !(r->path = strdup(path))) {
		free(r);
		return -ENOMEM;
	}
	fd = rd_open_regular(path, 0, &st);
	if (fd < 0) {
		err = fd;
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: %s", path, rd_strerror(err));
		goto fail;
	}
	r->size = (uint64_t)st.st_size;
	if (map_closed(r, fd) == 0)
		goto parse;
	if (!(r->data = malloc(r->size ? r->size : 1))) {
		err = -ENOMEM;
		goto fail;
	}
	hugepages(r->data, r->size);
	while (got < r->size) {
		ssize_t n = read(fd, r->data + got, r->size - got);

		if (n <= 0) {
			if (n == 0) {
				r->size = got;     /* shrank while we read */
				break;
			}
			if (errno == EINTR)
				continue;
			err = fail(r, errbuf, errlen, -errno, got, "read error: %s", strerror(errno));
			goto fail;
		}
		got += (uint64_t)n;
	}
parse:
	close(fd);
	fd = -1;
	if ((err = header(r, errbuf, errlen)) || (err = blocks(r, errbuf, errlen)))
		goto fail;
	if (r->far_ns > r->open_ns + 50000000u && r->far_tick > r->open_tick)
		r->ns_per_tick = (double)(r->far_ns - r->open_ns) / (double)(r->far_tick - r->open_tick);
	if (r->info.clock[0] == 'm')
		r->ns_per_tick = 1.0;
	*out = r;
	return 0;
fail:
	if (err == -ENOMEM && errbuf && errlen)
		snprintf(errbuf, errlen, "%s: out of memory", path);
	if (fd >= 0)
		close(fd);
	jpt_close(r);
	return err;
}

void jpt_close(struct jpt_reader *r)
{
	if (!r)
		return;
	for (uint32_t i = 1; i <= r->nfns; i++)
		free(r->fnnames[i]);
	free(r->fnnames);
	free(r->fns);
	for (size_t i = 0; i < r->nthreads; i++) {
		free(r->threads[i].name);
		free(r->threads[i].blocks);
	}
	free(r->threads);
	for (size_t i = 0; i < r->ncodes; i++)
		free(r->codenames[i]);
	free(r->codenames);
	free(r->codes);
	free(r->code_ticks);
	if (r->mapped)
		munmap(r->data, r->size);
	else
		free(r->data);
	free(r->path);
	free(r);
}

const struct jpt_info *jpt_info(const struct jpt_reader *r)
{
	return &r->info;
}

size_t jpt_nfns(const struct jpt_reader *r)
{
	return r->nfns;
}

const struct jpt_fn *jpt_fn(const struct jpt_reader *r, uint32_t id)
{
	return id && id <= r->nfns && r->fns[id].name ? &r->fns[id] : NULL;
}

size_t jpt_nthreads(const struct jpt_reader *r)
{
	return r->nthreads;
}

const struct jpt_thread *jpt_thread(const struct jpt_reader *r, size_t i)
{
	if (i >= r->nthreads)
		return NULL;
	r->threads[i].pub.name = r->threads[i].name ? r->threads[i].name : "";
	return &r->threads[i].pub;
}

/*
 * One thread's events replayed: ids is its call stack as far as the trace
 * knows it (traced calls and the untraced callers contexts named between
 * them), open[] the traced calls on it.
 */
struct opencall {
	size_t   pos;                     /* its id's index in ids */
	size_t   base;                    /* where its context begins in ids */
	uint64_t start;                   /* ticks */
	uint64_t child;                   /* ns of completed traced callees */
};

struct walk {
	uint32_t        *ids;
	size_t           nids, capids;
	struct opencall *open;
	size_t           nopen, capopen;
	uint64_t        *ctr;             /* ncounters values per open call */
	uint64_t         deltas[JPT_MAX_COUNTERS];
	/* the context that the next entry takes */
	uint64_t         ctx_off;         /* file offset of its ids, 0: none */
	uint32_t         ctx_n, ctx_more;
	int              ctx_partial;     /* unseen calls may lie before the entry */
	size_t           stable;          /* ids below it are as the last call showed them */
};

static int grow_ids(struct walk *w, size_t more)
{
	if (w->nids + more > w->capids) {
		size_t cap = w->capids ? w->capids : 64;
		uint32_t *p;

		while (cap < w->nids + more)
			cap *= 2;
		if (!(p = realloc(w->ids, cap * sizeof(*p))))
			return -ENOMEM;
		w->ids = p;
		w->capids = cap;
	}
	return 0;
}

static int push_open(struct walk *w, size_t nc)
{
	if (w->nopen == w->capopen) {
		size_t cap = w->capopen ? w->capopen * 2 : 64;
		void *p;

		if (!(p = realloc(w->open, cap * sizeof(*w->open))))
			return -ENOMEM;
		w->open = p;
		if (nc) {
			if (!(p = realloc(w->ctr, cap * nc * sizeof(*w->ctr))))
				return -ENOMEM;
			w->ctr = p;
		}
		w->capopen = cap;
	}
	w->nopen++;
	return 0;
}

/* An entry at tick: its context, then the call. */
static int enter(struct jpt_reader *r, struct walk *w, uint32_t fn, uint64_t tick,
		 uint64_t ctr_off)
{
	size_t nc = r->info.ncounters;
	struct opencall *o;

	if (grow_ids(w, (size_t)w->ctx_more + w->ctx_n + 2) || push_open(w, nc))
		return -ENOMEM;
	o = &w->open[w->nopen - 1];
	o->base = w->nids;
	if (w->stable > o->base)
		w->stable = o->base;
	for (uint32_t i = 0; i < w->ctx_more; i++)
		w->ids[w->nids++] = 0;              /* callers the writer did not list */
	for (uint32_t i = 0; i < w->ctx_n; i++)
		w->ids[w->nids++] = rd32(r, w->ctx_off + 4 * (uint64_t)i);
	if (w->ctx_partial)
		w->ids[w->nids++] = 0;              /* callers that were only counted */
	w->ctx_off = 0;
	w->ctx_n = w->ctx_more = 0;
	w->ctx_partial = 0;
	o->pos = w->nids;
	w->ids[w->nids++] = fn;
	o->start = tick;
	o->child = 0;
	if (nc)
		memcpy(&w->ctr[(w->nopen - 1) * nc], r->data + ctr_off, 8 * nc);
	return 0;
}

static int leave(struct jpt_reader *r, struct rthread *t, struct walk *w, uint64_t tick,
		 uint64_t ctr_off, int (*cb)(const struct jpt_call *, void *), void *arg)
{
	size_t nc = r->info.ncounters, k = w->nopen - 1;
	struct opencall *o = &w->open[k];
	struct jpt_call c;

	c.tid = t->pub.tid;
	c.fn = w->ids[o->pos];
	c.depth = (uint32_t)o->pos;
	c.traced_depth = (uint32_t)k;
	c.start_ns = tick_ns(r, o->start);
	c.end_ns = tick_ns(r, tick);
	if (c.end_ns < c.start_ns)
		c.end_ns = c.start_ns;
	c.self_ns = c.end_ns - c.start_ns;
	c.self_ns = c.self_ns > o->child ? c.self_ns - o->child : 0;
	for (size_t i = 0; i < nc; i++)
		w->deltas[i] = rd64(r, ctr_off + 8 * i) - w->ctr[k * nc + i];
	c.counters = nc ? w->deltas : NULL;
	c.stack = w->ids;
	c.same_below = (uint32_t)w->stable;
	if (k)
		w->open[k - 1].child += c.end_ns - c.start_ns;
	/* the ids up to this call's are shown now; those below its base stay */
	w->nids = w->stable = o->base;
	w->nopen--;
	return cb(&c, arg);
}

/* One event of a block, decoded (event_at). */
struct event {
	enum { EV_CALL, EV_TIME, EV_CONTEXT, EV_MARK } kind;
	int      exit;                  /* EV_CALL: an exit */
	uint32_t fn;                    /* EV_CALL */
	uint64_t delta;                 /* EV_CALL: ticks since the previous event */
	uint64_t tick;                  /* EV_TIME: where the next deltas start */
	uint32_t ctx_n, ctx_more;       /* EV_CONTEXT */
	int      ctx_partial;
	uint64_t size;                  /* bytes, counters and ids included */
};

/*
 * The event at off, which its block ends at end: 1, 0 when the block ends
 * inside it (cut by truncation), or a negative errno with the message in eb.
 * Versions 1 and 2 have only 8-byte words, and their type 3 is a repaired
 * exit; version 3 has 4-byte short events and marks a repaired exit with
 * an extended event before it (EV_MARK: nothing to do, the exit closes
 * the call).
 */
static int event_at(const struct jpt_reader *r, uint64_t off, uint64_t end, struct event *e,
		    char *eb, size_t el)
{
	size_t nc = r->info.ncounters;
	int v3 = r->info.version >= 3;
	uint32_t u, type;
	uint64_t word;

	if (end - off < 4)
		return 0;
	u = rd32(r, off);
	type = u & 3;
	if (type == JPT_EV_SHORT && v3) {
		if (nc)
			return fail(r, eb, el, -EINVAL, off, "short event in a trace with counters");
		*e = (struct event){ .kind = EV_CALL, .exit = !!(u & JPT_SHORT_EXIT),
				     .fn = JPT_SHORT_FN(u), .delta = JPT_SHORT_DELTA(u), .size = 4 };
		return 1;
	}
	if (end - off < 8)
		return 0;
	word = rd64(r, off);
	if (type != JPT_EV_X) {
		if (end - off < 8 + 8 * nc)
			return 0;
		*e = (struct event){ .kind = EV_CALL, .exit = type != JPT_EV_ENTER,
				     .fn = (uint32_t)(word >> 2) & JPT_FN_MAX,
				     .delta = word >> JPT_EV_DELTA_SHIFT, .size = 8 + 8 * nc };
		return 1;
	}
	switch (JPT_X_KIND(word)) {
	case JPT_X_TIME:
		if (end - off < 16)
			return 0;
		*e = (struct event){ .kind = EV_TIME, .tick = rd64(r, off + 8), .size = 16 };
		return 1;
	case JPT_X_CONTEXT:
		if (r->info.version < 2)
			break;
		*e = (struct event){ .kind = EV_CONTEXT, .ctx_n = JPT_CTX_N(word),
				     .ctx_more = JPT_CTX_MORE(word),
				     .ctx_partial = !!(word & JPT_CTX_PARTIAL),
				     .size = 8 + ((uint64_t)JPT_CTX_N(word) * 4 + 7) / 8 * 8 };
		if ((uint64_t)e->ctx_n + e->ctx_more > CONTEXT_MAX)
			return fail(r, eb, el, -EINVAL, off, "context of %u calls: deeper than a stack",
				    e->ctx_n + e->ctx_more);
		return end - off >= e->size;
	case JPT_X_REPAIRED:
		if (!v3)
			break;
		*e = (struct event){ .kind = EV_MARK, .size = 8 };
		return 1;
	}
	return fail(r, eb, el, -EINVAL, off, "unknown event kind %u", JPT_X_KIND(word));
}

static int walk_thread(struct jpt_reader *r, struct rthread *t, struct walk *w,
		       int (*cb)(const struct jpt_call *, void *), void *arg, char *eb, size_t el)
{
	w->nids = w->nopen = w->stable = 0;
	w->ctx_off = 0;
	w->ctx_n = w->ctx_more = 0;
	w->ctx_partial = 0;
	for (size_t k = 0; k < t->nblocks; k++) {
		uint64_t off = t->blocks[k].off + BLOCK_HDR, end = off + t->blocks[k].used;
		uint64_t last = rd64(r, t->blocks[k].off + offsetof(struct jpt_block_header, base_tick));
		struct event e = { .size = 0 };
		int ret;

		for (; off < end; off += e.size) {
			if ((ret = event_at(r, off, end, &e, eb, el)) <= 0) {
				if (ret < 0)
					return ret;
				break;                         /* cut by truncation */
			}
			if (e.kind == EV_TIME) {
				last = e.tick;
				continue;
			}
			if (e.kind == EV_CONTEXT) {
				w->ctx_off = off + 8;
				w->ctx_n = e.ctx_n;
				w->ctx_more = e.ctx_more;
				w->ctx_partial = e.ctx_partial;
				continue;
			}
			if (e.kind != EV_CALL)
				continue;
			last += e.delta;
			if (!jpt_fn(r, e.fn))
				return fail(r, eb, el, -EINVAL, off, "event for unknown function id %u",
					    e.fn);
			if (!e.exit) {
				if (enter(r, w, e.fn, last, off + 8))
					return -ENOMEM;
			} else if (!w->nopen && t->wrapped) {
				/* a call entered in a block the ring overwrote */
			} else {
				if (!w->nopen || w->ids[w->open[w->nopen - 1].pos] != e.fn)
					return fail(r, eb, el, -EINVAL, off,
						    "exit of function %u does not match the open call",
						    e.fn);
				if ((ret = leave(r, t, w, last, off + 8, cb, arg)))
					return ret;
			}
		}
	}
	return 0;
}

int jpt_for_each_call(struct jpt_reader *r, int (*cb)(const struct jpt_call *, void *),
		      void *arg, char *errbuf, size_t errlen)
{
	struct walk w = { 0 };
	int ret = 0;

	for (size_t i = 0; i < r->nthreads && !ret; i++)
		ret = walk_thread(r, &r->threads[i], &w, cb, arg, errbuf, errlen);
	if (ret == -ENOMEM && errbuf && errlen)
		snprintf(errbuf, errlen, "%s: out of memory", r->path);
	free(w.ids);
	free(w.open);
	free(w.ctr);
	return ret;
}

struct code_ref { uint64_t tick; size_t i; };

static int by_tick(const void *a, const void *b)
{
	const struct code_ref *x = a, *y = b;

	if (x->tick != y->tick)
		return x->tick < y->tick ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;   /* same time: file order */
}

int jpt_for_each_code(struct jpt_reader *r, int (*cb)(const struct jpt_code *, void *),
		      void *arg, char *errbuf, size_t errlen)
{
	struct code_ref *order = malloc((r->ncodes + 1) * sizeof(*order));
	int ret = 0;

	if (!order) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: out of memory", r->path);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->ncodes; i++)
		order[i] = (struct code_ref){ r->code_ticks[i], i };
	if (r->ncodes)
		qsort(order, r->ncodes, sizeof(*order), by_tick);
	for (size_t i = 0; i < r->ncodes && !ret; i++) {
		struct jpt_code c = r->codes[order[i].i];

		c.ts_ns = tick_ns(r, order[i].tick);
		ret = cb(&c, arg);
	}
	free(order);
	return ret;
}
