/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf inject's work: perf.data in, perf.jit.data out.  The input's
 * records are copied in file order; where a process mapped its
 * jit-PID.dump (the marker perf inject --jit looks for), the jitdump is
 * read and that record is replaced by one PERF_RECORD_MMAP2 per CODE_LOAD
 * and CODE_MOVE, at the record's time, into the process's code image
 * (image.c).  As perf inject does, the marker itself and the process's
 * later anonymous mappings (//anon, [anon:, /memfd:) are left out.  A
 * process with a perf map and no jitdump gets its map's symbols the same
 * way, mapped at its exec.
 * The header and feature sections are the input's, with the images'
 * build-ids added to HEADER_BUILD_ID.  Everything goes to temporary files
 * renamed into place at the end: a failure leaves no partial output.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "inject.h"
#include "read/jitdump_read.h"
#include "read/perfmap_read.h"
#include "read/perfdata.h"
#include "tools/cmds.h"

struct file_section {
	uint64_t offset, size;
};

struct file_header {               /* perf's struct perf_file_header */
	uint64_t            magic, size, attr_size;
	struct file_section attrs, data, event_types;
	uint64_t            features[4];
};

struct code {                      /* a CODE_LOAD's place, found again by CODE_MOVE */
	uint64_t index, vaddr, size, addr;
	uint32_t image, sym;
	int      used;
};

struct jitdump {                   /* one jitdump injected, by its path in the marker */
	char            *path;
	uint32_t         pid;
	size_t           first, nimages; /* its images: ctx.images[first ...] */
	uint16_t         machine;
	struct code     *codes;    /* open addressing on index */
	size_t           ncodes, capcodes;
};

struct range {                     /* a mapping of a process, from the input's mmap records */
	uint32_t pid;
	uint64_t start, end;
};

struct mapproc {                   /* a process, for its perf map */
	uint32_t pid;
	uint64_t off;              /* input offset of its (last) exec COMM, else first COMM */
	uint64_t time;             /* that record's time */
	int      exec;
	char    *map;              /* the perf map to inject (no jitdump of its own), or NULL */
};

struct ctx {
	const char        *in, *out;
	char              *imgdir;
	struct pd_file    *pd;
	int                infd;
	unsigned char     *map;
	size_t             maplen;
	struct file_header h;
	int                outfd;
	char              *outtmp;
	struct ij_buf      wbuf;   /* output not yet written */
	uint64_t           outpos, data_size;
	uint64_t           sample_type, id;
	int                sample_id_all;
	struct ij_image   *images;
	size_t             nimages;
	struct jitdump    *dumps;
	size_t             ndumps;
	uint32_t          *jitpids; /* processes whose anonymous mappings are dropped */
	size_t             njitpids;
	struct range      *ranges;  /* sorted by pid, start */
	size_t             nranges, capranges;
	struct range      *marks;   /* per process, its first marker's time (in start) */
	size_t             nmarks;
	struct mapproc    *procs;   /* processes and where a perf map would go in */
	size_t             nprocs;
	uint64_t           functions, moves;
};

static int flush_out(struct ctx *c)
{
	size_t done = 0;

	while (done < c->wbuf.len) {
		ssize_t n = write(c->outfd, c->wbuf.p + done, c->wbuf.len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			cmd_err("%s: %s", c->out, strerror(errno));
			return -errno;
		}
		done += (size_t)n;
	}
	c->wbuf.len = 0;
	return 0;
}

static int emit(struct ctx *c, const void *p, size_t len)
{
	int err = ij_buf_put(&c->wbuf, p, len);

	if (err) {
		cmd_err("%s: %s", c->out, strerror(-err));
		return err;
	}
	c->outpos += len;
	return c->wbuf.len >= (1u << 20) ? flush_out(c) : 0;
}

/* ---- the jitdumps ---- */

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

/* one PERF_RECORD_MMAP2 into the image, with the sample_id fields perf reads */
static int emit_mmap(struct ctx *c, const struct ij_image *im, uint32_t pid, uint32_t tid,
		     uint64_t start, uint64_t len, uint64_t pgoff, uint64_t time)
{
	size_t namelen = strlen(im->path) + 1, padded = (namelen + 7) / 8 * 8;
	unsigned char ev[PATH_MAX + 160];
	struct perf_event_header hd;
	size_t n = sizeof(hd);
	uint32_t u32[2];
	uint64_t u64[3];

#define PUT(p, sz) (memcpy(ev + n, (p), (sz)), n += (sz))
	if (padded > PATH_MAX)
		return -ENAMETOOLONG;
	u32[0] = pid; u32[1] = tid;
	PUT(u32, 8);
	u64[0] = start; u64[1] = len; u64[2] = pgoff;
	PUT(u64, 24);
	u32[0] = major(im->st.st_dev); u32[1] = minor(im->st.st_dev);
	PUT(u32, 8);
	u64[0] = im->st.st_ino; u64[1] = 1;            /* ino, ino_generation */
	PUT(u64, 16);
	u32[0] = PROT_READ | PROT_EXEC; u32[1] = MAP_SHARED;
	PUT(u32, 8);
	memset(ev + n, 0, padded);
	memcpy(ev + n, im->path, namelen);
	n += padded;
	if (c->sample_id_all) {
		uint64_t st = c->sample_type;

		if (st & PERF_SAMPLE_TID) {
			u32[0] = pid; u32[1] = tid;
			PUT(u32, 8);
		}
		if (st & PERF_SAMPLE_TIME)
			PUT(&time, 8);
		if (st & PERF_SAMPLE_ID)
			PUT(&c->id, 8);
		if (st & PERF_SAMPLE_STREAM_ID)
			PUT(&c->id, 8);
		if (st & PERF_SAMPLE_CPU) {
			u32[0] = 0; u32[1] = 0;
			PUT(u32, 8);
		}
		if (st & PERF_SAMPLE_IDENTIFIER)
			PUT(&c->id, 8);
	}
#undef PUT
	hd.type = PERF_RECORD_MMAP2;
	hd.misc = PERF_RECORD_MISC_USER;
	hd.size = (uint16_t)n;
	memcpy(ev, &hd, sizeof(hd));
	return emit(c, ev, n);
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

static int new_image(struct ctx *c, uint32_t pid, uint16_t machine, size_t *idx)
{
	/* images of a jitdump are consecutive: one jitdump is walked at a time */
	char path[PATH_MAX];
	struct ij_image *im = realloc(c->images, (c->nimages + 1) * sizeof(*im));
	int err;

	if (!im)
		return -ENOMEM;
	c->images = im;
	snprintf(path, sizeof(path), "%s/jitimage-%" PRIu32 "-%zu.so", c->imgdir, pid, c->nimages + 1);
	err = ij_image_open(&c->images[c->nimages], path, machine);
	if (err)
		return err;
	c->images[c->nimages].pid = pid;
	*idx = c->nimages++;
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

/*
 * The image of d a function at addr goes into: the latest of its last 64
 * it fits in (a runtime that fills several code areas at once keeps an
 * image per area), else a new one.
 */
static int image_for(struct ctx *c, struct jitdump *d, uint64_t addr, size_t *idx)
{
	int err;

	for (size_t i = d->nimages; i > 0 && i + 64 > d->nimages; i--)
		if (ij_image_fits(&c->images[d->first + i - 1], addr)) {
			*idx = d->first + i - 1;
			return 0;
		}
	err = new_image(c, d->pid, d->machine, idx);
	if (!err && !d->nimages++)
		d->first = *idx;
	return err;
}

static int add_code(struct ctx *c, struct jitdump *d, const struct ij_func *fn, uint64_t index,
		    uint64_t time, uint64_t *vaddr, size_t *img)
{
	struct ij_image *im;
	struct code cd;
	int err = image_for(c, d, fn->code_addr, img);

	if (err)
		return err;
	im = &c->images[*img];
	if (!im->nsyms)
		im->first_time = time;
	cd = (struct code){ .index = index, .size = fn->size, .addr = fn->code_addr,
			    .image = (uint32_t)*img, .sym = (uint32_t)im->nsyms };
	err = ij_image_add(im, fn, vaddr);
	cd.vaddr = *vaddr;
	return err ?: code_put(d, &cd);
}

/*
 * Walk a jitdump: each CODE_LOAD into an image with the DEBUG_INFO and
 * UNWINDING_INFO before it, an MMAP2 at its time; each CODE_MOVE an
 * MMAP2 of the function's bytes at the new address.  The
 * mmap's length is perf inject's: with unwinding info, the code rounded
 * to 8 bytes and the mapped size.  A record that cannot be read is named
 * in one line; what came before it is kept.
 */
static int walk_jitdump(struct ctx *c, struct jitdump *d, struct jd_file *jd)
{
	struct ij_srcline *lines = NULL;
	size_t nlines = 0, capl = 0, img;
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
			err = add_code(c, d, &fn, rec.code_index, rec.timestamp, &va, &img);
			err = err ?: emit_mmap(c, &c->images[img], rec.pid, rec.tid, rec.code_addr,
					       len, va, rec.timestamp);
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
			err = emit_mmap(c, &c->images[s->image], rec.pid, rec.tid, rec.new_code_addr,
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

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int add_range(struct ctx *c, uint32_t pid, uint64_t start, uint64_t end)
{
	if (c->nranges == c->capranges) {
		size_t cap = c->capranges ? 2 * c->capranges : 256;
		struct range *r = realloc(c->ranges, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		c->ranges = r;
		c->capranges = cap;
	}
	c->ranges[c->nranges++] = (struct range){ pid, start, end };
	return 0;
}

/* is [start, end) free of every mapping of pid the input names, and of every image's code? */
static int is_free(const struct ctx *c, uint32_t pid, uint64_t start, uint64_t end, uint64_t *next)
{
	for (size_t i = 0; i < c->nranges; i++) {
		const struct range *r = &c->ranges[i];

		if (r->pid == pid && r->start < end && start < r->end) {
			*next = r->end;
			return 0;
		}
	}
	for (size_t i = 0; i < c->nimages; i++) {
		const struct ij_image *im = &c->images[i];
		uint64_t ehend = im->eh_vaddr ? im->eh_vaddr + (im->base - IJ_TEXT_OFF) + ij_eh_size(im) : 0;

		/* an image's own tables follow its code: only others' are in the way */

		if (im->pid != pid || !im->nsyms)
			continue;
		if (im->base < end && start < im->end) {
			*next = im->end;
			return 0;
		}
		if (ehend && ehend - ij_eh_size(im) < end && start < ehend) {
			*next = ehend;
			return 0;
		}
	}
	return 1;
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
		while (!is_free(c, im->pid, at, at + size, &next) && next > at)
			at = bias + (next - bias + 7) / 8 * 8;
		if (at - im->end > IJ_MAX_GAP) {
			im->eh_skipped += im->nfdes;
			continue;
		}
		err = ij_buf_put(&im->text, NULL, at - bias - IJ_TEXT_OFF - im->text.len);
		if (err)
			return err;
		im->eh_vaddr = ij_eh_offset(im);
		err = emit_mmap(c, im, im->pid, im->pid, at, size, im->eh_vaddr, im->first_time);
		if (err)
			return err;
	}
	return 0;
}

/* jit-PID.dump with PID the mapping process's (0: any, perf's rule) */
static int is_marker(const char *name, uint32_t pid)
{
	const char *b = strrchr(name, '/');
	char *end;
	unsigned long v;

	if (!b || strncmp(b, "/jit-", 5) || b[5] < '0' || b[5] > '9')
		return 0;
	v = strtoul(b + 5, &end, 10);
	return strcmp(end, ".dump") == 0 && (!pid || v == pid);
}

static int add_jitpid(struct ctx *c, uint32_t pid)
{
	uint32_t *p;

	for (size_t i = 0; i < c->njitpids; i++)
		if (c->jitpids[i] == pid)
			return 0;
	p = realloc(c->jitpids, (c->njitpids + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->jitpids = p;
	c->jitpids[c->njitpids++] = pid;
	return 0;
}

static int is_jitpid(const struct ctx *c, uint32_t pid)
{
	for (size_t i = 0; i < c->njitpids; i++)
		if (c->jitpids[i] == pid)
			return 1;
	return 0;
}

/*
 * A marker: inject its jitdump.  1 when the record is replaced, 0 when it
 * is kept (the jitdump cannot be read: said once), or -errno.
 */
static int marker(struct ctx *c, const char *path, uint32_t pid)
{
	struct jd_file *jd = NULL;
	struct jitdump *d = NULL;
	const struct jitdump_file_header *jh;
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
		err = walk_jitdump(c, d, jd) ?: map_unwind_tables(c, d);
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
			err = emit_mmap(c, &c->images[s->image], rec.pid, rec.tid, s->addr,
					rec.code_size, s->vaddr, rec.timestamp);
		}
	}
	jd_close(jd);
	return err ?: add_jitpid(c, pid) ?: 1;
}

/* a non-sample record's time, from its sample_id fields at its end; 0 if none */
static uint64_t record_time(const struct ctx *c, const unsigned char *p, uint16_t size)
{
	uint64_t st = c->sample_type, t = 0;
	size_t after = 0;

	if (!c->sample_id_all || !(st & PERF_SAMPLE_TIME))
		return 0;
	after += (st & PERF_SAMPLE_ID) ? 8 : 0;
	after += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	after += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	after += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	if (size >= 8 + after + 8)
		memcpy(&t, p + size - after - 8, 8);
	return t;
}

/* the time of pid's first marker whose jitdump can be read; 0 if none */
static uint64_t marker_time(const struct ctx *c, uint32_t pid)
{
	for (size_t i = 0; i < c->nmarks; i++)
		if (c->marks[i].pid == pid)
			return c->marks[i].start;
	return 0;
}

static int readable_jitdump(const struct ctx *c, const char *path)
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

/* ---- perf maps ---- */

/*
 * A process that wrote only a perf map (V8, the JVM's agents, .NET,
 * Python): its symbols go into images as a jitdump's functions do, with
 * zeros for the code perf maps do not carry, mapped at its exec (the
 * symbols hold from then on, as perf reads a perf map for the whole
 * process); its later anonymous mappings are left out.  perf's own tools
 * then name its code from the output alone, after /tmp is cleaned or on
 * another machine.  Later lines of the map win where addresses are used
 * again, as they go into later images.
 */
static struct mapproc *mapproc_get(struct ctx *c, uint32_t pid)
{
	struct mapproc *m;

	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	m = realloc(c->procs, (c->nprocs + 1) * sizeof(*m));
	if (!m)
		return NULL;
	c->procs = m;
	m = &c->procs[c->nprocs++];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->off = UINT64_MAX;
	return m;
}

/* A COMM record at off: a process's exec, or its first name (attached). */
static int note_comm(struct ctx *c, const unsigned char *p, uint16_t size, uint16_t misc,
		     uint64_t off)
{
	uint32_t pid, tid;
	struct mapproc *m;
	int exec = !!(misc & PERF_RECORD_MISC_COMM_EXEC);

	memcpy(&pid, p + 8, 4);
	memcpy(&tid, p + 12, 4);
	if (pid != tid)
		return 0;
	if (!(m = mapproc_get(c, pid)))
		return -ENOMEM;
	if (exec || m->off == UINT64_MAX) {
		m->off = off;
		m->time = record_time(c, p, size);
		m->exec |= exec;
	}
	return 0;
}

static uint16_t host_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__aarch64__)
	return EM_AARCH64;
#elif defined(__i386__)
	return EM_386;
#else
	return EM_NONE;
#endif
}

/* The processes without a jitdump whose perf map is beside the input or in
 * /tmp; their anonymous mappings go from their exec on. */
static int find_perfmaps(struct ctx *c)
{
	char *copy = strdup(c->in), path[PATH_MAX];
	const char *dir = copy ? dirname(copy) : NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < c->nprocs && !err; i++) {
		struct mapproc *m = &c->procs[i];
		struct range *mk;

		if (m->off == UINT64_MAX || marker_time(c, m->pid))
			continue;
		snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map", dir, m->pid);
		if (access(path, R_OK))
			snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", m->pid);
		if (access(path, R_OK))
			continue;
		if (!(m->map = strdup(path)) ||
		    !(mk = realloc(c->marks, (c->nmarks + 1) * sizeof(*mk)))) {
			err = -ENOMEM;
			break;
		}
		c->marks = mk;
		if (m->time)
			c->marks[c->nmarks++] = (struct range){ m->pid, m->time, 0 };
	}
	free(copy);
	return err;
}

static int by_line(const void *a, const void *b)
{
	const struct pm_sym *x = *(const struct pm_sym *const *)a, *y = *(const struct pm_sym *const *)b;

	return x->line < y->line ? -1 : x->line > y->line;
}

/* m's perf map into images, one MMAP2 per symbol at m's exec.  A map that
 * cannot be read is named in one line and left out. */
static int inject_perfmap(struct ctx *c, const struct mapproc *m)
{
	const struct pm_sym **order = NULL;
	struct pm_map *pm = NULL;
	struct jitdump *d;
	char msg[512];
	int err = 0;

	if (pm_read(m->map, &pm, msg, sizeof(msg))) {
		cmd_err("%s (not injected)", msg);
		return 0;
	}
	d = realloc(c->dumps, (c->ndumps + 1) * sizeof(*d));
	if (!d || (pm->nsyms && !(order = malloc(pm->nsyms * sizeof(*order))))) {
		if (d)
			c->dumps = d;
		pm_free(pm);
		return -ENOMEM;
	}
	c->dumps = d;
	d = &c->dumps[c->ndumps];
	memset(d, 0, sizeof(*d));
	d->pid = m->pid;
	d->machine = host_machine();
	if (!(d->path = strdup(m->map))) {
		free(order);
		pm_free(pm);
		return -ENOMEM;
	}
	c->ndumps++;
	for (size_t i = 0; i < pm->nsyms; i++)
		order[i] = &pm->syms[i];
	qsort(order, pm->nsyms, sizeof(*order), by_line);
	for (size_t i = 0; i < pm->nsyms && !err; i++) {
		const struct pm_sym *s = order[i];
		struct ij_func fn = { .name = s->name, .code_addr = s->start, .size = s->size };
		uint64_t va;
		size_t img;

		err = add_code(c, d, &fn, s->line, m->time, &va, &img);
		err = err ?: emit_mmap(c, &c->images[img], m->pid, m->pid, s->start, s->size, va,
				       m->time);
		c->functions += !err;
	}
	free(order);
	pm_free(pm);
	return err ?: add_jitpid(c, m->pid);
}

/* ---- perf.data ---- */

static int copy_records(struct ctx *c)
{
	const unsigned char *p = c->map + c->h.data.offset, *end = p + c->h.data.size;
	int err = 0;

	while (!err && end - p >= 8) {
		struct perf_event_header hd;
		const char *name = NULL;
		uint32_t pid = 0;

		memcpy(&hd, p, sizeof(hd));
		if (hd.size < 8 || hd.size > end - p) {
			cmd_err("%s: offset %zu: bad record size %u", c->in,
				(size_t)(p - c->map), hd.size);
			return -EINVAL;
		}
		if (hd.type == PERF_RECORD_MMAP && hd.size > 40)
			name = (const char *)p + 40;
		else if (hd.type == PERF_RECORD_MMAP2 && hd.size > 72)
			name = (const char *)p + 72;
		if (name && memchr(name, 0, (size_t)(p + hd.size - (const unsigned char *)name))) {
			int r = 0;

			memcpy(&pid, p + 8, 4);
			if (is_marker(name, pid))
				r = marker(c, name, pid);
			else if ((!strncmp(name, "//anon", 6) || !strncmp(name, "[anon:", 6) ||
				  !strncmp(name, "/memfd:", 7)) &&
				 (record_time(c, p, hd.size) ? marker_time(c, pid) &&
				  record_time(c, p, hd.size) >= marker_time(c, pid) : is_jitpid(c, pid)))
				r = 1;
			if (r) {
				if (r < 0)
					return r;
				p += hd.size;
				continue;
			}
		}
		err = emit(c, p, hd.size);
		if (!err && hd.type == PERF_RECORD_COMM)
			for (size_t i = 0; i < c->nprocs && !err; i++)
				if (c->procs[i].map && c->procs[i].off == (uint64_t)(p - c->map))
					err = inject_perfmap(c, &c->procs[i]);
		p += hd.size;
	}
	return err;
}

static int build_id_entries(struct ctx *c, struct ij_buf *b)
{
	for (size_t i = 0; i < c->nimages; i++) {
		const struct ij_image *im = &c->images[i];
		size_t namelen = strlen(im->path) + 1, padded = (namelen + 63) / 64 * 64;
		struct perf_event_header hd = {
			.type = PD_HEADER_BUILD_ID,
			.misc = PERF_RECORD_MISC_USER | (1u << 15),  /* ..._BUILD_ID_SIZE */
			.size = (uint16_t)(8 + 4 + 24 + padded),
		};
		int32_t pid = -1;      /* the host machine */
		unsigned char id[24] = { 0 };
		int err;

		memcpy(id, im->build_id, 20);
		id[20] = 20;
		err = ij_buf_put(b, &hd, 8) ?: ij_buf_put(b, &pid, 4) ?: ij_buf_put(b, id, 24);
		err = err ?: ij_buf_put(b, im->path, namelen) ?: ij_buf_put(b, NULL, padded - namelen);
		if (err)
			return err;
	}
	return 0;
}

/* the feature sections: the input's, BUILD_ID with the images added */
static int copy_features(struct ctx *c)
{
	const struct file_section *in = (const void *)(c->map + c->h.data.offset + c->h.data.size);
	struct file_section *out = NULL;
	struct ij_buf ids = { 0 };
	size_t nin = 0, nout = 0, k = 0;
	uint64_t feats[4], pos;
	int err = 0;

	memcpy(feats, c->h.features, sizeof(feats));
	for (int b = 0; b < 256; b++)
		nin += (c->h.features[b / 64] >> (b % 64)) & 1;
	if ((const unsigned char *)(in + nin) > c->map + c->maplen) {
		cmd_err("%s: the feature sections' table is cut short", c->in);
		return -EINVAL;
	}
	feats[PD_FEAT_BUILD_ID / 64] |= 1ull << (PD_FEAT_BUILD_ID % 64);
	for (int b = 0; b < 256; b++)
		nout += (feats[b / 64] >> (b % 64)) & 1;
	out = calloc(nout ? nout : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	/* the table first (filled below), then each section */
	pos = c->outpos + nout * sizeof(*out);
	for (int b = 0, i = 0; b < 256; b++) {
		int had = (c->h.features[b / 64] >> (b % 64)) & 1;

		if (!((feats[b / 64] >> (b % 64)) & 1))
			continue;
		out[k].offset = pos;
		if (had) {
			if (in[i].offset > c->maplen || in[i].size > c->maplen - in[i].offset) {
				cmd_err("%s: feature section %d lies outside the file", c->in, b);
				err = -EINVAL;
				goto out;
			}
			out[k].size = in[i].size;
		}
		if (b == PD_FEAT_BUILD_ID) {
			err = build_id_entries(c, &ids);
			if (err)
				goto out;
			out[k].size += ids.len;
		}
		pos += out[k].size;
		k++;
		i += had;
	}
	err = emit(c, out, nout * sizeof(*out));
	for (int b = 0, i = 0; b < 256 && !err; b++) {
		int had = (c->h.features[b / 64] >> (b % 64)) & 1;

		if (had)
			err = emit(c, c->map + in[i].offset, in[i].size);
		if (!err && b == PD_FEAT_BUILD_ID)
			err = emit(c, ids.p, ids.len);
		i += had;
	}
	memcpy(c->h.features, feats, sizeof(feats));
out:
	free(out);
	free(ids.p);
	return err;
}

static int open_input(struct ctx *c)
{
	char err[512];
	struct stat st;
	const struct pd_attr *a;
	int r;

	r = pd_open(&c->pd, c->in, err, sizeof(err));
	if (r) {
		cmd_err("%s", err);
		return r;
	}
	if (pd_pipe_mode(c->pd)) {
		cmd_err("%s: a perf.data of pipe mode (perf record -o -): write it to a file", c->in);
		return -EINVAL;
	}
	a = pd_nattrs(c->pd) ? pd_attr(c->pd, 0) : NULL;
	if (!a) {
		cmd_err("%s: no event attributes", c->in);
		return -EINVAL;
	}
	c->sample_type = a->attr.sample_type;
	c->sample_id_all = a->attr.sample_id_all;
	c->id = a->nids ? a->ids[0] : 0;
	c->infd = open(c->in, O_RDONLY | O_CLOEXEC);
	if (c->infd < 0 || fstat(c->infd, &st)) {
		cmd_err("%s: %s", c->in, strerror(errno));
		return -errno;
	}
	c->maplen = (size_t)st.st_size;
	if (c->maplen < sizeof(c->h)) {
		cmd_err("%s: not a perf.data file (too short)", c->in);
		return -EINVAL;
	}
	c->map = mmap(NULL, c->maplen, PROT_READ, MAP_PRIVATE, c->infd, 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		cmd_err("%s: %s", c->in, strerror(errno));
		return -errno;
	}
	memcpy(&c->h, c->map, sizeof(c->h));
	if (memcmp(&c->h.magic, "PERFILE2", 8) || c->h.data.offset > c->maplen ||
	    c->h.data.size > c->maplen - c->h.data.offset) {
		cmd_err("%s: not a perf.data file of this machine's byte order, or cut short", c->in);
		return -EINVAL;
	}
	return 0;
}

static int open_output(struct ctx *c)
{
	size_t n = strlen(c->out) + 16;

	c->outtmp = malloc(n);
	if (!c->outtmp)
		return -ENOMEM;
	snprintf(c->outtmp, n, "%s.tmpXXXXXX", c->out);
	c->outfd = mkstemp(c->outtmp);
	if (c->outfd < 0) {
		cmd_err("%s: cannot create: %s", c->out, strerror(errno));
		free(c->outtmp);
		c->outtmp = NULL;
		return -errno;
	}
	fchmod(c->outfd, 0600);
	return 0;
}

/*
 * Every mapping of every process, for map_unwind_tables to keep clear of;
 * the time of each process's first marker, from which on its anonymous
 * mappings are left out (perf inject decides in time order, and records
 * of different CPUs are not in time order in the file).
 */
static int collect_ranges(struct ctx *c)
{
	const unsigned char *p = c->map + c->h.data.offset, *end = p + c->h.data.size;

	while (end - p >= 8) {
		struct perf_event_header hd;
		uint32_t pid;
		uint64_t start, len;

		memcpy(&hd, p, sizeof(hd));
		if (hd.size < 8 || hd.size > end - p)
			break;
		if (hd.type == PERF_RECORD_COMM && hd.size > 16 &&
		    note_comm(c, p, hd.size, hd.misc, (uint64_t)(p - c->map)))
			return -ENOMEM;
		if ((hd.type == PERF_RECORD_MMAP || hd.type == PERF_RECORD_MMAP2) && hd.size >= 40) {
			memcpy(&pid, p + 8, 4);
			memcpy(&start, p + 16, 8);
			memcpy(&len, p + 24, 8);
			if (add_range(c, pid, start, start + len))
				return -ENOMEM;
			if (hd.type == PERF_RECORD_MMAP2 ? hd.size > 72 : hd.size > 40) {
				const char *name = (const char *)p + (hd.type == PERF_RECORD_MMAP2 ? 72 : 40);
				uint64_t t = record_time(c, p, hd.size), t0;

				if (memchr(name, 0, (size_t)(p + hd.size - (const unsigned char *)name)) &&
				    is_marker(name, pid) && readable_jitdump(c, name)) {
					t0 = marker_time(c, pid);
					if (!t0 || t < t0) {
						struct range *m;

						if (t0) {
							for (size_t i = 0; i < c->nmarks; i++)
								if (c->marks[i].pid == pid)
									c->marks[i].start = t;
						} else {
							m = realloc(c->marks, (c->nmarks + 1) * sizeof(*m));
							if (!m)
								return -ENOMEM;
							c->marks = m;
							c->marks[c->nmarks++] = (struct range){ pid, t, 0 };
						}
					}
				}
			}
		}
		p += hd.size;
	}
	qsort(c->ranges, c->nranges, sizeof(*c->ranges), range_cmp);
	return find_perfmaps(c);
}

static int write_all(struct ctx *c)
{
	int err = collect_ranges(c);

	if (err) {
		cmd_err("%s", strerror(-err));
		return err;
	}

	/* header, attributes and their ids as they are; the data section follows */
	err = emit(c, c->map, c->h.data.offset);
	err = err ?: copy_records(c);
	if (err)
		return err;
	c->data_size = c->outpos - c->h.data.offset;
	for (size_t i = 0; i < c->nimages; i++)
		ij_image_build_id(&c->images[i]);
	err = copy_features(c) ?: flush_out(c);
	if (err)
		return err;
	c->h.data.size = c->data_size;
	if (pwrite(c->outfd, &c->h, sizeof(c->h), 0) != (ssize_t)sizeof(c->h)) {
		cmd_err("%s: %s", c->out, strerror(errno));
		return -EIO;
	}
	for (size_t i = 0; i < c->nimages; i++) {
		err = ij_image_write(&c->images[i]);
		if (err)
			return err;
	}
	return 0;
}

static int commit(struct ctx *c)
{
	int err = 0;

	for (size_t i = 0; i < c->nimages && !err; i++)
		err = ij_image_commit(&c->images[i]);
	if (err)
		return err;
	if (fsync(c->outfd) || close(c->outfd)) {
		c->outfd = -1;
		cmd_err("%s: %s", c->out, strerror(errno));
		return -EIO;
	}
	c->outfd = -1;
	if (rename(c->outtmp, c->out)) {
		cmd_err("%s: cannot rename into place: %s", c->out, strerror(errno));
		return -errno;
	}
	free(c->outtmp);
	c->outtmp = NULL;
	return 0;
}

int ij_inject(const char *in, const char *out, const char *imgdir)
{
	struct ctx c = { .in = in, .out = out, .infd = -1, .outfd = -1 };
	char buf[PATH_MAX];
	int err = 0;

	if (!realpath(imgdir, buf)) {
		cmd_err("%s: %s", imgdir, strerror(errno));
		return -errno;
	}
	c.imgdir = strdup(buf);
	if (!c.imgdir)
		err = -ENOMEM;
	err = err ?: open_input(&c);
	err = err ?: open_output(&c);
	err = err ?: write_all(&c);
	err = err ?: commit(&c);

	for (size_t i = 0; i < c.nimages; i++)
		ij_image_close(&c.images[i]);
	for (size_t i = 0; i < c.ndumps; i++) {
		free(c.dumps[i].path);
		free(c.dumps[i].codes);
	}
	free(c.images);
	free(c.dumps);
	free(c.jitpids);
	free(c.ranges);
	free(c.marks);
	for (size_t i = 0; i < c.nprocs; i++)
		free(c.procs[i].map);
	free(c.procs);
	free(c.wbuf.p);
	if (c.outfd >= 0)
		close(c.outfd);
	if (c.outtmp) {
		unlink(c.outtmp);
		free(c.outtmp);
	}
	if (c.map)
		munmap(c.map, c.maplen);
	if (c.infd >= 0)
		close(c.infd);
	pd_close(c.pd);
	free(c.imgdir);
	return err;
}
