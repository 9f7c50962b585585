/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <dir>/jit-<pid>.dump: perf's jitdump format, version 1
 * (tools/perf/Documentation/jitdump-specification.txt).
 *
 * - The header names the e_machine of the running executable and uses
 *   CLOCK_MONOTONIC timestamps (flags 0), the clock of perf record -k 1.
 * - A PROT_READ|PROT_EXEC mapping of the file is kept for the session's
 *   life: perf record sees its MMAP event (also when attached late with -p,
 *   from /proc/<pid>/maps) and perf inject --jit finds the dump that way.
 * - A CODE_LOAD and the DEBUG_INFO / UNWINDING_INFO records that describe
 *   it (perf applies them to the next CODE_LOAD) go out as ONE unit under
 *   the session lock, with the timestamp taken under that lock: records
 *   are in time order, no other thread's record comes between them, and a
 *   failure takes the whole unit back.  The unit is made before the lock
 *   is taken (jp_jitdump_prepare); under it only the timestamps, the code
 *   index and a twin's tail are filled in.
 * - The unit is one write() on an O_APPEND descriptor: once it returns,
 *   its records are in the page cache, where perf inject reads them even
 *   if the process is killed the next instant.  A write that fails
 *   half-way (full disk) is cut off again (jp_write_whole), so the file
 *   holds whole units only.  See doc/registration.md.
 * - Code whose bytes were written before gets a short tail (see
 *   tell_twins_apart) so perf never gives two functions one build-id.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "core.h"
#include "format/jitdump.h"

struct jp_jitdump {
	int            fd;
	pid_t          pid;
	uint64_t       size;        /* file size: where to cut back a failed write */
	void          *marker;      /* the PROT_EXEC mapping perf record looks for */
	size_t         marker_len;
	struct jp_twins *twins;     /* hashes of the code written so far */
	char           path[];
};

#define ALIGN8(x) (((x) + 7) & ~(uint64_t)7)

/* One unit (whole records) with one write(). */
static int put(struct jp_jitdump *jd, const void *buf, size_t n)
{
	struct iovec iov = { (void *)buf, n };

	return jp_write_whole(jd->fd, &iov, 1, &jd->size);
}

int jp_jitdump_open(struct jp_jitdump **out, const char *dir, pid_t pid)
{
	return jp_jitdump_open_at(out, dir, pid, jp_monotonic_ns());
}

/* With the header's timestamp: a standby session's is when it opened. */
int jp_jitdump_open_at(struct jp_jitdump **out, const char *dir, pid_t pid, uint64_t ts)
{
	struct jitdump_file_header h;
	struct jp_jitdump *jd;
	size_t plen = strlen(dir) + 32;
	struct iovec iov;
	int err;

	*out = NULL;
	jd = calloc(1, sizeof(*jd) + plen);
	if (!jd)
		return -ENOMEM;
	jd->pid = pid;
	snprintf(jd->path, plen, "%s/jit-%d.dump", dir, (int)pid);
	/* O_RDWR: a PROT_READ mapping needs a readable descriptor.  O_APPEND:
	 * after a failed write is cut off (ftruncate) the next one follows it.
	 * Created afresh (jp_create_fresh): JITPERF_DIR may be a shared
	 * directory, and whatever holds the name -- a stale dump of our pid,
	 * a planted link -- is replaced, never truncated or followed.  It has
	 * its final name before the marker is mapped: perf record knows the
	 * file by the name of that mapping. */
	err = jp_create_fresh(jd->path, O_RDWR | O_APPEND, &jd->fd);
	if (err) {
		free(jd);
		return err;
	}

	memset(&h, 0, sizeof(h));
	h.magic = JITDUMP_MAGIC;
	h.version = JITDUMP_VERSION;
	h.total_size = sizeof(h);
	h.elf_mach = jp_elf_machine();
	h.pid = (uint32_t)pid;
	h.timestamp = ts;
	h.flags = 0;
	iov.iov_base = &h;
	iov.iov_len = sizeof(h);
	err = jp_write_whole(jd->fd, &iov, 1, &jd->size);
	if (err) {
		jp_debug("cannot write %s: %s", jd->path, strerror(-err));
		goto fail;
	}

	jd->marker_len = (size_t)sysconf(_SC_PAGESIZE);
	jd->marker = mmap(NULL, jd->marker_len, PROT_READ | PROT_EXEC, MAP_PRIVATE, jd->fd, 0);
	if (jd->marker == MAP_FAILED) {
		err = -errno;
		jd->marker = NULL;
		jp_debug("cannot map %s executable (noexec mount?): %s; perf would not find it",
			 jd->path, strerror(errno));
		goto fail;
	}
	*out = jd;
	return 0;
fail:
	jp_remove_own(jd->path, jd->fd);
	close(jd->fd);
	free(jd);
	return err;
}

