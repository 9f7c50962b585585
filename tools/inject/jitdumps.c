/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf inject's jitdumps: where a process mapped its jit-PID.dump (the
 * marker), each CODE_LOAD goes into a code image (image.c) with the
 * DEBUG_INFO and UNWINDING_INFO before it, and one PERF_RECORD_MMAP2 at
 * its time; each CODE_MOVE maps the function again; the images' unwind
 * tables get a mapping of their own.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctx.h"
#include "read/jitdump_read.h"
#include "read/util.h"
#include "tools/cmds.h"
#include "tools/nsproc.h"

static struct code *code_slot(struct jitdump *d, uint64_t index)
{
	size_t mask = d->capcodes - 1, i = (size_t)(index * 0x9e3779b97f4a7c15ull) & mask;

	while (d->codes[i].used && d->codes[i].index != index)
		i = (i + 1) & mask;
	return &d->codes[i];
}

static int code_put(struct jitdump *d, const struct code *cd)
{
	struct code *s;

	if (2 * (d->ncodes + 1) > d->capcodes) {
		size_t cap = d->capcodes ? 2 * d->capcodes : 1024;
		struct code *old = d->codes, *n = calloc(cap, sizeof(*n));
		size_t oldcap = d->capcodes;

		if (!n)
			return -ENOMEM;
		d->codes = n;
		d->capcodes = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].used)
				*code_slot(d, old[i].index) = old[i];
		free(old);
	}
	s = code_slot(d, cd->index);
	if (!s->used)
		d->ncodes++;
	*s = *cd;
	s->used = 1;
	return 0;
}

/* the DEBUG_INFO entries of rec into a growing array (file names point into rec) */
static int read_lines(struct jd_file *jd, const struct jd_record *rec, struct ij_srcline **lines,
		      size_t *n, size_t *cap)
{
	struct jd_debug_iter it;
	struct jd_debug_entry e;
	uint64_t addr, nr;
	char err[256];
	int r;

	*n = 0;
	if (jd_debug_info(jd, rec, &addr, &nr, &it))
		return -EINVAL;
	while ((r = jd_debug_next(&it, &e, err, sizeof(err))) == 1) {
		if (rd_grow((void **)lines, cap, *n + 1, sizeof(**lines)))
			return -ENOMEM;
		(*lines)[(*n)++] = (struct ij_srcline){ e.addr, e.lineno, e.file };
	}
	return r < 0 ? -EINVAL : 0;
}

int ij_add_code(struct ctx *c, struct jitdump *d, const struct ij_func *fn, uint64_t index,
		size_t img, uint64_t *vaddr)
{
	struct ij_image *im = &c->images[img];
	struct code cd = { .index = index, .size = fn->size, .addr = fn->code_addr,
			   .image = (uint32_t)img, .sym = (uint32_t)im->nsyms };
	int err = ij_image_add(im, fn, vaddr);

	cd.vaddr = *vaddr;
	return err ?: code_put(d, &cd);
}

/*
 * The image of each CODE_LOAD of jd, in order (plan.c).  The records
 * that cannot be read are named by walk_jitdump, which reads them again.
 */
static int plan_jitdump(struct ctx *c, struct jitdump *d, struct jd_file *jd, uint32_t **plan,
			size_t *nplan)
{
	size_t cap = 0, img;
	struct jd_record rec;
	char msg[512];
	int r, err = 0;

	*nplan = 0;
	while (!err && (r = jd_next(jd, &rec, msg, sizeof(msg))) != 0) {
		if (r < 0) {
			if (r == -EINVAL)
				continue;
			break;
		}
		if (rec.id != JIT_CODE_LOAD)
			continue;
		if (rd_grow((void **)plan, &cap, *nplan + 1, sizeof(**plan)))
			return -ENOMEM;
		err = ij_plan(c, d, rec.code_addr, rec.code_size, rec.timestamp, &img);
		(*plan)[(*nplan)++] = (uint32_t)img;
	}
	ij_plan_done(c, d);
	return err;
}

