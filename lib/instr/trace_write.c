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
 * grows the file and populates the pages of the next FILL_AHEAD blocks,
 * polling while the trace grows and sleeping when it does not.  A writer
 * that outruns it still works (it takes the faults itself).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "instr.h"

#define MAP_RESERVE   (UINT64_C(4) << 30)    /* largest trace: 4 GiB */
#define GROW_BLOCKS   64u                    /* file grows by 4 MiB at a time */
#define FILL_AHEAD    64u                    /* blocks kept populated past next_block */
#define FILL_CHUNK    8u                     /* blocks per madvise */
#define POLL_NS       1000000L               /* filler poll while the trace grows ... */
#define IDLE_ROUNDS   50u                    /* ... until it has not for this many polls */

static int grow(struct jp_trace *tr, uint64_t idx);

static struct jpt_file_header *hdr(struct jp_trace *tr)
{
	return (struct jpt_file_header *)tr->map;
}

static void futex_wait(int *word, int val, const struct timespec *ts)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, ts, NULL, 0);
}

static void futex_wake(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
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

static void *filler_main(void *arg)
{
	struct jp_trace *tr = arg;
	uint64_t max = (tr->map_len - JPT_HEADER_SIZE) / tr->block_size;
	unsigned quiet = 0;

	while (!__atomic_load_n(&tr->stop, __ATOMIC_ACQUIRE)) {
		int seen = __atomic_load_n(&tr->wake, __ATOMIC_ACQUIRE);
		uint64_t want = __atomic_load_n(&tr->next_block, __ATOMIC_RELAXED) + FILL_AHEAD;
		uint64_t have = tr->ready;
		struct timespec poll = { 0, POLL_NS };

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
		if (++quiet < IDLE_ROUNDS) {
			futex_wait(&tr->wake, seen, &poll);
			continue;
		}
		/* Nothing written for a while: sleep until a writer claims a block. */
		__atomic_store_n(&tr->idle, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&tr->next_block, __ATOMIC_SEQ_CST) + FILL_AHEAD <= have &&
		    !__atomic_load_n(&tr->stop, __ATOMIC_SEQ_CST))
			futex_wait(&tr->wake, seen, NULL);
		__atomic_store_n(&tr->idle, 0, __ATOMIC_RELAXED);
		quiet = 0;
	}
	return NULL;
}

/* Start the filler with every signal blocked: the program's signals are
 * not for it. */
static void filler_start(struct jp_trace *tr)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	tr->filler_on = !pthread_create(&tr->filler, NULL, filler_main, tr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (tr->filler_on)      /* named before it runs: ps and perf show it so */
		pthread_setname_np(tr->filler, "jitperf-fill");
}

