/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which image each function goes into, decided for all of a jitdump's
 * (or a perf map's) functions before any is added, so that an image's
 * base, its lowest address, is known when its first function is placed.
 *
 * An image mirrors the process's code (doc/inject.md), so its functions
 * must not overlap, and the holes between them are zeros in its file.  A
 * function goes into the latest of the jitdump's last 64 images where it
 * overlaps no function and the image's holes stay within its code's bytes
 * plus IJ_MAX_GAP; else it starts an image.  Code reused at an address
 * thus goes to another image, and functions loaded in any address order,
 * descending or shuffled, share images.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"

struct taken {                     /* a function's range in an image */
	uint64_t start, end;
};

/* ranges that overlap compare equal: tfind finds any one in the way */
static int cmp_taken(const void *a, const void *b)
{
	const struct taken *x = a, *y = b;

	if (x->end <= y->start)
		return -1;
	return y->end <= x->start ? 1 : 0;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static int fits(const struct ij_image *im, uint64_t addr, uint64_t len)
{
	struct taken key = { addr, addr + len };
	uint64_t span;

	if (!im->taken)
		return 1;
	span = max64(im->end, key.end) - min64(im->base, addr);
	if (span > 2 * (im->planned + len) + IJ_MAX_GAP)
		return 0;
	return tfind(&key, &im->taken, cmp_taken) == NULL;
}

static int new_image(struct ctx *c, struct jitdump *d, size_t *idx)
{
	/* images of a jitdump are consecutive: one jitdump is planned at a time */
	char path[PATH_MAX];
	struct ij_image *im = realloc(c->images, (c->nimages + 1) * sizeof(*im));
	int err;

	if (!im)
		return -ENOMEM;
	c->images = im;
	snprintf(path, sizeof(path), "%s/jitimage-%" PRIu32 "-%zu.so", c->imgdir, d->pid,
		 c->nimages + 1);
	err = ij_image_open(&c->images[c->nimages], path, d->machine);
	if (err)
		return err;
	c->images[c->nimages].pid = d->pid;
	if (!d->nimages++)
		d->first = c->nimages;
	*idx = c->nimages++;
	return 0;
}

int ij_plan(struct ctx *c, struct jitdump *d, uint64_t addr, uint64_t len, uint64_t time,
	    size_t *img)
{
	struct ij_image *im = NULL;
	struct taken *t;
	int err;

	len = len ? len : 1;
	if (addr + len < addr)
		return -EINVAL;
	for (size_t i = d->nimages; i > 0 && i + 64 > d->nimages; i--)
		if (fits(&c->images[d->first + i - 1], addr, len)) {
			*img = d->first + i - 1;
			im = &c->images[*img];
			break;
		}
	if (!im) {
		err = new_image(c, d, img);
		if (err)
			return err;
		im = &c->images[*img];
	}
	t = malloc(sizeof(*t));
	if (t)
		*t = (struct taken){ addr, addr + len };
	if (!t || !tsearch(t, &im->taken, cmp_taken)) {
		free(t);
		return -ENOMEM;
	}
	if (!im->planned) {
		im->base = addr;
		im->end = addr + len;
		im->first_time = time;
	}
	im->base = min64(im->base, addr);
	im->end = max64(im->end, addr + len);
	im->planned += len;
	return 0;
}

static void free_node(void *p)
{
	free(p);
}

void ij_plan_done(struct ctx *c, const struct jitdump *d)
{
	for (size_t i = d->first; i < d->first + d->nimages; i++) {
		tdestroy(c->images[i].taken, free_node);
		c->images[i].taken = NULL;
	}
}
