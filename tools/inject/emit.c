/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf inject's output stream (tools/inject/ctx.h): records written
 * through one buffer, and the MMAP2 records that map code onto images.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ctx.h"
#include "read/perfdata.h"
#include "tools/cmds.h"

int ij_flush(struct ctx *c)
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

int ij_emit(struct ctx *c, const void *p, size_t len)
{
	int err = ij_buf_put(&c->wbuf, p, len);

	if (err) {
		cmd_err("%s: %s", c->out, strerror(-err));
		return err;
	}
	c->outpos += len;
	return c->wbuf.len >= (1u << 20) ? ij_flush(c) : 0;
}

/* one PERF_RECORD_MMAP2 into the image, with the sample_id fields perf reads */
int ij_emit_mmap(struct ctx *c, const struct ij_image *im, uint32_t pid, uint32_t tid,
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
	return ij_emit(c, ev, n);
}
