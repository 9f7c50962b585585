/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pipe mode in, file mode out (tools/inject/pipein.h).  perf record -o -
 * writes no header to come back to: the attributes, the feature sections
 * and the build ids arrive as records among the others.  They are taken
 * out of the stream as it is read; every other record goes on to a
 * scratch file, so memory holds only what a file-mode header holds.  At
 * the end the file-mode perf.data is laid out as perf record lays it out:
 * header, ids, attributes, the records, the feature table and its
 * sections.  Every size is checked before it is used, and an error names
 * the input and the offset in the stream.
 */
#include "config.h"

#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipein.h"
#include "read/perfdata.h"
#include "read/util.h"
#include "tools/cmds.h"
#include "tools/sigcleanup.h"

#define FILE_HEADER_SIZE 104
#define MAX_ATTR_SIZE    4096

struct attr {
	unsigned char *bytes;          /* asz bytes */
	size_t         asz;
	uint64_t      *ids;
	size_t         nids;
};

struct feature {
	unsigned char *p;
	size_t         len, cap;
	int            set;
};

struct pipein {
	const char     *name;          /* for messages */
	int             fd, datafd, outfd;
	uint64_t        off;           /* of the stream, for messages */
	uint64_t        datalen;
	struct attr    *attrs;
	size_t          nattrs, capattrs;
	struct feature  feat[PD_FEAT_BITS];
	unsigned char   rec[65536];
};

/* the converted file's name, for the signal handler */
static char cleanup_path[PATH_MAX];

static void cleanup_on_signal(void)
{
	if (cleanup_path[0])
		unlink(cleanup_path);
}

static int fail(struct pipein *p, uint64_t off, const char *what)
{
	cmd_err("%s: offset %" PRIu64 ": %s", p->name, off, what);
	return -EINVAL;
}

