/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writer of <dir>/jitperf-<pid>.trace (format: jitperf-trace(5)).
 *
 * The file is mapped MAP_SHARED once, over a large reservation, and grown
 * by whole blocks.  A thread claims a block with one atomic add and then
 * writes events into it with plain stores, committing the payload length
 * after each event (a release store): pages of a shared file mapping
 * belong to the page cache, so whatever was committed survives SIGKILL.
 *
 * Faulting in each new 4 KiB page of that mapping costs the writing thread
 * more than its events do, so a filler thread of the session does it
 * ahead of the writers (as uftrace leaves the writing to a recorder): it
 * grows the file and populates the pages of the next blocks (a lead that
 * grows with the rate the writers claim blocks at), polling while the
 * trace grows and sleeping when it does not.  A writer
 * that outruns it still works (it takes the faults itself).
 *
 * Limits.  The file holds at most max_blocks blocks (trace_max); the last
 * is kept for metadata (block 0 is metadata too), so every function that
 * has events also has its name.  In ring mode each thread writes into at most ring_max blocks
 * of its own and then reuses the oldest: the file keeps the last
 * trace_ring bytes of every thread (a flight recorder), and what a reuse
 * overwrites is counted.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lib/core.h"
#include "instr.h"
#include "trace_put.h"

#define MAP_RESERVE   (UINT64_C(4) << 30)    /* largest trace: 4 GiB */
#define GROW_BLOCKS   64u                    /* file grows by 4 MiB at a time */
#define FILL_AHEAD    64u                    /* most blocks kept populated past next_block */
#define FILL_CHUNK    8u                     /* blocks per madvise, and the first lead */
#define POLL_NS       1000000L               /* filler poll while the trace grows ... */
#define IDLE_ROUNDS   50u                    /* ... until it has not for this many polls */

static int grow(struct jp_trace *tr, uint64_t idx);

#define META_RESERVE 1u                       /* last blocks only metadata may claim */

static struct jpt_file_header *hdr(struct jp_trace *tr)
{
	return (struct jpt_file_header *)tr->map;
}

/* Populate blocks [from, to): an atomic add of 0 per page where the kernel
 * lacks MADV_POPULATE_WRITE (it faults like a write, changes nothing). */
static void populate(struct jp_trace *tr, uint64_t from, uint64_t to)
{
	char *p = tr->map + JPT_HEADER_SIZE + from * tr->block_size;
	size_t len = (size_t)(to - from) * tr->block_size;
	long page = sysconf(_SC_PAGESIZE);

	if (!madvise(p, len, MADV_POPULATE_WRITE))
		return;
	for (size_t off = 0; off < len; off += (size_t)page)
		__atomic_fetch_add((int *)(p + off), 0, __ATOMIC_RELAXED);
}

/*
 * The lead (blocks populated past the writers) starts at one chunk and
 * doubles, up to FILL_AHEAD, whenever the writers are found to have used
 * more than half of it: a process that traces little does not have
 * megabytes of pages made, and truncated at close, for nothing.
 */
static void *filler_main(void *arg)
{
	struct jp_trace *tr = arg;
	uint64_t max = tr->max_blocks, lead = FILL_CHUNK;
	unsigned quiet = 0, waited = 0;

	while (!__atomic_load_n(&tr->stop, __ATOMIC_ACQUIRE)) {
		int seen = __atomic_load_n(&tr->wake, __ATOMIC_ACQUIRE);
		uint64_t next = __atomic_load_n(&tr->next_block, __ATOMIC_RELAXED);
		uint64_t have = tr->ready, want;
		struct timespec poll = { 0, POLL_NS };

		/* back from a wait with less than half the lead left */
		if (waited && have < next + lead / 2 && lead < FILL_AHEAD)
			lead *= 2;
		waited = 0;
		want = next + lead;
		if (want > max)
			want = max;
		if (have < want) {
			uint64_t to = have + FILL_CHUNK < want ? have + FILL_CHUNK : want;

			if (grow(tr, to - 1))
				break;          /* disk full: writers will see it too */
			populate(tr, have, to);
			__atomic_store_n(&tr->ready, to, __ATOMIC_RELEASE);
			quiet = 0;
			continue;
		}
		waited = 1;
		if (++quiet < IDLE_ROUNDS) {
			jp_futex_wait(&tr->wake, seen, &poll);
			continue;
		}
		/* Nothing written for a while: sleep until a writer claims a block. */
		__atomic_store_n(&tr->idle, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&tr->next_block, __ATOMIC_SEQ_CST) + lead <= have &&
		    !__atomic_load_n(&tr->stop, __ATOMIC_SEQ_CST))
			jp_futex_wait(&tr->wake, seen, NULL);
		__atomic_store_n(&tr->idle, 0, __ATOMIC_RELAXED);
		quiet = 0;
	}
	return NULL;
}