/*
 * The process and thread of a record as perf.data knows them: a jitdump
 * written in a pid namespace of its own (a container) names them as they
 * are known there; its mappings go to its process (d->pid), as perf
 * inject maps them.
 */
static void host_ids(const struct jitdump *d, const struct jd_file *jd, const struct jd_record *rec,
		     uint32_t *pid, uint32_t *tid)
{
	*pid = rec->pid;
	*tid = rec->tid;
	if (jd_header(jd)->pid != d->pid)
		*pid = *tid = d->pid;
}

/*
 * Walk a jitdump: each CODE_LOAD into an image with the DEBUG_INFO and
 * UNWINDING_INFO before it, an MMAP2 at its time; each CODE_MOVE an
 * MMAP2 of the function's bytes at the new address.  The
 * mmap's length is perf inject's: with unwinding info, the code rounded
 * to 8 bytes and the mapped size.  A record that cannot be read is named
 * in one line; what came before it is kept.
 */
static int walk_jitdump(struct ctx *c, struct jitdump *d, struct jd_file *jd,
			const uint32_t *plan, size_t nplan)
{
	struct ij_srcline *lines = NULL;
	size_t nlines = 0, capl = 0, nload = 0;
	struct jd_unwinding uw;
	int have_uw = 0, warned = 0, r, err = 0;
	struct jd_record rec;
	char msg[512];

	while ((r = jd_next(jd, &rec, msg, sizeof(msg))) != 0) {
		if (r < 0) {
			if (!warned++)
				cmd_err("%s (the records before it are injected)", msg);
			if (r == -EINVAL)
				continue;
			break;
		}
		switch (rec.id) {
		case JIT_CODE_DEBUG_INFO:
			if (read_lines(jd, &rec, &lines, &nlines, &capl) == -ENOMEM) {
				err = -ENOMEM;
				goto out;
			}
			break;
		case JIT_CODE_UNWINDING_INFO:
			have_uw = !jd_unwinding_info(jd, &rec, &uw, msg, sizeof(msg));
			break;
		case JIT_CODE_LOAD: {
			struct ij_func fn = {
				.name = rec.name, .code_addr = rec.code_addr, .size = rec.code_size,
				.code = rec.code, .lines = lines, .nlines = nlines,
			};
			uint64_t va, len = rec.code_size;
			uint32_t pid, tid;

			if (have_uw) {
				fn.unwind = uw.data;
				fn.unwind_size = uw.unwinding_size;
				fn.eh_frame_hdr_size = uw.eh_frame_hdr_size;
				fn.mapped_size = uw.mapped_size;
				if (uw.mapped_size)
					len = (rec.code_size + 7) / 8 * 8 + uw.mapped_size;
			}
			if (nload == nplan)
				break;       /* the file changed since it was planned */
			host_ids(d, jd, &rec, &pid, &tid);
			err = ij_add_code(c, d, &fn, rec.code_index, plan[nload], &va);
			err = err ?: ij_queue_mmap(c, plan[nload], pid, tid, rec.code_addr,
						   len, va, rec.timestamp);
			nload++;
			if (err)
				goto out;
			c->functions++;
			nlines = 0;
			have_uw = 0;
			break;
		}
		case JIT_CODE_MOVE: {
			/*
			 * The function's own bytes and symbol at the new address,
			 * as perf maps its one-function image again: perf counts
			 * the moved code as the same symbol.
			 */
			struct code *s = d->capcodes ? code_slot(d, rec.code_index) : NULL;
			uint64_t len = rec.code_size;
			uint32_t pid, tid;

			if (!s || !s->used)
				break;       /* perf's would name a file that does not exist */
			host_ids(d, jd, &rec, &pid, &tid);
			if (have_uw && uw.mapped_size)
				len = (rec.code_size + 7) / 8 * 8 + uw.mapped_size;
			err = ij_queue_mmap(c, s->image, pid, tid, rec.new_code_addr,
					    len, s->vaddr, rec.timestamp);
			if (err)
				goto out;
			c->moves++;
			break;
		}
		default:
			break;
		}
	}
out:
	free(lines);
	if (err == -ENOMEM)
		cmd_err("%s: %s", jd_path(jd), strerror(ENOMEM));
	return err;
}

