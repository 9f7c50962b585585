/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An object's lines and unwind info read when libjitperf writes its jitdump
 * out, not while the JIT waits (lib/later.h): the listener registers each
 * function at once, with a later of this object's, which keeps a copy of
 * what reading needs -- the image, the sections' run-time addresses, the
 * loaded .eh_frame -- since LLVM may free them as soon as the callback
 * returns.  The first fill reads the whole object (llvm/object.c), the
 * others take their function's part; the last done frees it all.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/later.h"
#include "llvm/llvm.h"

struct fn {
	struct jitperf__later base;     /* first: what libjitperf gets */
	struct jpl_job       *job;
	size_t                k;        /* its place among the object's functions */
	uint64_t              addr;
};

/*
 * What reading a typical object allocates fits here, in the job: arena
 * blocks malloc'ed and freed for every object would have glibc give the
 * top of its heap back and fault it in again (a page costs microseconds
 * on a VM).
 */
#define READ_SPACE 16384

struct jpl_job {
	int               refs;         /* functions not yet done */
	pthread_mutex_t   lock;         /* the reading, by whichever thread fills first */
	int               read;
	struct jpl_arena  arena;        /* what reading allocates */
	struct jpl_object o;
	struct fn        *fns;
	unsigned char     space[READ_SPACE] __attribute__((aligned(16)));
};

/* The function of f in what was read: at its place, or found by address. */
static const struct jpl_func *func_of(const struct jpl_object *o, const struct fn *f)
{
	if (f->k < o->nfuncs && o->funcs[f->k].addr == f->addr)
		return &o->funcs[f->k];
	for (size_t i = 0; i < o->nfuncs; i++)
		if (o->funcs[i].addr == f->addr)
			return &o->funcs[i];
	return NULL;
}

static int fill(struct jitperf__later *later, struct jitperf_code *c)
{
	struct fn *f = (struct fn *)later;
	struct jpl_job *j = f->job;
	const struct jpl_func *fu;
	int err = 0;

	pthread_mutex_lock(&j->lock);
	if (!j->read) {
		j->read = 1;
		err = jpl_object_read(&j->o);
		if (err)
			jpl_debug("cannot read a loaded object: %s", jitperf_strerror(err));
	}
	fu = err ? NULL : func_of(&j->o, f);
	pthread_mutex_unlock(&j->lock);
	if (!fu)
		return err ? err : -ENOENT;
	c->lines = fu->lines;
	c->nlines = fu->nlines;
	c->eh_frame = fu->eh_frame;
	c->eh_frame_len = fu->eh_frame_len;
	return 0;
}

static void done(struct jitperf__later *later)
{
	struct jpl_job *j = ((struct fn *)later)->job;

	if (__atomic_sub_fetch(&j->refs, 1, __ATOMIC_ACQ_REL))
		return;
	jpl_arena_free(&j->arena);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

struct jpl_job *jpl_job_new(const struct jpl_object *o)
{
	size_t fns = o->nfuncs * sizeof(struct fn), addrs = o->nsec * sizeof(uint64_t);
	struct jpl_job *j;
	unsigned char *p;

	if (!o->nfuncs)
		return NULL;
	/* one block: the job, its functions, the section addresses, the
	 * .eh_frame and the image (8-aligned: its ELF structures are read in place) */
	j = malloc(sizeof(*j) + fns + addrs + ((o->eh_frame_len + 7) & ~(size_t)7) + o->size);
	if (!j)
		return NULL;
	memset(j, 0, offsetof(struct jpl_job, space));
	j->refs = (int)o->nfuncs;
	pthread_mutex_init(&j->lock, NULL);
	p = (unsigned char *)(j + 1);
	j->fns = (struct fn *)p;
	p += fns;
	memcpy(p, o->sec_addr, addrs);
	j->o.sec_addr = (const uint64_t *)p;
	j->o.nsec = o->nsec;
	p += addrs;
	if (o->eh_frame_len)
		memcpy(p, (const void *)(uintptr_t)o->eh_frame_addr, o->eh_frame_len);
	j->o.eh_frame_copy = p;
	p += (o->eh_frame_len + 7) & ~(size_t)7;
	memcpy(p, o->image, o->size);
	j->o.image = p;
	j->o.size = o->size;
	j->o.want_lines = j->o.want_unwind = 1;
	jpl_arena_init(&j->arena, j->space, sizeof(j->space));
	j->o.arena = &j->arena;
	for (size_t k = 0; k < o->nfuncs; k++) {
		struct fn *f = &j->fns[k];

		f->base.fill = fill;
		f->base.done = done;
		f->job = j;
		f->k = k;
		f->addr = o->funcs[k].addr;
	}
	return j;
}

struct jitperf__later *jpl_job_later(struct jpl_job *j, size_t k)
{
	return &j->fns[k].base;
}
