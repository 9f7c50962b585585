/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Appending whole records with no system call per record: each is copied
 * into a ring, a shared mapping of a small file beside the output
 * (<file>.ring, lib/ring_format.h), and written to the output in batches.
 *
 * Why a ring and not a mapping of the output itself: every new page a
 * process maps costs 15-20 us on a VM with shadow page tables (where a
 * write() of a record costs 2 us, and a write() of 64 KiB 1 us a page).
 * The ring's pages are mapped once and then reused; the output's pages are
 * filled by write(), through the kernel's own mapping.
 *
 * - The output is grown in steps of JP_BATCHFILE_STEP with fallocate():
 *   its blocks exist before a record is accepted, so a full disk fails as
 *   -ENOSPC from the append, never later.  Its grown tail is zeros.
 * - A batch is written with its first bytes (a record's head: a jitdump
 *   record's id and size, a perf map line's leading newline) last.  Until
 *   then the file shows the zeros of its grown tail there, which its
 *   readers take as its end: the file never shows half a record (what a
 *   kill cut short hides behind those zeros; for lines, see
 *   write_ring_lines).
 * - A killed process leaves the records not yet written in the ring file:
 *   the ring's header says which (committed, flushed), and jitperf record
 *   puts them in the file (read/ring_read.c).  At close, or at exit, all
 *   is written, the file cut to its records and the ring file removed.
 * - One flusher thread per process writes every file's ring out: within a
 *   millisecond of a record while records come.  In a pause it looks less
 *   and less often (2, 4, ... 64 ms), and after a second without records
 *   it sleeps.  Only a writer that finds it asleep wakes it (one futex
 *   call after a pause of a second or more): waking a sleeping thread
 *   cost the writer 33 us on a VM, and a JIT that compiles a function
 *   every few milliseconds would pay that for each.  A writer that finds
 *   the ring full writes it out itself.  The flusher also keeps the
 *   output grown ahead of the writer, and the memory of the session's
 *   code table touched ahead of its use (struct jp_ahead).
 *
 * - Records made later (struct jp_later): a jitdump's debug and unwind
 *   records that libjitperf-llvm's listener leaves for later (lib/later.h)
 *   go into the file in front of the record they belong to, made by
 *   whoever writes that part out.  So the file holds more than the ring's
 *   stream: the file offset of the stream's flushed byte is kept apart
 *   (file_at; in the ring's header, a pair switched by one store).
 * - The ring is 256 KiB: an object of a few hundred functions fits, so
 *   its loads do not find it full (and make the records themselves), while
 *   two rings stay well inside a 1 MiB second-level cache.  The flusher
 *   makes its pages writable once, before the writers get to them.
 *
 * Without fallocate() (a file system that lacks it) or when JITPERF_IO=write
 * asks for it, records go out with one write() each (lib/fileio.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "ring_format.h"

#define RING_SIZE  ((uint64_t)256 << 10)   /* records waiting to be written, at most */
#define GROW_AHEAD ((uint64_t)1 << 20)     /* the flusher keeps this much grown past the records */
#define FLUSH_NS   1000000L                /* while records come, written this often */
#define DOZE_NS    64000000L               /* after a pause, at least this often */
#define SLEEP_NS   1000000000L             /* a pause this long: asleep until woken */

/* The flusher: one thread for every batched file of the process. */
static struct {
	pthread_mutex_t      lock;   /* the list, and the files' lives while it works on them */
	struct jp_batchfile *files;
	pthread_t            thread;
	int                  running;
	int                  stop;
	int                  idle;   /* asleep until woken: a writer with records wakes it */
	int                  wake;   /* futex word */
	int                  exiting;/* exit() began: records go straight to the file */
	int                  atexit_set;
	int                  asym;   /* membarrier() serves: writers need no fence */
	struct jp_ahead     *aheads; /* memory it keeps touched ahead of its use */
	pid_t                pid;    /* the process whose files these are; 0: none yet */
} fl = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * A writer stores a file's size, then reads fl.idle and fl.exiting; the
 * flusher (or exit()) stores those, then reads the sizes.  Each side needs
 * a full fence between its store and its load, or both may miss the
 * other's store.  A fence costs a writer 100 ns and more (its record's
 * stores must reach the cache first), so the writer has none: the other
 * side, rarely there, makes every thread of the process run one with
 * membarrier().  Where that is refused, writers fence.
 */
static void fence_writers(void)
{
	if (!fl.asym || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void writer_fence(void)
{
	if (__atomic_load_n(&fl.asym, __ATOMIC_RELAXED))
		__atomic_signal_fence(__ATOMIC_SEQ_CST);        /* the compiler's only */
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Allocate the file up to at least need bytes; f->lock held. */
static int grow_locked(struct jp_batchfile *f, uint64_t need)
{
	uint64_t page = page_size();
	uint64_t want = (need + JP_BATCHFILE_STEP + page - 1) & ~(page - 1), old = f->alloc;
	int err;

	if (need <= old)
		return 0;
	/* a big step first; when that does not fit, only what is needed */
	err = posix_fallocate(f->fd, (off_t)old, (off_t)(want - old));
	if (err == ENOSPC || err == EDQUOT) {
		want = (need + page - 1) & ~(page - 1);
		err = posix_fallocate(f->fd, (off_t)old, (off_t)(want - old));
	}
	if (err) {
		/* a failed fallocate may leave the file longer: back to what we know */
		if (ftruncate(f->fd, (off_t)old) < 0)
			return -EIO;
		return -err;
	}
	__atomic_store_n(&f->alloc, want, __ATOMIC_RELEASE);
	return 0;
}

static int grow(struct jp_batchfile *f, uint64_t need)
{
	int err;

	pthread_mutex_lock(&f->lock);
	err = grow_locked(f, need);
	pthread_mutex_unlock(&f->lock);
	return err;
}

/* pwrite() all of iov at off. */
static int pwrite_whole(int fd, struct iovec *iov, int n, uint64_t off)
{
	while (n > 0) {
		ssize_t w = pwritev(fd, iov, n < IOV_MAX ? n : IOV_MAX, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		off += (uint64_t)w;
		n = jp_iov_advance(&iov, n, (size_t)w);
	}
	return 0;
}

/* The ring's bytes [from, to) of the stream as iovecs (1 or 2): how many. */
static int ring_iov(const struct jp_batchfile *f, uint64_t from, uint64_t to, struct iovec *iov)
{
	uint64_t at = from & (RING_SIZE - 1), len = to - from;

	iov[0].iov_base = f->data + at;
	iov[0].iov_len = (size_t)len;
	if (at + len <= RING_SIZE)
		return len ? 1 : 0;
	iov[0].iov_len = (size_t)(RING_SIZE - at);
	iov[1].iov_base = f->data;
	iov[1].iov_len = (size_t)(len - iov[0].iov_len);
	return 2;
}

/* Write the ring's bytes [from, to) of the stream to the file at pos. */
static int write_ring(struct jp_batchfile *f, uint64_t from, uint64_t to, uint64_t pos)
{
	struct iovec iov[2];
	int n = ring_iov(f, from, to, iov);

	return n ? pwrite_whole(f->fd, iov, n, pos) : 0;
}

/*
 * The same for lines (a perf map), one page of the file at a time, the
 * last first.  A write() that a SIGKILL cuts short stops at a page (folio)
 * boundary, and the lines after the batch's first become visible as soon
 * as they are written (a newline starts each): in one write(), a kill
 * could leave a line cut at a page boundary, then zeros.  Written back to
 * front, what is written starts on a page boundary after zeros: the line
 * it cuts is glued to the zeros, hidden behind the NUL that ends the
 * previous name for perf, like everything up to the next newline.
 */
static int write_ring_lines(struct jp_batchfile *f, uint64_t from, uint64_t to, uint64_t pos)
{
	uint64_t page = page_size(), start, d = pos - from;     /* lines have no laters: d is 0 */
	int err = 0;

	for (; !err && to > from; to = start) {
		start = ((to + d - 1) & ~(page - 1)) - d;
		if (start < from)
			start = from;
		err = write_ring(f, start, to, start + d);
	}
	return err;
}

/* Where the file holds the stream up to flushed, in the ring's header too
 * (one store makes the new pair the one in force) and for writers. */
static void set_flushed(struct jp_batchfile *f, uint64_t flushed, uint64_t file_at)
{
	uint64_t s = !f->ring->which;

	f->ring->slot[s].flushed = flushed;
	f->ring->slot[s].file_at = file_at;
	__atomic_store_n(&f->ring->which, s, __ATOMIC_RELEASE);
	f->file_at = file_at;
	__atomic_store_n(&f->delta, file_at - flushed, __ATOMIC_RELEASE);
	__atomic_store_n(&f->flushed, flushed, __ATOMIC_RELEASE);
}

/* ---- laters */

static void drop_later(struct jp_later *l)
{
	free(l->buf);
	l->buf = NULL;
	l->drop(l);
}

static void drop_laters_from_list(struct jp_later *l)
{
	struct jp_later *next;

	for (; l; l = next) {
		next = l->next;
		drop_later(l);
	}
}

/* The laters before stream byte to, off f's list, in order. */
static struct jp_later *take_laters(struct jp_batchfile *f, uint64_t to)
{
	struct jp_later *taken, **p;

	pthread_mutex_lock(&f->later_lock);
	taken = f->later;
	for (p = &f->later; *p && (*p)->at < to; p = &(*p)->next)
		;
	f->later = *p;
	*p = NULL;
	if (!f->later)
		f->later_end = &f->later;
	pthread_mutex_unlock(&f->later_lock);
	return taken;
}

/* Taken laters back at the front of the list (a write failed: tried again). */
static void put_back_laters(struct jp_batchfile *f, struct jp_later *taken)
{
	struct jp_later **p;

	if (!taken)
		return;
	pthread_mutex_lock(&f->later_lock);
	for (p = &taken; *p; p = &(*p)->next)
		;
	*p = f->later;
	if (!f->later)
		f->later_end = p;
	f->later = taken;
	pthread_mutex_unlock(&f->later_lock);
}

/* Drop the laters at stream byte from and after (a rollback; close without writing). */
static void drop_laters_from(struct jp_batchfile *f, uint64_t from)
{
	struct jp_later *l, **p;

	pthread_mutex_lock(&f->later_lock);
	for (p = &f->later; *p && (*p)->at < from; p = &(*p)->next)
		;
	l = *p;
	*p = NULL;
	f->later_end = p;
	pthread_mutex_unlock(&f->later_lock);
	drop_laters_from_list(l);
}

/*
 * Make the laters' bytes; the file grown for them and for a whole ring
 * after them (what writers may append meanwhile counts on that).  Where
 * the file cannot grow, nothing goes in.  Returns the bytes they add.
 */
static uint64_t make_laters(struct jp_batchfile *f, struct jp_later *taken, uint64_t from,
			    uint64_t to)
{
	uint64_t add = 0;
	struct jp_later *l;

	for (l = taken; l; l = l->next) {
		if (!l->made && l->make(l, &l->buf, &l->len)) {
			l->buf = NULL;
			l->len = 0;
		}
		l->made = 1;
		add += l->len;
	}
	if (add && grow_locked(f, f->file_at + (to - from) + add + RING_SIZE)) {
		jp_debug("%s: no room for records made later: left out", f->ring_path);
		for (l = taken; l; l = l->next) {
			free(l->buf);
			l->buf = NULL;
			l->len = 0;
		}
		add = 0;
	}
	return add;
}

/*
 * The ring's bytes [from, to) of the stream with each later's bytes in
 * front of its byte: as iovecs in v (malloc'ed when stack_v is too small).
 */
static int batch_iov(const struct jp_batchfile *f, uint64_t from, uint64_t to,
		     struct jp_later *taken, struct iovec *stack_v, int stack_n, struct iovec **v)
{
	struct jp_later *l;
	int n = 0, cap = 2;

	for (l = taken; l; l = l->next)
		cap += 3;
	*v = cap <= stack_n ? stack_v : malloc((size_t)cap * sizeof(**v));
	if (!*v)
		return -ENOMEM;
	for (l = taken; l; l = l->next) {
		n += ring_iov(f, from, l->at, *v + n);
		if (l->len) {
			(*v)[n].iov_base = l->buf;
			(*v)[n++].iov_len = l->len;
		}
		from = l->at;
	}
	return n + ring_iov(f, from, to, *v + n);
}

/* Write iov (n entries, len bytes in all) at pos, its first head_len bytes last. */
static int write_head_last(struct jp_batchfile *f, struct iovec *iov, int n, uint64_t len,
			   uint64_t pos)
{
	unsigned char head[16];
	size_t h = f->head_len < len ? f->head_len : (size_t)len, got = 0;
	struct iovec hv = { head, h }, *rest = iov;
	int err;

	for (int i = 0; i < n && got < h; i++) {
		size_t k = iov[i].iov_len < h - got ? iov[i].iov_len : h - got;

		memcpy(head + got, iov[i].iov_base, k);
		got += k;
	}
	n = jp_iov_advance(&rest, n, h);
	err = n ? pwrite_whole(f->fd, rest, n, pos + h) : 0;
	return err ? err : pwrite_whole(f->fd, &hv, 1, pos);
}

/*
 * Write out what waits in the ring, f->lock held: the batch's head last,
 * then flushed moves on (in the ring's header too, after the bytes).
 */
static int flush_locked(struct jp_batchfile *f)
{
	uint64_t from = f->flushed, to = __atomic_load_n(&f->size, __ATOMIC_ACQUIRE), add;
	struct iovec stack_v[16], *v;
	struct jp_later *taken;
	int err, n;

	if (from >= to)
		return 0;
	if (f->lines) {
		err = write_ring_lines(f, from + f->head_len, to, f->file_at + f->head_len);
		if (!err)
			err = write_ring(f, from, from + f->head_len, f->file_at);
		if (!err)
			set_flushed(f, to, f->file_at + (to - from));
		return err;     /* on error, the records stay in the ring */
	}
	taken = take_laters(f, to);
	add = taken ? make_laters(f, taken, from, to) : 0;
	n = batch_iov(f, from, to, taken, stack_v, sizeof(stack_v) / sizeof(*stack_v), &v);
	err = n < 0 ? n : write_head_last(f, v, n, to - from + add, f->file_at);
	if (v != stack_v && n >= 0)
		free(v);
	if (err) {
		put_back_laters(f, taken);      /* made: written with the records next time */
		return err;
	}
	set_flushed(f, to, f->file_at + (to - from) + add);
	drop_laters_from_list(taken);
	return 0;
}

/* A record bigger than the ring goes straight to the file, f->lock held
 * and the ring written out: a later's bytes first, the head of it all last. */
static int put_direct(struct jp_batchfile *f, const void *head, size_t head_len,
		      const void *body, size_t body_len)
{
	uint64_t at = f->size, pos = f->file_at, len = head_len + body_len, add;
	struct jp_later *taken = take_laters(f, at + 1), *l;
	struct iovec v[4];
	int n = 0, err;

	add = taken ? make_laters(f, taken, at, at) : 0;
	for (l = taken; l; l = l->next)         /* one at most: a record has one */
		if (l->len && n < 2) {
			v[n].iov_base = l->buf;
			v[n++].iov_len = l->len;
		}
	v[n].iov_base = (void *)head;
	v[n++].iov_len = head_len;
	v[n].iov_base = (void *)body;
	v[n++].iov_len = body_len;
	err = grow_locked(f, pos + add + len);
	if (!err)
		err = write_head_last(f, v, n, add + len, pos);
	if (err) {
		put_back_laters(f, taken);
		return err;
	}
	drop_laters_from_list(taken);
	set_flushed(f, at + len, pos + add + len);
	__atomic_store_n(&f->ring->committed, at + len, __ATOMIC_RELEASE);
	__atomic_store_n(&f->size, at + len, __ATOMIC_SEQ_CST);
	return 0;
}

/* Copy n bytes to the ring at the file's offset off. */
static void ring_copy(struct jp_batchfile *f, uint64_t off, const void *src, size_t n)
{
	uint64_t at = off & (RING_SIZE - 1);
	size_t first = at + n > RING_SIZE ? (size_t)(RING_SIZE - at) : n;

	memcpy(f->data + at, src, first);
	if (first < n)
		memcpy(f->data, (const char *)src + first, n - first);
}

/* ---- the flusher thread */

/*
 * The ring's pages written to once, here, not by the first record that
 * lands on each: a shared mapping's page is mapped read-only until then,
 * and the fault that makes it writable costs microseconds on a VM.  A
 * store that changes nothing, also where a writer stores at once.
 */
static int touch_ring(struct jp_batchfile *f)
{
	uint64_t page = page_size(), p;

	if (f->touched >= RING_SIZE)
		return 0;
	for (p = f->touched; p < RING_SIZE; p += page)
		__atomic_fetch_add((int *)(void *)(f->data + p), 0, __ATOMIC_RELAXED);
	f->touched = RING_SIZE;
	return 1;
}

/* Grow f ahead and write out its ring: 1 if there was work. */
static int service(struct jp_batchfile *f)
{
	uint64_t size = __atomic_load_n(&f->size, __ATOMIC_SEQ_CST);
	uint64_t end = size + __atomic_load_n(&f->delta, __ATOMIC_ACQUIRE);     /* in the file */
	int work = 0;

	if (f->flushed < size || (!f->grow_failed && f->alloc < end + GROW_AHEAD / 2)) {
		pthread_mutex_lock(&f->lock);
		if (!f->grow_failed && grow_locked(f, size + f->delta + GROW_AHEAD))
			f->grow_failed = 1;     /* a full disk: the writer will see it too */
		work = f->flushed < size;
		if (work && flush_locked(f))
			work = 0;               /* an I/O error: kept, tried again at close */
		pthread_mutex_unlock(&f->lock);
	}
	return work;
}

/* ---- memory kept ahead */

#define TOUCH_AHEAD ((uint64_t)256 << 10)

/* Touch a's pages up to TOUCH_AHEAD past its use, when less than half is left. */
static int top_up(struct jp_ahead *a)
{
	uint64_t used = __atomic_load_n(&a->used, __ATOMIC_ACQUIRE), page = page_size(), want, p;

	if (a->ready >= used + TOUCH_AHEAD / 2 || a->ready >= a->size)
		return 0;
	want = used + TOUCH_AHEAD < a->size ? used + TOUCH_AHEAD : a->size;
	/* a store that changes nothing, also where the user stores at once */
	for (p = a->ready & ~(page - 1); p < want; p += page)
		__atomic_fetch_add((int *)(void *)(a->base + p), 0, __ATOMIC_RELAXED);
	a->ready = want;
	return 1;
}

static int pending(void)
{
	struct jp_batchfile *f;

	for (f = fl.files; f; f = f->next)
		if (f->flushed < __atomic_load_n(&f->size, __ATOMIC_SEQ_CST))
			return 1;
	return 0;
}

static void *flusher_main(void *arg)
{
	long wait_ns = FLUSH_NS, quiet_ns = 0;

	(void)arg;
	pthread_mutex_lock(&fl.lock);
	while (!fl.stop) {
		struct jp_batchfile *f;
		struct jp_ahead *a;
		struct timespec tick, *timeout = &tick;
		int work = 0, seen = __atomic_load_n(&fl.wake, __ATOMIC_SEQ_CST);

		for (f = fl.files; f; f = f->next)
			work |= service(f) | touch_ring(f);
		for (a = fl.aheads; a; a = a->next)
			work |= top_up(a);
		if (work) {
			/* records came: more will, written a tick from now */
			wait_ns = FLUSH_NS;
			quiet_ns = 0;
		} else if (quiet_ns < SLEEP_NS) {
			/* a pause: looked at less and less often, never woken */
			quiet_ns += wait_ns;
			wait_ns = wait_ns < DOZE_NS / 2 ? 2 * wait_ns : DOZE_NS;
		} else {
			/* a long pause: asleep until a writer wakes us */
			__atomic_store_n(&fl.idle, 1, __ATOMIC_SEQ_CST);
			fence_writers();
			if (pending()) {
				__atomic_store_n(&fl.idle, 0, __ATOMIC_SEQ_CST);
				continue;
			}
			timeout = NULL;
		}
		if (!fl.stop) {
			tick.tv_sec = 0;
			tick.tv_nsec = wait_ns;
			pthread_mutex_unlock(&fl.lock);
			jp_futex_wait(&fl.wake, seen, timeout);
			pthread_mutex_lock(&fl.lock);
		}
		__atomic_store_n(&fl.idle, 0, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&fl.lock);
	return NULL;
}

static void flusher_wake(void)
{
	__atomic_fetch_add(&fl.wake, 1, __ATOMIC_SEQ_CST);
	jp_futex_wake(&fl.wake);
}

/*
 * exit() with sessions still open: whatever waits is written out, each
 * file cut to its records and its ring removed, and from then on each
 * record goes straight to its file, since the flusher may be gone.  A
 * writer that raced with this sees fl.exiting after its record is in the
 * ring, and writes the ring out itself (the ring stays mapped for it).
 */
static void flush_at_exit(void)
{
	struct jp_batchfile *f;

	__atomic_store_n(&fl.exiting, 1, __ATOMIC_SEQ_CST);
	fence_writers();
	pthread_mutex_lock(&fl.lock);
	for (f = fl.files; f; f = f->next) {
		pthread_mutex_lock(&f->lock);
		if (flush_locked(f) == 0 && ftruncate(f->fd, (off_t)f->file_at) == 0)
			jp_remove_own(f->ring_path, f->ring_fd);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_unlock(&fl.lock);
}

/*
 * In a fork child the flusher thread and its list are the parent's: start
 * over.  Only the thread that forked runs in the child while the sessions
 * reopen their files there, so nothing else touches fl meanwhile.
 */
static void fl_own(void)
{
	pid_t owner = __atomic_load_n(&fl.pid, __ATOMIC_ACQUIRE);

	if (!owner || owner == getpid())
		return;
	pthread_mutex_init(&fl.lock, NULL);
	fl.files = NULL;
	fl.aheads = NULL;
	fl.running = fl.stop = fl.idle = fl.asym = 0;
	__atomic_store_n(&fl.pid, 0, __ATOMIC_RELEASE);
}

/* Start the thread, fl.lock held. */
static void fl_start(void)
{
	fl.stop = 0;
	fl.running = !jp_bgthread_start(&fl.thread, flusher_main, NULL, "jitperf-flush");
}

/* Stop the thread, fl.lock held; joined once the lock is dropped. */
static int fl_stop(pthread_t *t)
{
	if (!fl.running)
		return 0;
	fl.stop = 1;
	fl.running = 0;
	*t = fl.thread;
	return 1;
}

static void fl_join(pthread_t t)
{
	flusher_wake();
	pthread_join(t, NULL);
}

static void fl_add(struct jp_batchfile *f)
{
	fl_own();
	pthread_mutex_lock(&fl.lock);
	__atomic_store_n(&fl.pid, getpid(), __ATOMIC_RELEASE);
	f->next = fl.files;
	fl.files = f;
	if (!fl.running)
		fl_start();
	if (!fl.atexit_set)
		fl.atexit_set = !atexit(flush_at_exit);
	if (!fl.asym)
		fl.asym = !syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
	pthread_mutex_unlock(&fl.lock);
	flusher_wake();
}

/* f leaves the list; the last file stops the thread. */
static void fl_remove(struct jp_batchfile *f)
{
	struct jp_batchfile **p;
	pthread_t t = 0;
	int join = 0;

	fl_own();
	pthread_mutex_lock(&fl.lock);
	for (p = &fl.files; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	if (!fl.files)
		join = fl_stop(&t);
	pthread_mutex_unlock(&fl.lock);
	if (join)
		fl_join(t);
}

/* Across fork() the thread is stopped: the child never inherits it mid-way
 * (holding a lock of libc or of a sanitizer); writers write their rings
 * out themselves when full meanwhile.  Called with every session's lock
 * held, so no file comes or goes in between. */
static int fl_paused;

void jp_batchfile_fork_prepare(void)
{
	pthread_t t = 0;

	fl_own();
	pthread_mutex_lock(&fl.lock);
	fl_paused = fl_stop(&t);
	pthread_mutex_unlock(&fl.lock);
	if (fl_paused)
		fl_join(t);
}

void jp_batchfile_fork_parent(void)
{
	if (!fl_paused)
		return;
	fl_paused = 0;
	pthread_mutex_lock(&fl.lock);
	if (fl.files && !fl.running)
		fl_start();
	pthread_mutex_unlock(&fl.lock);
	flusher_wake();
}

/* ---- memory kept ahead: in the flusher's list while it exists */

int jp_ahead_init(struct jp_ahead *a, uint64_t size)
{
	void *m = MAP_FAILED;

	memset(a, 0, sizeof(*a));
	/* address space only: pages come as they are touched */
	for (; size >= ((uint64_t)1 << 20); size /= 2) {
		m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m != MAP_FAILED)
			break;
	}
	if (m == MAP_FAILED)
		return -ENOMEM;
	a->base = m;
	a->size = size;
	fl_own();
	pthread_mutex_lock(&fl.lock);
	a->next = fl.aheads;
	fl.aheads = a;
	pthread_mutex_unlock(&fl.lock);
	return 0;
}

void jp_ahead_free(struct jp_ahead *a)
{
	struct jp_ahead **p;

	if (!a->base)
		return;
	fl_own();
	pthread_mutex_lock(&fl.lock);
	for (p = &fl.aheads; *p; p = &(*p)->next)
		if (*p == a) {
			*p = a->next;
			break;
		}
	pthread_mutex_unlock(&fl.lock);
	munmap(a->base, (size_t)a->size);
	a->base = NULL;
}

/* ---- one file */

static void unmap_ring(struct jp_batchfile *f)
{
	munmap(f->ring, (size_t)(f->ring->data_offset + RING_SIZE));
	f->ring = NULL;
	f->data = NULL;
	close(f->ring_fd);
	f->ring_fd = -1;
}

int jp_batchfile_start(struct jp_batchfile *f, int fd, const char *path, uint64_t size,
		       size_t head_len, int lines)
{
	uint64_t page = page_size(), total = page + RING_SIZE;
	struct jp_ring_header *r;
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->fd_flags = fcntl(fd, F_GETFL);
	f->ring_fd = -1;
	f->size = f->flushed = f->file_at = f->alloc = size;
	f->head_len = head_len;
	f->lines = lines;
	f->later_end = &f->later;
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->later_lock, NULL);
	if (strlen(path) + sizeof(JP_RING_SUFFIX) > sizeof(f->ring_path))
		return -ENAMETOOLONG;
	strcpy(f->ring_path, path);
	strcat(f->ring_path, JP_RING_SUFFIX);
	/* the ring's blocks exist before it is mapped: a store never SIGBUSes */
	err = jp_create_fresh(f->ring_path, O_RDWR, &f->ring_fd);
	if (err)
		return err;
	err = -posix_fallocate(f->ring_fd, 0, (off_t)total);
	if (!err) {
		r = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED,
			 f->ring_fd, 0);
		err = r == MAP_FAILED ? -errno : 0;
	}
	/* fallocate() must work on the file too, or a full disk would only show later */
	if (!err) {
		f->ring = r;
		f->data = (unsigned char *)r + page;
		err = grow_locked(f, size + 1);
	}
	/* pwrite() on an O_APPEND descriptor would append: off while batched */
	if (!err && f->fd_flags >= 0 && fcntl(fd, F_SETFL, f->fd_flags & ~O_APPEND) < 0)
		err = -errno;
	if (err) {
		jp_remove_own(f->ring_path, f->ring_fd);
		if (f->ring)
			unmap_ring(f);
		if (f->ring_fd >= 0)
			close(f->ring_fd);
		f->ring_fd = -1;
		return err;
	}
	r->version = JP_RING_VERSION;
	r->data_offset = (uint32_t)page;
	r->ring_size = RING_SIZE;
	r->pid = (uint64_t)getpid();
	r->slot[0].flushed = r->slot[0].file_at = r->committed = size;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(r->magic, JP_RING_MAGIC, sizeof(r->magic));
	fl_add(f);
	return 0;
}

int jp_batchfile_append(struct jp_batchfile *f, const void *head, size_t head_len,
			const void *body, size_t body_len)
{
	uint64_t size = f->size, len = head_len + body_len, end = size + len;
	uint64_t file_end = end + __atomic_load_n(&f->delta, __ATOMIC_ACQUIRE);
	int err = 0;

	if (file_end > __atomic_load_n(&f->alloc, __ATOMIC_ACQUIRE) && (err = grow(f, file_end)))
		return err;     /* the flusher is behind, and the disk full */
	if (end - __atomic_load_n(&f->flushed, __ATOMIC_ACQUIRE) > RING_SIZE ||
	    __atomic_load_n(&fl.exiting, __ATOMIC_RELAXED)) {
		/* the ring is full (or exit() began): write it out here */
		pthread_mutex_lock(&f->lock);
		err = flush_locked(f);
		if (!err && (len > RING_SIZE || fl.exiting))
			err = put_direct(f, head, head_len, body, body_len);
		pthread_mutex_unlock(&f->lock);
		if (err || f->size == end)
			return err;
	}
	ring_copy(f, size + head_len, body, body_len);
	ring_copy(f, size, head, head_len);
	__atomic_store_n(&f->ring->committed, end, __ATOMIC_RELEASE);
	__atomic_store_n(&f->size, end, __ATOMIC_RELEASE);
	writer_fence();
	if (__atomic_load_n(&fl.exiting, __ATOMIC_RELAXED)) {
		/* exit() began meanwhile, and may have missed this record */
		pthread_mutex_lock(&f->lock);
		err = flush_locked(f);
		pthread_mutex_unlock(&f->lock);
		return err;
	}
	/* the flusher asleep: wake it, once */
	if (__atomic_load_n(&fl.idle, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&fl.idle, 0, __ATOMIC_SEQ_CST))
		flusher_wake();
	return 0;
}

int jp_batchfile_append_later(struct jp_batchfile *f, struct jp_later *l, const void *head,
			      size_t head_len, const void *body, size_t body_len)
{
	int err;

	/* on the list before the record is committed: whoever writes the
	 * record out finds l (the list's order is the stream's: appends are
	 * serialized by the caller) */
	l->at = f->size;
	l->buf = NULL;
	l->len = 0;
	l->made = 0;
	l->next = NULL;
	pthread_mutex_lock(&f->later_lock);
	*f->later_end = l;
	f->later_end = &l->next;
	pthread_mutex_unlock(&f->later_lock);
	err = jp_batchfile_append(f, head, head_len, body, body_len);
	if (err)
		drop_laters_from(f, l->at);     /* l, if written out meanwhile is not there */
	return err;
}

int jp_batchfile_flush(struct jp_batchfile *f)
{
	int err;

	if (!f->ring)
		return 0;
	pthread_mutex_lock(&f->lock);
	err = flush_locked(f);
	pthread_mutex_unlock(&f->lock);
	return err;
}

void jp_batchfile_rollback(struct jp_batchfile *f, uint64_t mark)
{
	static const char zeros[4096];
	uint64_t at;

	pthread_mutex_lock(&f->lock);
	if (mark >= f->size)
		goto out;
	drop_laters_from(f, mark);
	/* the ring gives the records up first, then the file: a crash in
	 * between leaves a file cut at mark by its reader */
	__atomic_store_n(&f->ring->committed, mark, __ATOMIC_RELEASE);
	if (mark < f->flushed) {
		/* already written: zeros over them, the head first.  The unit
		 * undone had no later, so its bytes are the ring's, just
		 * before file_at */
		uint64_t pos = f->file_at - (f->flushed - mark), end = f->file_at;
		struct iovec z = { (void *)zeros, f->head_len };

		if (pwrite_whole(f->fd, &z, 1, pos) == 0)
			for (at = pos + f->head_len; at < end; at += z.iov_len) {
				z.iov_base = (void *)zeros;
				z.iov_len = end - at < sizeof(zeros) ? (size_t)(end - at) : sizeof(zeros);
				if (pwrite_whole(f->fd, &z, 1, at))
					break;
			}
		set_flushed(f, mark, pos);
	}
	__atomic_store_n(&f->size, mark, __ATOMIC_SEQ_CST);
out:
	pthread_mutex_unlock(&f->lock);
}

int jp_batchfile_finish(struct jp_batchfile *f, int trim)
{
	int err = 0;

	if (!f->ring)
		return 0;
	fl_remove(f);
	if (trim) {
		pthread_mutex_lock(&f->lock);
		err = flush_locked(f);
		pthread_mutex_unlock(&f->lock);
		if (!err && ftruncate(f->fd, (off_t)f->file_at) < 0)
			err = -errno;
		/* all is in the file: the ring goes (if it is still ours);
		 * otherwise it stays, for jitperf record to put in */
		if (!err)
			jp_remove_own(f->ring_path, f->ring_fd);
	}
	drop_laters_from(f, 0);                 /* left after an error, or a fork child's */
	unmap_ring(f);
	/* O_APPEND back for write(), but not from a fork child: the status
	 * flags belong to the open file, which the parent still batches */
	if (trim && f->fd_flags >= 0)
		fcntl(f->fd, F_SETFL, f->fd_flags);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->later_lock);
	return err;
}
