/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Call paths met before (tools/convert/callpath.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "callpath.h"

struct callpath_ent {
	uint64_t hash;      /* 0: empty */
	size_t   at;        /* its words in the pool */
	uint32_t value;
};

#define HEAD 4              /* input, pid, tid, number of ids; then the ids */

void callpath_init(struct callpath *cp, int by_thread)
{
	memset(cp, 0, sizeof(*cp));
	cp->by_thread = by_thread;
}

static uint32_t pid_of(const struct callpath *cp, const struct cv_call *c)
{
	return cp->by_thread ? c->pid : 0;
}

static uint32_t tid_of(const struct callpath *cp, const struct cv_call *c)
{
	return cp->by_thread ? c->tid : 0;
}

uint64_t callpath_hash(const struct callpath *cp, const struct cv_call *c)
{
	uint64_t h = ((uint64_t)c->input << 32 | pid_of(cp, c)) * 0x9e3779b97f4a7c15ull;

	h = (h ^ ((uint64_t)tid_of(cp, c) << 32 | (uint32_t)c->depth)) * 0xff51afd7ed558ccdull;
	for (size_t i = 0; i <= c->depth; i++)
		h = (h ^ c->stack_ids[i]) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return h ? h : 1;
}

static int same(const struct callpath *cp, const struct callpath_ent *e, const struct cv_call *c)
{
	const uint32_t *v = cp->pool + e->at;

	return v[0] == c->input && v[1] == pid_of(cp, c) && v[2] == tid_of(cp, c) &&
	       v[3] == c->depth + 1 && !memcmp(v + HEAD, c->stack_ids, (c->depth + 1) * sizeof(*v));
}

/* c's entry, or the empty one it goes to */
static struct callpath_ent *slot(const struct callpath *cp, const struct cv_call *c, uint64_t h)
{
	size_t j;

	for (j = h & cp->mask; cp->v[j].hash; j = (j + 1) & cp->mask)
		if (cp->v[j].hash == h && same(cp, &cp->v[j], c))
			break;
	return &cp->v[j];
}

int64_t callpath_find(const struct callpath *cp, const struct cv_call *c, uint64_t h)
{
	const struct callpath_ent *e;

	if (!cp->v || !c->stack_ids)
		return -1;
	e = slot(cp, c, h);
	return e->hash ? (int64_t)e->value : -1;
}

/* Twice the entries, when half full; 0, or -1 out of memory. */
static int grow(struct callpath *cp)
{
	size_t mask = cp->mask ? cp->mask * 2 + 1 : 1023;
	struct callpath_ent *v = calloc(mask + 1, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; cp->v && i <= cp->mask; i++) {
		size_t j;

		if (!cp->v[i].hash)
			continue;
		for (j = cp->v[i].hash & mask; v[j].hash; j = (j + 1) & mask)
			;
		v[j] = cp->v[i];
	}
	free(cp->v);
	cp->v = v;
	cp->mask = mask;
	return 0;
}

void callpath_keep(struct callpath *cp, const struct cv_call *c, uint64_t h, uint32_t value)
{
	size_t words = HEAD + c->depth + 1;
	struct callpath_ent *e;
	uint32_t *w;

	if (!c->stack_ids || c->depth >= UINT32_MAX - 1 ||
	    (cp->n * 2 >= cp->mask && grow(cp)))
		return;
	if (cp->pool_len + words > cp->pool_cap) {
		size_t cap = cp->pool_cap ? cp->pool_cap : 4096;

		while (cap < cp->pool_len + words)
			cap *= 2;
		if (!(w = realloc(cp->pool, cap * sizeof(*w))))
			return;
		cp->pool = w;
		cp->pool_cap = cap;
	}
	e = slot(cp, c, h);
	e->hash = h;
	e->at = cp->pool_len;
	e->value = value;
	w = cp->pool + cp->pool_len;
	w[0] = c->input;
	w[1] = pid_of(cp, c);
	w[2] = tid_of(cp, c);
	w[3] = (uint32_t)(c->depth + 1);
	memcpy(w + HEAD, c->stack_ids, (c->depth + 1) * sizeof(*w));
	cp->pool_len += words;
	cp->n++;
}

void callpath_free(struct callpath *cp)
{
	free(cp->v);
	free(cp->pool);
	memset(cp, 0, sizeof(*cp));
}