/* A line's file name with its NUL; rows in a row mostly share one name. */
static size_t file_len(const struct jitperf_line *l, const char **last, size_t *len)
{
	const char *f = l->file ? l->file : "";

	if (f != *last) {
		*last = f;
		*len = strlen(f) + 1;
	}
	return *len;
}

static size_t debug_info_size(const struct jp_jitdump_load *ld)
{
	size_t n = sizeof(struct jitdump_debug_info), i, len = 0;
	const char *last = NULL;

	for (i = 0; i < ld->nlines; i++)
		n += sizeof(struct jitdump_debug_entry) + file_len(&ld->lines[i], &last, &len);
	return ALIGN8(n);
}

static size_t unwinding_size(const struct jp_jitdump_load *ld)
{
	return sizeof(struct jitdump_unwinding_info) + ALIGN8(ld->eh_frame_len + ld->eh_hdr_len);
}

static unsigned char *put_debug_info(unsigned char *p, const struct jp_jitdump_load *ld,
				     size_t size)
{
	struct jitdump_debug_info di;
	unsigned char *start = p;
	const char *last = NULL;
	size_t i, len = 0;

	di.p.id = JIT_CODE_DEBUG_INFO;
	di.p.total_size = (uint32_t)size;
	di.p.timestamp = 0;             /* jp_jitdump_commit sets it */
	di.code_addr = ld->addr;
	di.nr_entry = ld->nlines;
	memcpy(p, &di, sizeof(di));
	p += sizeof(di);
	for (i = 0; i < ld->nlines; i++) {
		struct jitdump_debug_entry e;
		size_t fl = file_len(&ld->lines[i], &last, &len);

		e.addr = ld->lines[i].addr;     /* absolute: perf subtracts code_addr itself */
		e.lineno = ld->lines[i].line;
		e.discrim = ld->lines[i].discrim;
		memcpy(p, &e, sizeof(e));
		memcpy(p + sizeof(e), last, fl);
		p += sizeof(e) + fl;
	}
	memset(p, 0, size - (size_t)(p - start));
	return start + size;
}

static unsigned char *put_unwinding(unsigned char *p, const struct jp_jitdump_load *ld,
				    size_t size)
{
	struct jitdump_unwinding_info ui;
	uint64_t data = ld->eh_frame_len + ld->eh_hdr_len;
	unsigned char *start = p;

	ui.p.id = JIT_CODE_UNWINDING_INFO;
	ui.p.total_size = (uint32_t)size;
	ui.p.timestamp = 0;
	ui.unwinding_size = data;
	ui.eh_frame_hdr_size = ld->eh_hdr_len;
	/* perf maps align8(code) + mapped_size: the map must reach over
	 * .eh_frame_hdr, which its unwinders read through the map. */
	ui.mapped_size = ALIGN8(data);
	memcpy(p, &ui, sizeof(ui));
	p += sizeof(ui);
	memcpy(p, ld->eh_frame, ld->eh_frame_len);
	p += ld->eh_frame_len;
	memcpy(p, ld->eh_hdr, ld->eh_hdr_len);
	p += ld->eh_hdr_len;
	memset(p, 0, size - (size_t)(p - start));
	return start + size;
}

/*
 * Build the unit of a load: DEBUG_INFO, UNWINDING_INFO, then the CODE_LOAD
 * with the name and the code, copied and hashed in one pass.  Timestamps
 * and the code index stay 0 until jp_jitdump_commit.
 */