/* n bytes, or fewer at the end of the stream: how many, or -errno */
static ssize_t read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static int write_full(int fd, const void *buf, size_t n)
{
	while (n) {
		ssize_t r = write(fd, buf, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		buf = (const char *)buf + r;
		n -= (size_t)r;
	}
	return 0;
}

/* exactly n bytes of the stream, or an error naming what was cut short */
static int take(struct pipein *p, void *buf, size_t n, const char *what)
{
	ssize_t r = read_full(p->fd, buf, n);

	if (r < 0) {
		cmd_err("%s: %s", p->name, strerror((int)-r));
		return (int)r;
	}
	if ((size_t)r < n) {
		char msg[96];

		snprintf(msg, sizeof(msg), "truncated: %s of %zu bytes, %zd left", what, n, r);
		return fail(p, p->off, msg);
	}
	return 0;
}

static int feature_put(struct pipein *p, int feat, const void *b, size_t n)
{
	struct feature *f = &p->feat[feat];

	if (rd_grow((void **)&f->p, &f->cap, f->len + n, 1))
		return -ENOMEM;
	if (n)        /* an empty feature: f->p may still be NULL */
		memcpy(f->p + f->len, b, n);
	f->len += n;
	f->set = 1;
	return 0;
}

static int add_attr(struct pipein *p, const unsigned char *r, size_t size)
{
	uint32_t asz;
	struct attr *a;

	if (size < 8 + PERF_ATTR_SIZE_VER0)
		return fail(p, p->off, "truncated attribute record");
	memcpy(&asz, r + 8 + 4, 4);    /* perf_event_attr.size */
	if (!asz)
		asz = PERF_ATTR_SIZE_VER0;
	if (asz < PERF_ATTR_SIZE_VER0 || asz > MAX_ATTR_SIZE || asz > size - 8)
		return fail(p, p->off, "attribute larger than its record");
	if (rd_grow((void **)&p->attrs, &p->capattrs, p->nattrs + 1, sizeof(*a)))
		return -ENOMEM;
	a = &p->attrs[p->nattrs];
	a->asz = asz;
	a->nids = (size - 8 - asz) / 8;
	a->bytes = malloc(asz);
	a->ids = malloc(a->nids ? a->nids * 8 : 1);
	p->nattrs++;
	if (!a->bytes || !a->ids)
		return -ENOMEM;
	memcpy(a->bytes, r + 8, asz);
	memcpy(a->ids, r + 8 + asz, a->nids * 8);
	return 0;
}

/* the n bytes that follow a record: to the scratch file, or into a feature */
static int payload(struct pipein *p, uint64_t n, int feat)
{
	unsigned char buf[65536];
	int err = 0;

	while (n && !err) {
		size_t k = n < sizeof(buf) ? (size_t)n : sizeof(buf);

		err = take(p, buf, k, "the data after a record");
		if (!err)
			err = feat >= 0 ? feature_put(p, feat, buf, k) : write_full(p->datafd, buf, k);
		if (!err && feat < 0)
			p->datalen += k;
		p->off += k;
		n -= k;
	}
	return err;
}

/* One record of the stream, its header already in p->rec: taken in or passed on. */
static int record(struct pipein *p)
{
	struct perf_event_header h;
	uint64_t extra = 0, feat;
	ssize_t r;
	int err = 0;

	memcpy(&h, p->rec, 8);
	if (h.size < 8 || (h.type < PD_HEADER_ATTR && h.size % 8)) {
		char msg[64];

		snprintf(msg, sizeof(msg), "record of type %" PRIu32 " has a bad size %u",
			 h.type, h.size);
		return fail(p, p->off, msg);
	}
	r = read_full(p->fd, p->rec + 8, h.size - 8u);
	if (r < 0) {
		cmd_err("%s: %s", p->name, strerror((int)-r));
		return (int)r;
	}
	if (r < h.size - 8) {
		char msg[64];

		snprintf(msg, sizeof(msg), "truncated: record of %u bytes, %zd left", h.size, r + 8);
		return fail(p, p->off, msg);
	}
	switch (h.type) {
	case PD_HEADER_ATTR:
		err = add_attr(p, p->rec, h.size);
		break;
	case PD_HEADER_FEATURE:
		if (h.size < 16)
			return fail(p, p->off, "truncated feature record");
		memcpy(&feat, p->rec + 8, 8);
		if (feat < PD_FEAT_BITS && feat != 0) {
			p->feat[feat].len = 0;     /* a section comes once; the last one counts */
			err = feature_put(p, (int)feat, p->rec + 16, h.size - 16u);
		}
		break;
	case PD_HEADER_BUILD_ID:       /* the records are what the feature holds */
		err = feature_put(p, PD_FEAT_BUILD_ID, p->rec, h.size);
		break;
	case PD_HEADER_TRACING_DATA:   /* its data follows: feature 1 of a file */
		if (h.size < 12)
			return fail(p, p->off, "truncated tracing data record");
		extra = (uint32_t)(p->rec[8] | p->rec[9] << 8 | p->rec[10] << 16 |
				   (uint32_t)p->rec[11] << 24);
		p->off += h.size;
		return payload(p, extra, 1);
	case PD_HEADER_EVENT_TYPE:     /* obsolete: perf reads event names elsewhere */
		break;
	case PD_COMPRESSED:
		return fail(p, p->off, "compressed records (perf record -z) are not supported: "
			    "decompress with perf inject -i IN -o OUT");
	default:
		if (h.type == PD_AUXTRACE) {
			if (h.size < 16)
				return fail(p, p->off, "truncated auxtrace record");
			memcpy(&extra, p->rec + 8, 8);
		}
		err = write_full(p->datafd, p->rec, h.size);
		if (err) {
			cmd_err("%s: %s", cleanup_path, strerror(-err));
			return err;
		}
		p->datalen += h.size;
		p->off += h.size;
		return payload(p, extra, -1);
	}
	p->off += h.size;
	return err;
}

/* header, ids, attributes, the records, the feature table and its sections */
static int write_file(struct pipein *p)
{
	uint64_t h[FILE_HEADER_SIZE / 8] = { 0 }, idoff = FILE_HEADER_SIZE, off, asz = 0;
	uint64_t bits[4] = { 0 }, nfeat = 0;
	unsigned char *attr = NULL;
	loff_t in = 0;
	int err = 0;

	for (size_t i = 0; i < p->nattrs; i++)
		asz = p->attrs[i].asz > asz ? p->attrs[i].asz : asz;
	asz = (asz + 7) / 8 * 8;
	off = idoff;
	for (size_t i = 0; i < p->nattrs; i++)
		off += 8 * p->attrs[i].nids;
	memcpy(h, "PERFILE2", 8);
	h[1] = FILE_HEADER_SIZE;
	h[2] = asz + 16;
	h[3] = off;                                    /* attributes */
	h[4] = p->nattrs * (asz + 16);
	h[5] = off + h[4];                             /* records */
	h[6] = p->datalen;
	for (int f = 0; f < PD_FEAT_BITS; f++)
		if (p->feat[f].set) {
			bits[f / 64] |= 1ull << (f % 64);
			nfeat++;
		}
	memcpy(&h[9], bits, sizeof(bits));
	err = write_full(p->outfd, h, sizeof(h));
	for (size_t i = 0; i < p->nattrs && !err; i++)
		err = write_full(p->outfd, p->attrs[i].ids, 8 * p->attrs[i].nids);
	if (!err && !(attr = calloc(1, asz)))
		err = -ENOMEM;
	for (size_t i = 0; i < p->nattrs && !err; i++) {
		uint64_t sec[2] = { idoff, 8 * p->attrs[i].nids };

		memset(attr, 0, asz);
		memcpy(attr, p->attrs[i].bytes, p->attrs[i].asz);
		err = write_full(p->outfd, attr, asz) ?: write_full(p->outfd, sec, sizeof(sec));
		idoff += sec[1];
	}
	free(attr);
	/* the records, from the scratch file */
	for (uint64_t left = p->datalen; !err && left; ) {
		ssize_t n = copy_file_range(p->datafd, &in, p->outfd, NULL, left, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		left -= (uint64_t)n;
	}
	off = h[5] + h[6] + 16 * nfeat;
	for (int f = 0; f < PD_FEAT_BITS && !err; f++)
		if (p->feat[f].set) {
			uint64_t sec[2] = { off, p->feat[f].len };

			err = write_full(p->outfd, sec, sizeof(sec));
			off += sec[1];
		}
	for (int f = 0; f < PD_FEAT_BITS && !err; f++)
		if (p->feat[f].set)
			err = write_full(p->outfd, p->feat[f].p, p->feat[f].len);
	if (err == -ENOMEM)
		cmd_err("%s: out of memory", p->name);
	else if (err)
		cmd_err("%s: %s", cleanup_path, strerror(-err));
	return err;
}

static int convert(struct pipein *p, size_t headlen)
{
	int err = 0;
	ssize_t r;

	p->off = headlen;
	for (;;) {
		r = read_full(p->fd, p->rec, 8);
		if (r < 0) {
			cmd_err("%s: %s", p->name, strerror((int)-r));
			return (int)r;
		}
		if (r == 0)
			break;
		if (r < 8)
			return fail(p, p->off, "truncated record header");
		err = record(p);
		if (err == -ENOMEM)
			cmd_err("%s: out of memory", p->name);
		if (err)
			return err;
	}
	if (!p->nattrs)
		return fail(p, p->off, "no event attributes");
	return write_file(p);
}

/* a file-mode perf.data on standard input, copied as it is */
static int copy_stream(struct pipein *p, const unsigned char *head, size_t headlen)
{
	unsigned char buf[65536];
	ssize_t r;
	int err = write_full(p->outfd, head, headlen);

	while (!err && (r = read_full(p->fd, buf, sizeof(buf))) > 0)
		err = write_full(p->outfd, buf, (size_t)r);
	if (!err && r < 0) {
		cmd_err("%s: %s", p->name, strerror((int)-r));
		return (int)r;
	}
	if (err)
		cmd_err("%s: %s", cleanup_path, strerror(-err));
	return err;
}

/* a scratch file in dir, already unlinked, or the converted file's name in cleanup_path */
static int make_temp(const char *dir, int keep)
{
	char path[PATH_MAX];
	sigset_t old;
	int fd;

	snprintf(path, sizeof(path), "%s/.jitperf-%s-XXXXXX", dir, keep ? "in" : "records");
	sigcleanup_block(&old);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0 && keep)
		memcpy(cleanup_path, path, sizeof(path));
	else if (fd >= 0)
		unlink(path);
	sigcleanup_unblock(&old);
	if (fd < 0)
		cmd_err("%s: cannot create a temporary file: %s", dir, strerror(errno));
	return fd < 0 ? -errno : fd;
}

int ij_pipein(const char *in, const char *dir, char **tmp)
{
	struct pipein *p = calloc(1, sizeof(*p));
	unsigned char head[16];
	uint64_t hsize = 0;
	int stdin_ = !strcmp(in, "-"), err = 0, pipe;
	ssize_t r;

	*tmp = NULL;
	if (!p)
		return -ENOMEM;
	p->name = stdin_ ? "(stdin)" : in;
	p->datafd = p->outfd = -1;
	p->fd = stdin_ ? 0 : open(in, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0) {
		err = -errno;
		cmd_err("%s: %s", in, strerror(errno));
		goto out;
	}
	r = read_full(p->fd, head, sizeof(head));
	if (r < 0) {
		err = (int)r;
		cmd_err("%s: %s", p->name, strerror(-err));
		goto out;
	}
	if (r >= 16)
		memcpy(&hsize, head + 8, 8);
	pipe = r == 16 && !memcmp(head, "PERFILE2", 8) && hsize == 16;
	if (!pipe && !stdin_)
		goto out;              /* a file inject maps as it is */
	if (!pipe && (r < 8 || memcmp(head, "PERFILE2", 8))) {
		err = fail(p, 0, r < 8 ? "truncated: no perf.data header"
			   : "not a perf.data file (no PERFILE2 magic)");
		goto out;
	}
	sigcleanup_add(cleanup_on_signal);
	p->outfd = make_temp(dir, 1);
	if (p->outfd < 0) {
		err = p->outfd;
		goto out;
	}
	if (pipe) {
		p->datafd = make_temp(dir, 0);
		err = p->datafd < 0 ? p->datafd : convert(p, (size_t)r);
	} else {
		err = copy_stream(p, head, (size_t)r);
	}
	if (!err && !(*tmp = strdup(cleanup_path)))
		err = -ENOMEM;
out:
	if (err && p->outfd >= 0) {
		unlink(cleanup_path);
		cleanup_path[0] = '\0';
	}
	if (p->outfd >= 0)
		close(p->outfd);
	if (p->datafd >= 0)
		close(p->datafd);
	if (p->fd > 0)
		close(p->fd);
	for (size_t i = 0; i < p->nattrs; i++) {
		free(p->attrs[i].bytes);
		free(p->attrs[i].ids);
	}
	free(p->attrs);
	for (int f = 0; f < PD_FEAT_BITS; f++)
		free(p->feat[f].p);
	free(p);
	return err;
}

void ij_pipein_done(char *tmp)
{
	sigset_t old;

	if (!tmp)
		return;
	sigcleanup_block(&old);
	unlink(tmp);
	cleanup_path[0] = '\0';
	sigcleanup_unblock(&old);
	free(tmp);
}