static void filler_stop(struct jp_trace *tr)
{
	if (!tr->filler_on)
		return;
	__atomic_store_n(&tr->stop, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&tr->wake, 1, __ATOMIC_SEQ_CST);
	futex_wake(&tr->wake);
	pthread_join(tr->filler, NULL);
	tr->filler_on = 0;
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
	tr->fd = open(tr->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (tr->fd < 0 || ftruncate(tr->fd, JPT_HEADER_SIZE)) {
		err = -errno;
		goto fail;
	}
	tr->map_len = MAP_RESERVE;
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
	h->sample_every = in->sample_every;
	h->ncounters = in->counters.n;
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
		close(tr->fd);
		unlink(tr->path);
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

static struct jpt_block_header *claim(struct jp_trace *tr, uint32_t kind, uint32_t seq)
{
	uint64_t idx = __atomic_fetch_add(&tr->next_block, 1, __ATOMIC_SEQ_CST);
	struct jpt_block_header *b;

	if (JPT_HEADER_SIZE + (idx + 1) * tr->block_size > tr->map_len || grow(tr, idx))
		return NULL;
	/* The filler went to sleep: wake it (once per idle period). */
	if (__builtin_expect(__atomic_load_n(&tr->idle, __ATOMIC_SEQ_CST), 0) &&
	    __atomic_exchange_n(&tr->idle, 0, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(&tr->wake, 1, __ATOMIC_SEQ_CST);
		futex_wake(&tr->wake);
	}
	b = (struct jpt_block_header *)(tr->map + JPT_HEADER_SIZE + idx * tr->block_size);
	b->kind = kind;
	b->seq = seq;
	b->used = 0;
	jp_clock_pair(&b->cal_tick, &b->cal_ns);
	return b;
}

int jp_trace_new_block(struct jp_instr *in, struct jp_thread *t)
{
	struct jp_trace *tr = in->trace;
	struct jpt_block_header *b;
	int saved = errno;         /* called from probes: keep the program's errno */

	b = t->trace_full ? NULL : claim(tr, JPT_BLOCK_EVENTS, t->blkseq);
	errno = saved;
	if (!b) {
		t->trace_full = 1;
		t->fast = 0;            /* probes then read no clock for events they drop */
		return -ENOSPC;
	}
	t->blkseq++;
	b->thread = t->serial;
	b->tid = t->tid;
	b->base_tick = t->last_tick;
	memcpy(b->name, t->name, sizeof(b->name));
	__atomic_store_n(&b->magic, JPT_BLOCK_MAGIC, __ATOMIC_RELEASE);
	t->blk = b;
	t->pos = (char *)(b + 1);
	t->end = (char *)b + tr->block_size;
	return 0;
}

/* Append one metadata record; caller holds in->lock. */
static void meta_append(struct jp_instr *in, const void *rec, size_t size)
{
	struct jp_trace *tr = in->trace;
	struct jpt_block_header *b;

	if (!tr || size > tr->block_size - sizeof(*b))
		return;
	b = tr->meta;
	if (!b || b->used + sizeof(*b) + size > tr->block_size) {
		if (!(b = claim(tr, JPT_BLOCK_META, tr->meta_seq)))
			return;
		tr->meta_seq++;
		__atomic_store_n(&b->magic, JPT_BLOCK_MAGIC, __ATOMIC_RELEASE);
		tr->meta = b;
	}
	memcpy((char *)(b + 1) + b->used, rec, size);
	__atomic_store_n(&b->used, b->used + (uint32_t)size, __ATOMIC_RELEASE);
}

/* Fixed part + name + NUL, rounded to 8; names longer than 4000 bytes are cut. */
static void meta_named(struct jp_instr *in, void *fixed, size_t fixed_len, const char *name)
{
	char buf[4096] __attribute__((aligned(8)));
	size_t nlen = strnlen(name ? name : "", 4000);
	size_t size = (fixed_len + nlen + 1 + 7) & ~(size_t)7;

	memset(buf, 0, size);
	memcpy(buf, fixed, fixed_len);
	memcpy(buf + fixed_len, name ? name : "", nlen);
	((struct jpt_meta_header *)buf)->size = (uint32_t)size;
	meta_append(in, buf, size);
}

void jp_trace_meta_fn(struct jp_instr *in, jitperf_fn id)
{
	const struct jp_fnent *e = jp_fnent(in, id);
	struct jpt_meta_fn r = { .h.type = JPT_META_FN, .id = id, .addr = e->addr, .len = e->len };

	meta_named(in, &r, sizeof(r), e->name);
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
	meta_named(in, &r, sizeof(r), name);
}

void jp_trace_meta_code(struct jp_instr *in, enum jpt_code_kind kind, uint64_t index,
			uint64_t addr, uint64_t len, const char *name)
{
	struct jpt_meta_code r = {
		.h.type = JPT_META_CODE, .kind = (uint32_t)kind, .tid = (uint32_t)gettid(),
		.tick = jp_ticks(), .index = index, .addr = addr, .len = len,
	};

	meta_named(in, &r, sizeof(r), name);
}

void jp_trace_meta_cal(struct jp_instr *in)
{
	struct jpt_meta_cal r = { .h = { JPT_META_CAL, 0, sizeof(r) } };

	jp_clock_pair(&r.tick, &r.ns);
	meta_append(in, &r, sizeof(r));
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
