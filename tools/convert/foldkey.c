/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Folded-stack keys: stackcollapse-perf.pl's join(";", pname, frames). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "foldkey.h"
#include "stacks.h"

static int reserve(struct foldkey *k, size_t n)
{
	size_t cap;
	char *s;

	if (k->cap >= n)
		return 0;
	cap = k->cap ? k->cap : 4096;
	while (cap < n)
		cap *= 2;
	s = realloc(k->s, cap);
	if (!s)
		return -ENOMEM;
	k->s = s;
	k->cap = cap;
	return 0;
}

/*
 * Frame i repeats the [unknown] frame before it: a run of frames perf
 * could not name (a broken unwind, up to 127 of them) is one frame, as
 * flamegraph users expect, not a tower that makes the graph tall.
 */
static int unknown_again(const struct ps_sample *s, size_t i)
{
	static const char u[] = "[unknown]";
	const size_t n = sizeof(u) - 1;

	return i && s->frames[i].len == n && s->frames[i - 1].len == n &&
	       !memcmp(s->frames[i].s, u, n) && !memcmp(s->frames[i - 1].s, u, n);
}

static int foldkey_sample(struct foldkey *k, const struct ps_sample *s)
{
	size_t n = s->pname.len, i;
	char *d;

	for (i = 0; i < s->nframes; i++)
		if (!unknown_again(s, i))
			n += 1 + s->frames[i].len;
	k->len = n;
	if (!n)                        /* nothing to copy: an empty name may have no bytes */
		return 0;
	if (reserve(k, n))
		return -ENOMEM;
	d = k->s;
	if (s->pname.len)
		memcpy(d, s->pname.s, s->pname.len);
	d += s->pname.len;
	for (i = 0; i < s->nframes; i++) {
		if (unknown_again(s, i))
			continue;
		*d++ = ';';
		if (s->frames[i].len)
			memcpy(d, s->frames[i].s, s->frames[i].len);
		d += s->frames[i].len;
	}
	return 0;
}

/* Root of a folded stack of calls: thread name, as -PID / -PID/TID like perf's pname. */
static size_t cv_call_root(char *buf, size_t size, const struct cv_call *c, unsigned ps_flags)
{
	const char *name = c->thread && *c->thread ? c->thread : NULL;
	int n;

	if (!name)
		n = snprintf(buf, size, "%u", c->pid);
	else if (ps_flags & PS_TID)
		n = snprintf(buf, size, "%s-%u/%u", name, c->pid, c->tid);
	else if (ps_flags & PS_PID)
		n = snprintf(buf, size, "%s-%u", name, c->pid);
	else
		n = snprintf(buf, size, "%s", name);
	if (n < 0)
		n = 0;
	if ((size_t)n >= size)
		n = size - 1;
	for (int i = 0; i < n; i++)     /* as perf's pname: no blanks, no separators */
		if (buf[i] == ' ' || buf[i] == ';' || buf[i] == '\n' || buf[i] == '\r')
			buf[i] = '_';
	return n;
}

/* a function name as one frame: no separator, no line break */
static char *put_name(char *d, const char *s)
{
	for (; *s; s++)
		*d++ = *s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s;
	return d;
}

static int foldkey_call(struct foldkey *k, const struct cv_call *c, unsigned ps_flags)
{
	char root[256];
	size_t rn = cv_call_root(root, sizeof(root), c, ps_flags), n = rn, i;
	char *d;

	for (i = 0; i <= c->depth; i++)
		n += 1 + strlen(c->stack[i]);
	if (reserve(k, n))
		return -ENOMEM;
	d = k->s;
	memcpy(d, root, rn);
	d += rn;
	for (i = 0; i <= c->depth; i++) {
		*d++ = ';';
		d = put_name(d, c->stack[i]);
	}
	k->len = d - k->s;
	return 0;
}

/* --merge-tiers: each frame after the root without its [tag] */
static void merge_tiers(struct foldkey *k, const struct cv_tiers *t)
{
	char *s = k->s, *root = k->len ? memchr(s, ';', k->len) : NULL, *e;
	size_t in, out, n;

	if (!root)
		return;
	in = out = root - s + 1;
	for (;;) {
		e = memchr(s + in, ';', k->len - in);
		n = (e ? (size_t)(e - s) : k->len) - in;
		memmove(s + out, s + in, n);
		out += cv_tiers_strip(t, s + out, n);
		if (!e)
			break;
		s[out++] = ';';
		in += n + 1;
	}
	k->len = out;
}

int foldagg_init(struct foldagg *a, struct outfile *out, const struct cv_opts *o)
{
	memset(a, 0, sizeof(*a));
	a->out = out;
	a->o = o;
	callpath_init(&a->paths, 1);    /* the root names the thread */
	a->t = stacks_new();
	return a->t ? 0 : -ENOMEM;
}

int foldagg_sample(void *w, const struct ps_sample *s)
{
	struct foldagg *a = w;
	uint32_t known;
	size_t idx;
	int ret;

	if (a->o->source != CV_SAMPLES)
		return 0;
	if (s->stack_id && (known = idmap_get(&a->stack_ids, s->stack_id))) {
		stacks_add_to(a->t, known - 1, s->period);
		return 0;
	}
	if (foldkey_sample(&a->key, s))
		return -ENOMEM;
	if (a->o->merge_tiers)
		merge_tiers(&a->key, a->o->tiers);
	ret = stacks_add_idx(a->t, a->key.s, a->key.len, s->period, &idx);
	/* only a cache: a stack not kept for want of memory is spelt again */
	if (!ret && s->stack_id && idx < UINT32_MAX - 1)
		idmap_put(&a->stack_ids, s->stack_id, (uint32_t)idx + 1);
	return ret;
}

int foldagg_call(void *w, const struct cv_call *c)
{
	struct foldagg *a = w;
	int64_t known;
	size_t idx;
	int ret;

	if (a->o->source != CV_CALLS)
		return 0;
	/* the key depends only on the trace, the thread and the path */
	if ((known = callpath_find(&a->paths, c)) >= 0) {
		stacks_add_to(a->t, (size_t)known, (uint64_t)c->est_ns);
		return 0;
	}
	if (foldkey_call(&a->key, c, a->o->ps_flags))
		return -ENOMEM;
	if (a->o->merge_tiers)
		merge_tiers(&a->key, a->o->tiers);
	ret = stacks_add_idx(a->t, a->key.s, a->key.len, (uint64_t)c->est_ns, &idx);
	if (!ret && idx < UINT32_MAX)
		callpath_keep(&a->paths, c, (uint32_t)idx);
	return ret;
}

void foldagg_fini(struct foldagg *a)
{
	stacks_free(a->t);
	free(a->key.s);
	idmap_free(&a->stack_ids);
	callpath_free(&a->paths);
}

void *foldagg_fork(void *w)
{
	struct foldagg *a = w, *b = malloc(sizeof(*b));

	if (b && foldagg_init(b, a->out, a->o)) {
		foldagg_fini(b);
		free(b);
		b = NULL;
	}
	return b;
}

int foldagg_merge(void *w, void *part)
{
	struct foldagg *a = w, *b = part;
	const struct stack_ent *e;
	size_t n, i;
	int ret = 0;

	e = stacks_entries(b->t, &n);
	for (i = 0; i < n && !ret; i++)
		ret = stacks_add(a->t, e[i].key, e[i].len, e[i].count);
	foldagg_drop(b);
	return ret;
}

void foldagg_drop(void *part)
{
	if (!part)
		return;
	foldagg_fini(part);
	free(part);
}