int jp_jitdump_prepare(struct jp_jitdump_unit *u, const struct jp_jitdump_load *ld,
		       void *space, size_t space_len)
{
	struct jitdump_code_load cl;
	size_t dsize = ld->nlines ? debug_info_size(ld) : 0;
	size_t usize = ld->eh_frame_len ? unwinding_size(ld) : 0;
	size_t nlen = strlen(ld->name) + 1, need;
	uint64_t total = sizeof(cl) + nlen + ld->len;
	unsigned char *p;

	memset(u, 0, sizeof(*u));
	if (total > UINT32_MAX || dsize > UINT32_MAX || usize > UINT32_MAX)
		return -E2BIG;
	need = dsize + usize + (size_t)total + JP_TWIN_TAIL;
	u->buf = space;
	if (need > space_len) {
		u->buf = u->heap = malloc(need);
		if (!u->buf)
			return -ENOMEM;
	}
	p = u->buf;
	if (dsize)
		p = put_debug_info(p, ld, dsize);
	if (usize)
		p = put_unwinding(p, ld, usize);

	memset(&cl, 0, sizeof(cl));
	cl.p.id = JIT_CODE_LOAD;
	cl.p.total_size = (uint32_t)total;
	cl.tid = ld->tid ? ld->tid : (uint32_t)jp_gettid();
	cl.vma = ld->addr;
	cl.code_addr = ld->addr;
	cl.code_size = ld->len;
	u->load = (size_t)(p - u->buf);
	memcpy(p, &cl, sizeof(cl));
	p += sizeof(cl);
	memcpy(p, ld->name, nlen);
	p += nlen;
	u->code = (size_t)(p - u->buf);
	if (ld->checked) {
		/* code the JIT may have freed without telling us: copy with the
		 * kernel's checks (EFAULT) instead of crashing */
		int err = jp_standby_read(p, (uintptr_t)ld->addr, ld->len);

		if (err) {
			jp_jitdump_unit_free(u);
			return err;
		}
		u->hash = jp_code_hash(p, ld->len);
	} else {
		u->hash = jp_code_copy_hash(p, (const void *)(uintptr_t)ld->addr, ld->len);
	}
	u->len = (size_t)(p - u->buf) + ld->len;
	u->code_len = ld->len;
	u->has_eh = ld->eh_frame_len != 0;
	u->name = ld->name;
	return 0;
}

void jp_jitdump_unit_free(struct jp_jitdump_unit *u)
{
	free(u->heap);
	u->heap = u->buf = NULL;
}

/* Start loading what jp_jitdump_commit will look up (a cache miss once many loads are known). */
void jp_jitdump_prefetch(const struct jp_jitdump *jd, const struct jp_jitdump_unit *u)
{
	jp_twins_prefetch(jd->twins, u->hash);
}

/*
 * Code bytes this dump already holds (another function with identical code)
 * get 1..8 bytes of their code index appended, and code_size grows by that
 * much: perf's injected ELF for it then has a build-id of its own also
 * where perf computes build-ids from the code alone (newer than 6.1).  The
 * tail stays inside align8(len) whenever len is not a multiple of 8, so
 * perf's mapping and the .eh_frame position do not move; with .eh_frame
 * and len a multiple of 8 the tail would move the .eh_frame, so such code
 * is written as it is.  Returns the bytes added after the code.
 */
static size_t tell_twins_apart(struct jp_jitdump *jd, const struct jp_jitdump_unit *u,
			       struct jitdump_code_load *cl, uint64_t index)
{
	size_t k = u->code_len % 8 ? 8 - u->code_len % 8 : 8;

	if (jp_twins_seen(&jd->twins, u->hash) != 1)
		return 0;
	if (u->has_eh && u->code_len % 8 == 0) {
		jp_debug("%s: same code as an earlier function; with .eh_frame and a length "
			 "that is a multiple of 8 it is written unchanged", u->name);
		return 0;
	}
	/* the tail's bytes are the first k of the index in memory (low bytes first on x86) */
	cl->code_size += k;
	cl->p.total_size += (uint32_t)k;
	return k;
}

/* Stamp the unit with ts and index: the length of a twin's tail, 0 for none. */
static size_t stamp(struct jp_jitdump *jd, struct jp_jitdump_unit *u, uint64_t index, uint64_t ts)
{
	struct jitdump_record_header h;
	struct jitdump_code_load cl;
	size_t off, tail;

	/* every record before the CODE_LOAD gets the same time */
	for (off = 0; off < u->load; off += h.total_size) {
		memcpy(&h, u->buf + off, sizeof(h));
		memcpy(u->buf + off + offsetof(struct jitdump_record_header, timestamp), &ts,
		       sizeof(ts));
	}
	memcpy(&cl, u->buf + u->load, sizeof(cl));
	cl.p.timestamp = ts;
	cl.pid = (uint32_t)jd->pid;
	cl.code_index = index;
	tail = tell_twins_apart(jd, u, &cl, index);
	memcpy(u->buf + u->load, &cl, sizeof(cl));
	return tail;
}

/* Under the session lock: stamp the unit with ts and index, and write it. */
int jp_jitdump_commit(struct jp_jitdump *jd, struct jp_jitdump_unit *u, uint64_t index,
		      uint64_t ts)
{
	size_t tail = stamp(jd, u, index, ts);

	memcpy(u->buf + u->len, &index, tail);  /* into the room prepare left */
	return put(jd, u->buf, u->len + tail);
}

