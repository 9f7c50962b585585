/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf inject's work: perf.data in, perf.jit.data out.  The input's
 * records are copied in file order; where a process mapped its
 * jit-PID.dump (the marker perf inject --jit looks for), that record is
 * replaced by the jitdump's functions (jitdumps.c); after the exec of a
 * process with a perf map and no jitdump come its map's symbols
 * (perfmaps.c).  As perf inject does, the marker itself and the process's
 * later anonymous mappings (//anon, [anon:, /memfd:) are left out.  The
 * header and feature sections are the input's, with the images' build-ids
 * added to HEADER_BUILD_ID.  Everything goes to temporary files renamed
 * into place at the end: a failure leaves no partial output.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ctx.h"
#include "read/perfdata.h"
#include "read/util.h"
#include "tools/cmds.h"

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* ---- perf.data ---- */

/*
 * The input's records in file order; a jitdump's mmap events wait for the
 * round of their time (pending.c) and go out before its FINISHED_ROUND.
 */
static int copy_records(struct ctx *c)
{
	const unsigned char *p = c->map + c->h.data.offset, *end = p + c->h.data.size;
	size_t round = 0;
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
			if (ij_is_marker(name, pid))
				r = ij_marker(c, name, pid);
			else if (ij_is_anon(name) && ij_anon_dropped(c, pid, ij_record_time(c, p, hd.size)))
				r = 1;
			if (r) {
				if (r < 0)
					return r;
				p += hd.size;
				continue;
			}
		}
		if (hd.type == PD_FINISHED_ROUND && round < c->nrounds)
			err = ij_flush_pending(c, c->rounds[round++]);
		err = err ?: ij_emit(c, p, hd.size);
		if (!err && hd.type == PERF_RECORD_COMM)
			for (size_t i = 0; i < c->nprocs && !err; i++)
				if (c->procs[i].map && c->procs[i].off == (uint64_t)(p - c->map))
					err = ij_inject_perfmap(c, &c->procs[i]);
		p += hd.size;
	}
	return err ?: ij_flush_pending(c, UINT64_MAX);
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
	err = ij_emit(c, out, nout * sizeof(*out));
	for (int b = 0, i = 0; b < 256 && !err; b++) {
		int had = (c->h.features[b / 64] >> (b % 64)) & 1;

		if (had)
			err = ij_emit(c, c->map + in[i].offset, in[i].size);
		if (!err && b == PD_FEAT_BUILD_ID)
			err = ij_emit(c, ids.p, ids.len);
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

static int add_round(struct ctx *c, uint64_t latest)
{
	if (rd_grow((void **)&c->rounds, &c->caprounds, c->nrounds + 1, sizeof(*c->rounds)))
		return -ENOMEM;
	c->rounds[c->nrounds++] = latest;
	return 0;
}

/*
 * Every mapping of every process, for map_unwind_tables to keep clear of;
 * the time of each process's first marker, from which on its anonymous
 * mappings are left out (perf inject decides in time order, and records
 * of different CPUs are not in time order in the file); the latest time
 * up to each FINISHED_ROUND.
 */
static int collect_ranges(struct ctx *c)
{
	const unsigned char *p = c->map + c->h.data.offset, *end = p + c->h.data.size;
	uint64_t latest = 0;

	while (end - p >= 8) {
		struct perf_event_header hd;
		uint32_t pid;
		uint64_t start, len, t;

		memcpy(&hd, p, sizeof(hd));
		if (hd.size < 8 || hd.size > end - p)
			break;
		t = ij_record_time(c, p, hd.size);
		latest = t > latest ? t : latest;
		if (hd.type == PD_FINISHED_ROUND && add_round(c, latest))
			return -ENOMEM;
		if (hd.type == PERF_RECORD_COMM && hd.size > 16 &&
		    ij_note_comm(c, p, hd.size, hd.misc, (uint64_t)(p - c->map)))
			return -ENOMEM;
		if ((hd.type == PERF_RECORD_MMAP || hd.type == PERF_RECORD_MMAP2) && hd.size >= 40) {
			const char *name = (const char *)p + (hd.type == PERF_RECORD_MMAP2 ? 72 : 40);
			struct range r = { .time = t };

			memcpy(&pid, p + 8, 4);
			memcpy(&start, p + 16, 8);
			memcpy(&len, p + 24, 8);
			if ((const unsigned char *)name < p + hd.size &&
			    memchr(name, 0, (size_t)(p + hd.size - (const unsigned char *)name)))
				r.flags = ij_is_anon(name) ? IJ_RANGE_ANON : 0;
			else
				name = NULL;
			if (hd.misc & PERF_RECORD_MISC_MMAP_DATA)
				r.flags |= IJ_RANGE_DATA;
			r.pid = pid, r.start = start, r.end = start + len;
			if (ij_add_range(c, &r))
				return -ENOMEM;
			if (name) {
				uint64_t t0;

				if (ij_is_marker(name, pid) && ij_readable_jitdump(c, name)) {
					t0 = ij_marker_time(c, pid);
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
	return ij_find_perfmaps(c);
}

static int write_all(struct ctx *c)
{
	int err = collect_ranges(c);

	if (err) {
		cmd_err("%s", strerror(-err));
		return err;
	}

	/* header, attributes and their ids as they are; the data section follows */
	err = ij_emit(c, c->map, c->h.data.offset);
	err = err ?: copy_records(c);
	if (err)
		return err;
	c->data_size = c->outpos - c->h.data.offset;
	for (size_t i = 0; i < c->nimages; i++)
		ij_image_build_id(&c->images[i]);
	err = copy_features(c) ?: ij_flush(c);
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
	free(c.rounds);
	free(c.pend);
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