/*
 * The unwind tables of each image of d get a mapping of their own, as
 * perf's unwinder reads them through the process's maps, at the image's
 * load bias (the run-time address of the image's first byte): perf finds
 * .eh_frame_hdr at that bias plus its place in the file.  They follow the
 * code, in the first range above it that no JIT code and no mapping perf
 * keeps of the process ever used (ij_is_free; zeros pad the file up to
 * there, at most IJ_MAX_GAP), dated at the image's first load.  An image
 * without such a range has no unwind tables; perf then walks its frames
 * by frame pointer.
 */
static int map_unwind_tables(struct ctx *c, const struct jitdump *d)
{
	for (size_t i = d->first; i < d->first + d->nimages; i++) {
		struct ij_image *im = &c->images[i];
		uint64_t size = ij_eh_size(im), bias = im->base - IJ_TEXT_OFF, at, next = 0;
		int err;

		if (!size)
			continue;
		at = bias + ij_eh_offset(im);
		while (!ij_is_free(c, im->pid, at, at + size, &next) && next > at)
			at = bias + (next - bias + 7) / 8 * 8;
		if (at - im->end > IJ_MAX_GAP) {
			im->eh_skipped += im->nfdes;
			continue;
		}
		im->text_len = at - bias - IJ_TEXT_OFF;    /* zeros up to the tables */
		im->eh_vaddr = ij_eh_offset(im);
		err = ij_queue_mmap(c, i, im->pid, im->pid, at, size, im->eh_vaddr, im->first_time);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The marker ij_is_marker accepted last: inject.c asks ij_readable_jitdump
 * or ij_marker about a marker right after ij_is_marker has accepted it,
 * and those find its file through its process (pid, as perf.data names
 * it; nspid, as it names itself: jit-NSPID.dump).
 */
static struct {
	char     name[PATH_MAX];
	uint32_t pid, nspid;
	int      live;              /* pid was running when the marker was accepted */
} marker_last;

/* the pid jit-N.dump names, or 0 */
static uint32_t marker_pid(const char *name)
{
	const char *b = strrchr(name, '/');
	char *end;
	unsigned long v;

	if (!b || strncmp(b, "/jit-", 5) || b[5] < '0' || b[5] > '9')
		return 0;
	errno = 0;
	v = strtoul(b + 5, &end, 10);
	return strcmp(end, ".dump") || errno || !v || v > UINT32_MAX ? 0 : (uint32_t)v;
}

/* the pid in the header of the jitdump at path, or 0 */
static uint32_t header_pid(const char *path)
{
	struct jitdump_file_header h;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), ok;
	struct stat st;

	if (fd < 0)
		return 0;
	ok = !fstat(fd, &st) && S_ISREG(st.st_mode) && pread(fd, &h, sizeof(h), 0) == sizeof(h);
	close(fd);
	if (ok && h.magic == JITDUMP_MAGIC)
		return h.pid;
	if (ok && h.magic == JITDUMP_MAGIC_SWAPPED)
		return __builtin_bswap32(h.pid);
	return 0;
}

/*
 * Where the jitdump of a marker may be, in order (i = 0 ...): as its
 * process sees path, through /proc/PID/root while it lives; path as given
 * (a process that is gone: its namespace too, when it had one of its
 * own); beside the input, named as record names its copy (jit-PID.dump,
 * pid as perf.data knows the process), then as in the marker.  0 with
 * buf filled, -ENOENT for a candidate that does not apply, -ENOMEM.
 */
#define MARKER_CANDIDATES 4
static int marker_candidate(const struct ctx *c, const char *path, int i, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	int known = marker_last.pid && !strcmp(marker_last.name, path);
	char *copy;
	int n;

	base = base ? base + 1 : path;
	switch (i) {
	case 0:
		if (!known || !marker_last.live || path[0] != '/')
			return -ENOENT;
		return nsproc_path((pid_t)marker_last.pid, path, buf, len) ? -ENOENT : 0;
	case 1:
		n = snprintf(buf, len, "%s", path);
		break;
	case 2:
		if (!known || marker_last.nspid == marker_last.pid)
			return -ENOENT;
		/* fall through */
	default:
		if (!(copy = strdup(c->in)))
			return -ENOMEM;
		n = i == 2 ? snprintf(buf, len, "%s/jit-%" PRIu32 ".dump", dirname(copy),
				      marker_last.pid)
			   : snprintf(buf, len, "%s/%s", dirname(copy), base);
		free(copy);
		break;
	}
	return n < 0 || (size_t)n >= len ? -ENOENT : 0;
}

/*
 * jit-N.dump mapped by process pid (0: any, perf's rule) is its jitdump
 * when N is pid, or the pid the process knows itself by in a pid
 * namespace of its own (NSpid, while it lives).  A process that is gone
 * can no longer say: then the jitdump found for the marker (beside the
 * input, where record copies it) must say in its header that N wrote it.
 */
int ij_is_marker(const char *name, uint32_t pid)
{
	static uint32_t last_pid, last_nspid;       /* NSpid read once per process in a row */
	uint32_t n = marker_pid(name);
	int live;

	if (!n)
		return 0;
	if (!pid || n == pid) {
		snprintf(marker_last.name, sizeof(marker_last.name), "%s", name);
		marker_last.pid = marker_last.nspid = pid;
		marker_last.live = pid && kill((pid_t)pid, 0) == 0;
		return 1;
	}
	if (pid != last_pid) {
		pid_t ns;

		last_pid = pid;
		last_nspid = nsproc_pid((pid_t)pid, &ns) ? 0 : (uint32_t)ns;
	}
	live = last_nspid != 0;
	if ((live && last_nspid != n) || strlen(name) >= sizeof(marker_last.name))
		return 0;
	/* gone: open_jitdump and ij_readable_jitdump check the header */
	snprintf(marker_last.name, sizeof(marker_last.name), "%s", name);
	marker_last.pid = pid;
	marker_last.nspid = n;
	marker_last.live = live;
	return 1;
}

/*
 * A candidate file of a marker whose N is not its process's pid must say
 * in its header that N wrote it: the marker's process is gone, and a file
 * of that name elsewhere may be another's.
 */
static int candidate_mismatch(const char *path, const char *cand, uint32_t *hpid)
{
	if (!marker_last.pid || marker_last.nspid == marker_last.pid ||
	    strcmp(marker_last.name, path))
		return 0;
	*hpid = header_pid(cand);
	return *hpid != marker_last.nspid;
}

/*
 * The jitdump the marker names: as its process sees the path, through
 * /proc/PID/root while it lives (a container's own /tmp); else as given;
 * else beside the input (marker_candidate).
 */
static int open_jitdump(struct ctx *c, const char *path, struct jd_file **jd)
{
	char err[PATH_MAX + 128], cand[PATH_MAX];
	uint32_t hpid;
	int r = -ENOENT;

	err[0] = '\0';
	for (int i = 0; r == -ENOENT && i < MARKER_CANDIDATES; i++) {
		char msg[PATH_MAX + 128];
		int k = marker_candidate(c, path, i, cand, sizeof(cand));

		if (k == -ENOMEM)
			return k;
		if (k)
			continue;
		k = jd_open(jd, cand, msg, sizeof(msg));
		if (!k && candidate_mismatch(path, cand, &hpid)) {
			jd_close(*jd);
			*jd = NULL;
			k = -ENOENT;
			snprintf(msg, sizeof(msg), "%s: written by process %" PRIu32 ", not by the "
				 "marker's %" PRIu32 ": not injected", cand, hpid, marker_last.nspid);
		}
		if (k && (!err[0] || k != -ENOENT))   /* the first file tried, or what is wrong */
			memcpy(err, msg, sizeof(err));
		r = k;
	}
	if (r)
		cmd_err("%s", err);
	return r;
}

/*
 * A marker: inject its jitdump.  1 when the record is replaced, 0 when it
 * is kept (the jitdump cannot be read: said once), or -errno.
 */
int ij_marker(struct ctx *c, const char *path, uint32_t pid)
{
	struct jd_file *jd = NULL;
	struct jitdump *d = NULL;
	const struct jitdump_file_header *jh;
	uint32_t *plan = NULL;
	size_t nplan;
	int err;

	/* by path and process: containers' jitdumps may share a path */
	for (size_t i = 0; i < c->ndumps; i++)
		if (!strcmp(c->dumps[i].path, path) && (!pid || c->dumps[i].pid == pid)) {
			d = &c->dumps[i];
			break;
		}
	if (open_jitdump(c, path, &jd))
		return 0;
	jh = jd_header(jd);
	if (jh->flags & JITDUMP_FLAGS_ARCH_TIMESTAMP) {
		cmd_err("%s: timestamps are the CPU's (TSC), not CLOCK_MONOTONIC: not injected",
			jd_path(jd));
		jd_close(jd);
		return 0;
	}
	if (!d) {
		struct jitdump *nd = realloc(c->dumps, (c->ndumps + 1) * sizeof(*nd));

		if (!nd) {
			jd_close(jd);
			return -ENOMEM;
		}
		c->dumps = nd;
		d = &c->dumps[c->ndumps];
		memset(d, 0, sizeof(*d));
		d->path = strdup(path);
		d->pid = pid ? pid : jh->pid;
		d->machine = (uint16_t)jh->elf_mach;
		if (!d->path) {
			jd_close(jd);
			return -ENOMEM;
		}
		c->ndumps++;
		err = plan_jitdump(c, d, jd, &plan, &nplan);
		jd_close(jd);
		jd = NULL;
		err = err ?: open_jitdump(c, path, &jd);
		err = err ?: walk_jitdump(c, d, jd, plan, nplan) ?: map_unwind_tables(c, d);
		free(plan);
	} else {
		/* mapped again: the same functions at the same places, as perf injects twice */
		struct jd_record rec;
		char msg[512];
		int r;

		err = 0;
		while (!err && (r = jd_next(jd, &rec, msg, sizeof(msg))) != 0) {
			struct code *s;
			uint32_t rpid, rtid;

			if (r < 0) {
				if (r == -EINVAL)
					continue;
				break;
			}
			if ((rec.id != JIT_CODE_LOAD && rec.id != JIT_CODE_MOVE) || !d->capcodes)
				continue;
			s = code_slot(d, rec.code_index);
			if (!s->used || s->addr != (rec.id == JIT_CODE_LOAD ? rec.code_addr
									    : rec.new_code_addr))
				continue;
			host_ids(d, jd, &rec, &rpid, &rtid);
			err = ij_queue_mmap(c, s->image, rpid, rtid, s->addr,
					    rec.code_size, s->vaddr, rec.timestamp);
		}
	}
	if (jd)
		jd_close(jd);
	return err ?: ij_add_jitpid(c, pid) ?: 1;
}

int ij_readable_jitdump(const struct ctx *c, const char *path)
{
	char cand[PATH_MAX];
	uint32_t hpid;

	for (int i = 0; i < MARKER_CANDIDATES; i++)
		if (!marker_candidate(c, path, i, cand, sizeof(cand)) && access(cand, R_OK) == 0 &&
		    !candidate_mismatch(path, cand, &hpid))
			return 1;
	return 0;
}
