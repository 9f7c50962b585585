/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Appending whole records through a shared mapping of the file, with no
 * system call per record.
 *
 * - The file is mapped MAP_SHARED once, over a large reservation, and
 *   grown in steps of JP_MAPFILE_STEP with fallocate(): its blocks exist
 *   before a byte is stored there, so a full disk fails as -ENOSPC from
 *   the append, never as SIGBUS in a store.
 * - A record is copied into the mapping under the caller's lock, its head
 *   last.  Until the head is stored, the file shows the zeros of its grown
 *   tail where the record begins, which its readers take as the end (a
 *   jitdump record of size 0; a perf map line hidden behind a NUL, see
 *   perfmap.c).  The page cache owns the pages: a SIGKILL keeps every
 *   record whose head was stored, and never shows half of one.  At close
 *   the file is cut to its committed size.
 * - Touching a new page of the mapping costs far more than the records on
 *   it (10 us a page on a VM with shadow page tables, where a write() of a
 *   whole record costs 2 us).  So a filler thread, one per process while
 *   mapped files are open, keeps the next bytes of each file (as many as
 *   it holds, 64 KiB to FILL_AHEAD) grown, populated (MADV_POPULATE_WRITE)
 *   and touched before the writer gets there: the writer's stores find
 *   their pages mapped.  It sleeps when it is ahead; a writer that finds it
 *   asleep and the ready bytes running low wakes it (one futex call per
 *   half of that, never per record).  A writer that outruns it grows the
 *   file itself.
 *
 * Without fallocate() (a file system that lacks it) or when JITPERF_IO=write
 * asks for it, records go out with one write() each (lib/fileio.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"

#ifndef MADV_POPULATE_WRITE
# define MADV_POPULATE_WRITE 23
#endif

/* The address space reserved for a file: it grows inside, never moves. */
#define WINDOW     ((size_t)(sizeof(void *) == 8 ? (size_t)16 << 30 : (size_t)256 << 20))
#define FILL_AHEAD ((uint64_t)1 << 20)     /* kept ready past the committed size, at most */
#define FILL_CHUNK ((uint64_t)64 << 10)    /* readied at a time, and at least */

/* The filler: one thread for every mapped file of the process. */
static struct {
	pthread_mutex_t    lock;     /* the list, and the files' lives while it works on them */
	struct jp_mapfile *files;
	pthread_t          thread;
	int                running;
	int                stop;
	int                idle;     /* asleep: writers running low wake it */
	int                wake;     /* futex word */
	pid_t              pid;      /* the process whose files these are; 0: none yet */
} fill = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * How far past its committed size the filler keeps f ready: as much again
 * as it holds, between one chunk and FILL_AHEAD (a JIT that registers a few
 * functions does not get megabytes of pages touched for it).
 */
static uint64_t ahead(uint64_t size)
{
	return size < FILL_CHUNK ? FILL_CHUNK : size > FILL_AHEAD ? FILL_AHEAD : size;
}

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Allocate the file up to at least need bytes; f->grow_lock held. */
static int grow_locked(struct jp_mapfile *f, uint64_t need)
{
	uint64_t page = page_size();
	uint64_t want = (need + JP_MAPFILE_STEP + page - 1) & ~(page - 1), old = f->alloc;
	int err;

	if (need <= old)
		return 0;
	if (need > f->window)
		return -EFBIG;
	if (want > f->window)
		want = f->window;
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

/*
 * Make [from, to) of the mapping ready: populated, and touched from user
 * space (an atomic add of 0 per page: a write fault that changes nothing,
 * also where a writer stores at the same time).
 */
static void touch(struct jp_mapfile *f, uint64_t from, uint64_t to)
{
	uint64_t page = page_size(), p = from & ~(page - 1);

	madvise(f->map + p, (size_t)(to - p), MADV_POPULATE_WRITE);
	for (; p < to; p += page)
		__atomic_fetch_add((int *)(void *)(f->map + p), 0, __ATOMIC_RELAXED);
}

/* One chunk more of f, if it is not far enough ahead: 1 if there was work. */
static int fill_one(struct jp_mapfile *f)
{
	uint64_t ready = f->ready, to = ready + FILL_CHUNK;
	uint64_t size = __atomic_load_n(&f->size, __ATOMIC_SEQ_CST);
	int err = 0;

	if (f->fill_failed || ready >= size + ahead(size))
		return 0;
	if (to > f->window) {
		f->fill_failed = 1;
		return 0;
	}
	if (to > __atomic_load_n(&f->alloc, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&f->grow_lock);
		err = grow_locked(f, to);
		pthread_mutex_unlock(&f->grow_lock);
	}
	if (err) {
		f->fill_failed = 1;     /* a full disk: the writer will see it too */
		return 0;
	}
	touch(f, ready, to);
	__atomic_store_n(&f->ready, to, __ATOMIC_RELEASE);
	return 1;
}

static void *filler_main(void *arg)
{
	pthread_mutex_lock(&fill.lock);
	while (!fill.stop) {
		struct jp_mapfile *f;
		int work = 0, seen;

		for (f = fill.files; f; f = f->next)
			work |= fill_one(f);
		if (work)
			continue;
		/* nothing to do: sleep, unless a writer ran low meanwhile */
		seen = __atomic_load_n(&fill.wake, __ATOMIC_SEQ_CST);
		__atomic_store_n(&fill.idle, 1, __ATOMIC_SEQ_CST);
		for (f = fill.files; f && !work; f = f->next) {
			uint64_t size = __atomic_load_n(&f->size, __ATOMIC_SEQ_CST);

			work = !f->fill_failed && f->ready < size + ahead(size) / 2;
		}
		if (!work && !fill.stop) {
			pthread_mutex_unlock(&fill.lock);
			jp_futex_wait(&fill.wake, seen, NULL);
			pthread_mutex_lock(&fill.lock);
		}
		__atomic_store_n(&fill.idle, 0, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&fill.lock);
	return NULL;
}

/*
 * In a fork child the filler thread and its list are the parent's: start
 * over.  Only the thread that forked runs in the child while the sessions
 * reopen their files there, so nothing else touches fill meanwhile.
 */
static void fill_own(void)
{
	pid_t owner = __atomic_load_n(&fill.pid, __ATOMIC_ACQUIRE);

	if (!owner || owner == getpid())
		return;
	pthread_mutex_init(&fill.lock, NULL);
	fill.files = NULL;
	fill.running = fill.stop = fill.idle = 0;
	__atomic_store_n(&fill.pid, 0, __ATOMIC_RELEASE);
}

/* Start the thread, fill.lock held; it starts with work to do. */
static void fill_start(void)
{
	fill.stop = 0;
	fill.running = !jp_bgthread_start(&fill.thread, filler_main, NULL, "jitperf-regfill");
}

/* Stop the thread, fill.lock held; joined once the lock is dropped. */
static int fill_stop(pthread_t *t)
{
	if (!fill.running)
		return 0;
	fill.stop = 1;
	fill.running = 0;
	*t = fill.thread;
	return 1;
}

static void fill_join(pthread_t t)
{
	__atomic_fetch_add(&fill.wake, 1, __ATOMIC_SEQ_CST);
	jp_futex_wake(&fill.wake);
	pthread_join(t, NULL);
}

static void fill_add(struct jp_mapfile *f)
{
	fill_own();
	pthread_mutex_lock(&fill.lock);
	__atomic_store_n(&fill.pid, getpid(), __ATOMIC_RELEASE);
	f->next = fill.files;
	fill.files = f;
	if (!fill.running)
		fill_start();
	pthread_mutex_unlock(&fill.lock);
	__atomic_fetch_add(&fill.wake, 1, __ATOMIC_SEQ_CST);
	jp_futex_wake(&fill.wake);
}

/* f leaves the list; the last file stops the thread. */
static void fill_remove(struct jp_mapfile *f)
{
	struct jp_mapfile **p;
	pthread_t t = 0;
	int join = 0;

	fill_own();
	pthread_mutex_lock(&fill.lock);
	for (p = &fill.files; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	if (!fill.files)
		join = fill_stop(&t);
	pthread_mutex_unlock(&fill.lock);
	if (join)
		fill_join(t);
}

/* Across fork() the thread is stopped: the child never inherits it mid-way
 * (holding a lock of libc or of a sanitizer); writers grow files themselves
 * meanwhile.  Called with every session's lock held, so no file comes or
 * goes in between. */
static int fill_paused;

void jp_mapfile_fork_prepare(void)
{
	pthread_t t = 0;

	fill_own();
	pthread_mutex_lock(&fill.lock);
	fill_paused = fill_stop(&t);
	pthread_mutex_unlock(&fill.lock);
	if (fill_paused)
		fill_join(t);
}

void jp_mapfile_fork_parent(void)
{
	if (!fill_paused)
		return;
	fill_paused = 0;
	pthread_mutex_lock(&fill.lock);
	if (fill.files && !fill.running)
		fill_start();
	pthread_mutex_unlock(&fill.lock);
	__atomic_fetch_add(&fill.wake, 1, __ATOMIC_SEQ_CST);
	jp_futex_wake(&fill.wake);
}

int jp_mapfile_start(struct jp_mapfile *f, int fd, uint64_t size)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->size = f->alloc = f->ready = size;
	f->window = WINDOW;
	pthread_mutex_init(&f->grow_lock, NULL);
	f->map = mmap(NULL, f->window, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (f->map == MAP_FAILED) {
		err = -errno;
		f->map = NULL;
		return err;
	}
	/* fallocate() must work here, or a full disk would be a SIGBUS later */
	err = grow_locked(f, size + 1);
	if (err) {
		munmap(f->map, f->window);
		f->map = NULL;
		return err;
	}
	fill_add(f);
	return 0;
}

int jp_mapfile_append(struct jp_mapfile *f, const void *head, size_t head_len,
		      const void *body, size_t body_len)
{
	uint64_t size = f->size, end = size + head_len + body_len, ready;
	unsigned char *at = f->map + size;
	int err;

	ready = __atomic_load_n(&f->ready, __ATOMIC_ACQUIRE);
	if (end > ready && end > __atomic_load_n(&f->alloc, __ATOMIC_ACQUIRE)) {
		/* the filler is behind (or the disk full): grow here */
		pthread_mutex_lock(&f->grow_lock);
		err = grow_locked(f, end);
		pthread_mutex_unlock(&f->grow_lock);
		if (err)
			return err;
	}
	memcpy(at + head_len, body, body_len);
	/* the head commits the record: stored after everything else, also
	 * as other processes (perf reading the perf map) see the pages */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(at, head, head_len);
	__atomic_store_n(&f->size, end, __ATOMIC_SEQ_CST);
	/* running low, and the filler asleep: wake it */
	if (ready < end + ahead(end) / 2 && __atomic_load_n(&fill.idle, __ATOMIC_SEQ_CST) &&
	    !f->fill_failed && __atomic_exchange_n(&fill.idle, 0, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(&fill.wake, 1, __ATOMIC_SEQ_CST);
		jp_futex_wake(&fill.wake);
	}
	return 0;
}

void jp_mapfile_rollback(struct jp_mapfile *f, uint64_t mark, size_t head_len)
{
	if (mark >= f->size)
		return;
	/* the head first: the record is gone before its bytes are */
	memset(f->map + mark, 0, head_len);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memset(f->map + mark + head_len, 0, (size_t)(f->size - mark - head_len));
	__atomic_store_n(&f->size, mark, __ATOMIC_SEQ_CST);
}

int jp_mapfile_finish(struct jp_mapfile *f, int trim)
{
	int err = 0;

	if (!f->map)
		return 0;
	fill_remove(f);
	munmap(f->map, f->window);
	f->map = NULL;
	pthread_mutex_destroy(&f->grow_lock);
	if (trim && ftruncate(f->fd, (off_t)f->size) < 0)
		err = -errno;
	return err;
}