/*
 * Under the session lock: n units that lie back to back in memory, stamped
 * with ts and index[i], written with one write().  A twin's tail goes into
 * the room left after the last unit; a tail of an earlier unit is an
 * iovec of its own, pointing at index[i], so no unit moves (one writev()).
 * iov has room for 2 n + 1 entries.
 */
int jp_jitdump_commit_many(struct jp_jitdump *jd, struct jp_jitdump_unit *u, size_t n,
			   const uint64_t *index, uint64_t ts, struct iovec *iov)
{
	unsigned char *from = u[0].buf, *end = u[n - 1].buf + u[n - 1].len;
	int niov = 0;

	for (size_t i = 0; i < n; i++) {
		size_t tail = stamp(jd, &u[i], index[i], ts);

		if (!tail)
			continue;
		if (i == n - 1) {
			/* one object's only function, typically: the write stays one write() */
			memcpy(end, &index[i], tail);
			end += tail;
			continue;
		}
		iov[niov].iov_base = from;
		iov[niov++].iov_len = (size_t)(u[i].buf + u[i].len - from);
		iov[niov].iov_base = (void *)&index[i];
		iov[niov++].iov_len = tail;
		from = u[i].buf + u[i].len;
	}
	if (from < end) {
		iov[niov].iov_base = from;
		iov[niov++].iov_len = (size_t)(end - from);
	}
	return jp_write_whole(jd->fd, iov, niov, &jd->size);
}

size_t jp_jitdump_stamp(struct jp_jitdump *jd, struct jp_jitdump_unit *u, uint64_t index,
			uint64_t ts)
{
	size_t tail = stamp(jd, u, index, ts);

	memcpy(u->buf + u->len, &index, tail);  /* into the room prepare left */
	return u->len + tail;
}

int jp_jitdump_put(struct jp_jitdump *jd, const void *buf, size_t n)
{
	return put(jd, buf, n);
}

int jp_jitdump_load(struct jp_jitdump *jd, const struct jp_jitdump_load *ld)
{
	struct jp_jitdump_unit u;
	int err;

	err = jp_jitdump_prepare(&u, ld, NULL, 0);
	if (!err)
		err = jp_jitdump_commit(jd, &u, ld->index, jp_monotonic_ns());
	jp_jitdump_unit_free(&u);
	return err;
}

int jp_jitdump_move(struct jp_jitdump *jd, uint64_t index, uint64_t old_addr,
		    uint64_t new_addr, uint64_t len)
{
	struct jitdump_code_move m;

	m.p.id = JIT_CODE_MOVE;
	m.p.total_size = sizeof(m);
	m.p.timestamp = jp_monotonic_ns();
	m.pid = (uint32_t)jd->pid;
	m.tid = (uint32_t)jp_gettid();
	m.vma = new_addr;
	m.old_code_addr = old_addr;
	m.new_code_addr = new_addr;
	m.code_size = len;
	m.code_index = index;
	return put(jd, &m, sizeof(m));
}

static void release(struct jp_jitdump *jd)
{
	if (jd->marker)
		munmap(jd->marker, jd->marker_len);
	close(jd->fd);
	jp_twins_free(jd->twins);
	free(jd);
}

int jp_jitdump_close(struct jp_jitdump *jd)
{
	struct jitdump_record_header c;
	int err;

	if (!jd)
		return 0;
	c.id = JIT_CODE_CLOSE;
	c.total_size = sizeof(c);
	c.timestamp = jp_monotonic_ns();
	err = put(jd, &c, sizeof(c));
	release(jd);
	return err;
}

/* After fork: the parent's file is neither written nor cut. */
void jp_jitdump_drop(struct jp_jitdump *jd)
{
	if (jd)
		release(jd);
}

uint64_t jp_jitdump_mark(const struct jp_jitdump *jd)
{
	return jd->size;
}

void jp_jitdump_rollback(struct jp_jitdump *jd, uint64_t mark)
{
	if (mark < jd->size && ftruncate(jd->fd, (off_t)mark) == 0)
		jd->size = mark;
}

const char *jp_jitdump_path(const struct jp_jitdump *jd)
{
	return jd->path;
}

/* Opened for nothing (a standby wake that failed): the file goes, if still ours. */
void jp_jitdump_discard(struct jp_jitdump *jd)
{
	if (!jd)
		return;
	jp_remove_own(jd->path, jd->fd);
	release(jd);
}
