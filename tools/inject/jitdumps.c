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
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctx.h"
#include "read/jitdump_read.h"
#include "tools/cmds.h"

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

/* the jitdump the marker names; else the one of that name beside the input */
static int open_jitdump(struct ctx *c, const char *path, struct jd_file **jd)
{
	char err[512], alt[PATH_MAX], *dir;
	const char *base = strrchr(path, '/');
	int r = jd_open(jd, path, err, sizeof(err));

	if (r == -ENOENT) {
		char *copy = strdup(c->in);

		if (!copy)
			return -ENOMEM;
		dir = dirname(copy);
		snprintf(alt, sizeof(alt), "%s/%s", dir, base ? base + 1 : path);
		free(copy);
		if (jd_open(jd, alt, err + 256, sizeof(err) - 256) == 0)
			return 0;
	}
	if (r)
		cmd_err("%s", err);
	return r;
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
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 64;
			struct ij_srcline *l = realloc(*lines, nc * sizeof(*l));

			if (!l)
				return -ENOMEM;
			*lines = l;
			*cap = nc;
		}
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
		if (*nplan == cap) {
			uint32_t *p;

			cap = cap ? 2 * cap : 1024;
			p = realloc(*plan, cap * sizeof(*p));
			if (!p)
				return -ENOMEM;
			*plan = p;
		}
		err = ij_plan(c, d, rec.code_addr, rec.code_size, rec.timestamp, &img);
		(*plan)[(*nplan)++] = (uint32_t)img;
	}
	ij_plan_done(c, d);
	return err;
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
			err = ij_add_code(c, d, &fn, rec.code_index, plan[nload], &va);
			err = err ?: ij_queue_mmap(c, plan[nload], rec.pid, rec.tid, rec.code_addr,
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

			if (!s || !s->used)
				break;       /* perf's would name a file that does not exist */
			if (have_uw && uw.mapped_size)
				len = (rec.code_size + 7) / 8 * 8 + uw.mapped_size;
			err = ij_queue_mmap(c, s->image, rec.pid, rec.tid, rec.new_code_addr,
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
 * code, in the first range above it that no mapping of the process and
 * no JIT code ever used (zeros pad the file up to there, at most
 * IJ_MAX_GAP), dated at the image's first load.  An image without such a
 * range has no unwind tables; perf then walks its frames by frame pointer.
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

/* jit-PID.dump with PID the mapping process's (0: any, perf's rule) */
int ij_is_marker(const char *name, uint32_t pid)
{
	const char *b = strrchr(name, '/');
	char *end;
	unsigned long v;

	if (!b || strncmp(b, "/jit-", 5) || b[5] < '0' || b[5] > '9')
		return 0;
	v = strtoul(b + 5, &end, 10);
	return strcmp(end, ".dump") == 0 && (!pid || v == pid);
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

	for (size_t i = 0; i < c->ndumps; i++)
		if (!strcmp(c->dumps[i].path, path)) {
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
		d->pid = jh->pid;
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
			err = ij_queue_mmap(c, s->image, rec.pid, rec.tid, s->addr,
					    rec.code_size, s->vaddr, rec.timestamp);
		}
	}
	if (jd)
		jd_close(jd);
	return err ?: ij_add_jitpid(c, pid) ?: 1;
}

int ij_readable_jitdump(const struct ctx *c, const char *path)
{
	char alt[PATH_MAX], *copy;
	const char *base = strrchr(path, '/');
	int ok = access(path, R_OK) == 0;

	if (!ok && (copy = strdup(c->in))) {
		snprintf(alt, sizeof(alt), "%s/%s", dirname(copy), base ? base + 1 : path);
		ok = access(alt, R_OK) == 0;
		free(copy);
	}
	return ok;
}