static void filler_start(struct jp_trace *tr)
{
	tr->stop = 0;
	tr->filler_on = !jp_bgthread_start(&tr->filler, filler_main, tr, "jitperf-fill");
}

static void filler_stop(struct jp_trace *tr)
{
	if (!tr->filler_on)
		return;
	__atomic_store_n(&tr->stop, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&tr->wake, 1, __ATOMIC_SEQ_CST);
	jp_futex_wake(&tr->wake);
	pthread_join(tr->filler, NULL);
	tr->filler_on = 0;
}

/* Around fork(): the filler is stopped, so the child never inherits it
 * mid-way; the writers grow the file themselves meanwhile. */
void jp_trace_pause(struct jp_instr *in)
{
	if (in->trace)
		filler_stop(in->trace);
}

void jp_trace_resume(struct jp_instr *in)
{
	if (in->trace)
		filler_start(in->trace);
}

int jp_trace_open(struct jp_instr *in)
{
	struct jp_trace *tr = calloc(1, sizeof(*tr));
	struct jpt_file_header *h;
	size_t off = 0;
	int err;

	if (!tr)
		return -ENOMEM;
	tr->fd = -1;
	tr->block_size = JPT_BLOCK_SIZE;
	tr->event_size = 8 + 8 * in->counters.n;
	pthread_mutex_init(&tr->grow_lock, NULL);
	if (asprintf(&tr->path, "%s/jitperf-%d.trace", in->jp->dir, (int)in->jp->pid) < 0) {
		tr->path = NULL;
		err = -ENOMEM;
		goto fail;
	}
	/* Never opened by name: JITPERF_DIR may be shared (jp_create_fresh).
	 * Named at once, before any data: a reader after SIGKILL finds it. */
	err = jp_create_fresh(tr->path, O_RDWR, &tr->fd);
	if (err)
		goto fail;
	if (ftruncate(tr->fd, JPT_HEADER_SIZE)) {
		err = -errno;
		goto fail;
	}
	tr->map_len = MAP_RESERVE;
	/* trace_max bounds the whole file, header included */
	tr->max_blocks = (tr->map_len - JPT_HEADER_SIZE) / tr->block_size;
	if (in->trace_max && in->trace_max != JITPERF_UNLIMITED) {
		uint64_t b = in->trace_max > JPT_HEADER_SIZE ?
			(in->trace_max - JPT_HEADER_SIZE) / tr->block_size : 0;

		if (b < tr->max_blocks)
			tr->max_blocks = b;
	}
	if (tr->max_blocks < META_RESERVE + 2)
		tr->max_blocks = META_RESERVE + 2;      /* block 0, one of events, the reserve */
	tr->map = mmap(NULL, tr->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
		       tr->fd, 0);
	if (tr->map == MAP_FAILED) {
		tr->map = NULL;
		err = -errno;
		goto fail;
	}
	h = hdr(tr);
	h->version = JPT_VERSION;
	h->header_size = JPT_HEADER_SIZE;
	h->block_size = tr->block_size;
	h->pid = (uint32_t)in->jp->pid;
	h->clock = jp_clock_is_tsc ? JPT_CLOCK_TSC : JPT_CLOCK_MONOTONIC;
	h->sample_every = in->mode == JP_SAMPLE_NONE ? JPT_SAMPLE_NONE :
			  in->mode == JP_SAMPLE_ADAPTIVE ? JPT_SAMPLE_ADAPTIVE : in->every;
	h->timed_per_sec = in->mode == JP_SAMPLE_ADAPTIVE ? in->rate : 0;
	h->ncounters = in->counters.n;
	h->max_bytes = JPT_HEADER_SIZE + tr->max_blocks * tr->block_size;
	h->ring_bytes = in->trace_ring;
	h->flags = in->trace_ring ? JPT_FLAG_RING : 0;
	h->min_ns = in->trace_min_ns;
	h->start_ns = in->open_ns;
	h->open_tick = in->open_tick;
	h->open_ns = in->open_ns;
	h->ticks_per_sec = in->ticks_per_sec;
	for (unsigned i = 0; i < in->counters.n; i++) {
		size_t len = strlen(in->counters.names[i]) + 1;

		if (off + len > JPT_NAMES_MAX)
			break;
		memcpy(h->counter_names + off, in->counters.names[i], len);
		off += len;
	}
	/* The magic last: a file without it is not a trace yet. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, JPT_MAGIC, sizeof(h->magic));
	in->trace = tr;
	filler_start(tr);
	return 0;
fail:
	if (tr->fd >= 0) {
		jp_remove_own(tr->path, tr->fd);
		close(tr->fd);
	}
	free(tr->path);
	free(tr);
	return err;
}

/* Make the file hold block idx; not hot (once per block). */
static int grow(struct jp_trace *tr, uint64_t idx)
{
	uint64_t want;
	int err = 0;

	if (idx < __atomic_load_n(&tr->file_blocks, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&tr->grow_lock);
	if (idx >= tr->file_blocks) {
		want = idx + GROW_BLOCKS;
		if (JPT_HEADER_SIZE + want * tr->block_size > tr->map_len)
			want = (tr->map_len - JPT_HEADER_SIZE) / tr->block_size;
		/* fallocate: a full disk fails here, not as SIGBUS in a probe. */
		if (fallocate(tr->fd, 0, 0, (off_t)(JPT_HEADER_SIZE + want * tr->block_size)) &&
		    (errno != EOPNOTSUPP ||
		     ftruncate(tr->fd, (off_t)(JPT_HEADER_SIZE + want * tr->block_size))))
			err = -errno;
		else
			__atomic_store_n(&tr->file_blocks, want, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&tr->grow_lock);
	return err;
}

/* Claim the next block of the file for kind, or UINT64_MAX (full). */
static uint64_t claim(struct jp_trace *tr, uint32_t kind)
{
	uint64_t lim = tr->max_blocks - (kind == JPT_BLOCK_EVENTS ? META_RESERVE : 0);
	uint64_t idx = __atomic_load_n(&tr->next_block, __ATOMIC_RELAXED);

	do {
		if (idx >= lim)
			return UINT64_MAX;
	} while (!__atomic_compare_exchange_n(&tr->next_block, &idx, idx + 1, 1,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	if (grow(tr, idx))
		return UINT64_MAX;
	/* The filler went to sleep: wake it (once per idle period). */
	if (__builtin_expect(__atomic_load_n(&tr->idle, __ATOMIC_SEQ_CST), 0) &&
	    __atomic_exchange_n(&tr->idle, 0, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(&tr->wake, 1, __ATOMIC_SEQ_CST);
		jp_futex_wake(&tr->wake);
	}
	return idx;
}

static struct jpt_block_header *block_at(struct jp_trace *tr, uint64_t idx)
{
	return (struct jpt_block_header *)(tr->map + JPT_HEADER_SIZE + idx * tr->block_size);
}

/* Start block b as the thread's next one (a new block, or a reused one
 * whose old payload is dropped first: a reader sees one or the other). */
static void block_start(struct jp_thread *t, struct jpt_block_header *b)
{
	__atomic_store_n(&b->used, 0, __ATOMIC_RELEASE);
	b->kind = JPT_BLOCK_EVENTS;
	b->thread = t->serial;
	b->tid = t->tid;
	b->base_tick = t->last_tick;
	jp_clock_pair(&b->cal_tick, &b->cal_ns);
	memcpy(b->name, t->name, sizeof(b->name));
	__atomic_store_n(&b->seq, t->blkseq, __ATOMIC_RELEASE);
	__atomic_store_n(&b->magic, JPT_BLOCK_MAGIC, __ATOMIC_RELEASE);
}

/* Ring mode: the thread's ring arrays, made at its first block. */
static int ring_setup(struct jp_thread *t, struct jp_trace *tr, uint64_t ring_bytes)
{
	uint64_t n = ring_bytes / tr->block_size;

	if (n < 2)
		n = 2;
	if (n > 1u << 20)
		n = 1u << 20;
	t->ring = mmap(NULL, n * (sizeof(uint64_t) + sizeof(uint32_t)), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->ring == MAP_FAILED) {
		t->ring = NULL;
		return -ENOMEM;
	}
	t->ring_calls = (uint32_t *)(t->ring + n);
	t->ring_max = (uint32_t)n;
	t->nring = t->ring_cur = t->ring_slot = 0;
	return 0;
}

void jp_trace_thread_reset(struct jp_thread *t)
{
	if (t->ring)
		munmap(t->ring, (size_t)t->ring_max * (sizeof(uint64_t) + sizeof(uint32_t)));
	t->ring = NULL;
	t->ring_calls = NULL;
	t->ring_max = t->nring = t->ring_cur = t->ring_slot = 0;
	t->blk = NULL;
	t->pos = t->end = NULL;
	t->blkseq = 0;
	t->blk_calls = 0;
	t->trace_full = 0;
	t->last_tick = 0;
	t->meta_fns = 0;
}

static int new_block(struct jp_instr *in, struct jp_thread *t) JP_NOINSTR;
static int new_block(struct jp_instr *in, struct jp_thread *t)
{
	struct jp_trace *tr = in->trace;
	struct jpt_block_header *b = NULL;
	int saved = errno;         /* called from probes: keep the program's errno */
	uint64_t idx;

	if (t->trace_full || !tr)
		return -ENOSPC;
	/* threads are numbered in the file by their first block */
	if (!t->blkseq)
		t->serial = __atomic_fetch_add(&in->nthreads, 1, __ATOMIC_RELAXED);
	if (in->trace_ring && !t->ring && ring_setup(t, tr, in->trace_ring)) {
		errno = saved;
		t->trace_full = 1;
		return -ENOMEM;
	}
	if (t->ring && t->blk)
		t->ring_calls[t->ring_slot] = t->blk_calls;
	if (!t->ring || t->nring < t->ring_max) {
		idx = claim(tr, JPT_BLOCK_EVENTS);
		if (idx != UINT64_MAX) {
			b = block_at(tr, idx);
			if (t->ring) {
				t->ring[t->nring] = idx;
				t->ring_slot = t->nring++;
			}
		}
	}
	if (!b && t->ring && t->nring >= 2) {
		/* the oldest block of the ring: what it holds is dropped */
		t->ring_slot = t->ring_cur;
		t->ring_cur = (t->ring_cur + 1) % t->nring;
		t->drop_ring += t->ring_calls[t->ring_slot];
		b = block_at(tr, t->ring[t->ring_slot]);
	}
	errno = saved;
	if (!b) {
		t->trace_full = 1;
		return -ENOSPC;
	}
	block_start(t, b);
	t->blkseq++;
	t->blk_calls = 0;
	t->blk = b;
	t->pos = (char *)(b + 1);
	t->end = (char *)b + tr->block_size;
	return 0;
}

/* Room for bytes more in the current block, or a new block. */
static int room(struct jp_thread *t, size_t bytes)
{
	return jp_trace_fits(t, bytes) ? 0 : new_block(t->in, t);
}

void *jp_trace_scratch(struct jp_thread *t)
{
	void *p = mmap(NULL, JPT_BLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	jp_trace_scratch_rewind(t, p);
	return p;
}

void jp_trace_scratch_rewind(struct jp_thread *t, void *scratch)
{
	t->blk = scratch;
	t->pos = (char *)(t->blk + 1);
	t->end = (char *)scratch + JPT_BLOCK_SIZE;
}

int jp_trace_entry(struct jp_thread *t, const struct jp_frame *f)
{
	const struct jp_frame *p = f;
	const uint32_t *stack = t->stack;     /* the thread's own: jitperf__tls.stack */
	uint32_t from, n, more, listed;
	size_t bytes;
	char *w;

	/* an id without its FN record yet (the file's metadata is full) */
	if (f->fn > t->meta_fns &&
	    f->fn > (t->meta_fns = __atomic_load_n(&t->in->trace->meta_fns, __ATOMIC_ACQUIRE)))
		return -1;
	while (p > t->frames && !p[-1].written)
		p--;
	from = p > t->frames ? p[-1].sdepth + 1 : 0;
	n = f->sdepth > from ? f->sdepth - from : 0;
	listed = n > JPT_CTX_MAX ? JPT_CTX_MAX : n;
	more = n - listed;
	bytes = t->event_size + (n || f->framed ? 8 + (listed * 4 + 7) / 8 * 8 : 0);
	if (room(t, bytes))
		return -1;
	w = t->pos;
	if (n || f->framed) {
		uint32_t id;

		w = jp_trace_put64(w, JPT_CTX_WORD(listed, more) | (f->framed ? JPT_CTX_PARTIAL : 0));
		for (uint32_t i = 0; i < listed; i++, w += 4) {
			id = JP_ID(stack[f->sdepth - listed + i]);
			memcpy(w, &id, 4);
		}
		if (listed & 1) {
			id = 0;
			memcpy(w, &id, 4);
			w += 4;
		}
	}
	w = jp_trace_put(t, w, 0, 0, f->fn, f->start, t->nctr ? f->ctr : NULL);
	jp_trace_commit(t, w);
	t->blk_calls++;
	t->traced++;
	return 0;
}

int jp_trace_exit(struct jp_thread *t, const struct jp_frame *f, uint64_t now,
		  const uint64_t *ctr, int repaired)
{
	char *w;

	if (room(t, t->event_size + 8))
		return -1;
	w = jp_trace_put(t, t->pos, 1, repaired, f->fn, now, ctr);
	jp_trace_commit(t, w);
	return 0;
}

/* Append one metadata record; caller holds in->lock.  0 or -1 (full). */
static int meta_append(struct jp_instr *in, const void *rec, size_t size)
{
	struct jp_trace *tr = in->trace;
	struct jpt_block_header *b;

	if (!tr || size > tr->block_size - sizeof(*b))
		return -1;
	b = tr->meta;
	if (!b || b->used + sizeof(*b) + size > tr->block_size) {
		uint64_t idx = claim(tr, JPT_BLOCK_META);

		if (idx == UINT64_MAX)
			return -1;
		b = block_at(tr, idx);
		b->kind = JPT_BLOCK_META;
		b->seq = tr->meta_seq++;
		b->used = 0;
		jp_clock_pair(&b->cal_tick, &b->cal_ns);
		__atomic_store_n(&b->magic, JPT_BLOCK_MAGIC, __ATOMIC_RELEASE);
		tr->meta = b;
	}
	memcpy((char *)(b + 1) + b->used, rec, size);
	__atomic_store_n(&b->used, b->used + (uint32_t)size, __ATOMIC_RELEASE);
	return 0;
}

/* Fixed part + name + NUL, rounded to 8; names longer than 4000 bytes are cut. */
static int meta_named(struct jp_instr *in, void *fixed, size_t fixed_len, const char *name)
{
	char buf[4096] __attribute__((aligned(8)));
	size_t nlen = strnlen(name ? name : "", 4000);
	size_t size = (fixed_len + nlen + 1 + 7) & ~(size_t)7;

	memset(buf, 0, size);
	memcpy(buf, fixed, fixed_len);
	memcpy(buf + fixed_len, name ? name : "", nlen);
	((struct jpt_meta_header *)buf)->size = (uint32_t)size;
	return meta_append(in, buf, size);
}

void jp_trace_meta_fn(struct jp_instr *in, jitperf_fn id)
{
	const struct jp_fnent *e = jp_fnent(in, id);
	struct jpt_meta_fn r = { .h.type = JPT_META_FN, .id = id, .addr = e->addr, .len = e->len };

	/* ids are added in order: events of an id are written once its
	 * name is in the file */
	if (in->trace && id == in->trace->meta_fns + 1 && !meta_named(in, &r, sizeof(r), e->name))
		__atomic_store_n(&in->trace->meta_fns, id, __ATOMIC_RELEASE);
}

void jp_trace_meta_thread(struct jp_instr *in, struct jp_thread *t)
{
	struct jpt_meta_thread r = { .h.type = JPT_META_THREAD, .thread = t->serial, .tid = t->tid };
	char path[64], name[32] = "";
	int fd;

	memcpy(name, t->name, sizeof(t->name));
	/* A live thread may have been renamed since its first event. */
	snprintf(path, sizeof(path), "/proc/self/task/%u/comm", t->tid);
	if (!t->dead && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t n = read(fd, name, sizeof(name) - 1);

		close(fd);
		if (n > 0) {
			name[n] = 0;
			name[strcspn(name, "\n")] = 0;
		}
	}
	(void)meta_named(in, &r, sizeof(r), name);
}

void jp_trace_meta_code(struct jp_instr *in, enum jpt_code_kind kind, uint64_t index,
			uint64_t addr, uint64_t len, const char *name)
{
	struct jpt_meta_code r = {
		.h.type = JPT_META_CODE, .kind = (uint32_t)kind, .tid = (uint32_t)gettid(),
		.tick = jp_ticks(), .index = index, .addr = addr, .len = len,
	};

	(void)meta_named(in, &r, sizeof(r), name);
}

void jp_trace_meta_cal(struct jp_instr *in)
{
	struct jpt_meta_cal r = { .h = { JPT_META_CAL, 0, sizeof(r) } };

	jp_clock_pair(&r.tick, &r.ns);
	(void)meta_append(in, &r, sizeof(r));
}

void jp_trace_costs(struct jp_instr *in)
{
	struct jpt_file_header *h = in->trace ? hdr(in->trace) : NULL;

	for (int i = 0; h && i < JPT_NCOSTS; i++)
		h->probe_ps[i] = (uint32_t)(in->cost.c[i] * 1e12 / (double)in->ticks_per_sec + 0.5);
}

void jp_trace_close(struct jp_instr *in, int finish)
{
	struct jp_trace *tr = in->trace;

	if (!tr)
		return;
	if (finish)
		filler_stop(tr);
	if (finish) {
		struct jpt_file_header *h = hdr(tr);
		uint64_t n = __atomic_load_n(&tr->next_block, __ATOMIC_RELAXED);

		if (n > tr->file_blocks)
			n = tr->file_blocks;
		struct jp_totals tot;

		jp_totals(in, &tot);
		h->calls = tot.calls;
		h->timed = tot.timed;
		h->dropped_full = tot.drop_full;
		h->dropped_short = tot.drop_short;
		h->dropped_ring = tot.drop_ring;
		jp_clock_pair(&h->close_tick, &h->close_ns);
		h->nblocks = n;
		__atomic_store_n(&h->flags, h->flags | JPT_FLAG_CLOSED, __ATOMIC_RELEASE);
		munmap(tr->map, tr->map_len);
		/* Drop the blocks grown ahead but never claimed. */
		if (ftruncate(tr->fd, (off_t)(JPT_HEADER_SIZE + n * tr->block_size)))
			(void)0;
	} else {
		munmap(tr->map, tr->map_len);
	}
	close(tr->fd);
	pthread_mutex_destroy(&tr->grow_lock);
	free(tr->path);
	free(tr);
	in->trace = NULL;
}
