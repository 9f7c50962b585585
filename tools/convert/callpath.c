/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Call paths, numbered, and what a writer keeps for each (callpath.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "callpath.h"

/* Open addressing, grown to twice the slots when half full. */
static size_t spread(uint64_t key, size_t mask)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (size_t)(key ^ key >> 32) & mask;
}

static int tree_grow(struct pathtree *t)
{
	size_t mask = t->mask ? t->mask * 2 + 1 : 1023;
	uint64_t *keys = malloc((mask + 1) * sizeof(*keys));
	uint32_t *paths = calloc(mask + 1, sizeof(*paths));

	if (!keys || !paths) {
		free(keys);
		free(paths);
		return -1;
	}
	for (size_t i = 0; t->paths && i <= t->mask; i++) {
		size_t j;

		if (!t->paths[i])
			continue;
		for (j = spread(t->keys[i], mask); paths[j]; j = (j + 1) & mask)
			;
		keys[j] = t->keys[i];
		paths[j] = t->paths[i];
	}
	free(t->keys);
	free(t->paths);
	t->keys = keys;
	t->paths = paths;
	t->mask = mask;
	return 0;
}

uint32_t pathtree_child(struct pathtree *t, uint32_t parent, uint32_t fn)
{
	uint64_t key = (uint64_t)parent << 32 | fn;
	size_t j;

	if (t->paths)
		for (j = spread(key, t->mask); t->paths[j]; j = (j + 1) & t->mask)
			if (t->keys[j] == key)
				return t->paths[j];
	if (t->n >= UINT32_MAX - 1 || ((t->n + 1) * 2 > t->mask && tree_grow(t)))
		return 0;
	for (j = spread(key, t->mask); t->paths[j]; j = (j + 1) & t->mask)
		;
	t->keys[j] = key;
	t->paths[j] = (uint32_t)++t->n;
	return t->paths[j];
}

void pathtree_free(struct pathtree *t)
{
	free(t->keys);
	free(t->paths);
	memset(t, 0, sizeof(*t));
}

struct callpath_ent {
	uint32_t input, tid, path;      /* path 0: empty */
	uint32_t value;
};

void callpath_init(struct callpath *cp, int by_thread)
{
	memset(cp, 0, sizeof(*cp));
	cp->by_thread = by_thread;
}

/* c's entry, or the empty one it goes to */
static struct callpath_ent *slot(const struct callpath *cp, const struct callpath_ent *e)
{
	size_t j = spread((uint64_t)e->input << 32 ^ (uint64_t)e->tid << 40 ^ e->path, cp->mask);

	for (; cp->v[j].path; j = (j + 1) & cp->mask)
		if (cp->v[j].path == e->path && cp->v[j].input == e->input && cp->v[j].tid == e->tid)
			break;
	return &cp->v[j];
}

static struct callpath_ent key_of(const struct callpath *cp, const struct cv_call *c)
{
	/* a trace is one process: its thread is enough */
	return (struct callpath_ent){ .input = c->input, .tid = cp->by_thread ? c->tid : 0,
				      .path = c->path };
}

int64_t callpath_find(const struct callpath *cp, const struct cv_call *c)
{
	struct callpath_ent k = key_of(cp, c), *e;

	if (!cp->v || !c->path)
		return -1;
	e = slot(cp, &k);
	return e->path ? (int64_t)e->value : -1;
}

static int grow(struct callpath *cp)
{
	size_t mask = cp->mask ? cp->mask * 2 + 1 : 1023;
	struct callpath *bigger = &(struct callpath){ .mask = mask };

	if (!(bigger->v = calloc(mask + 1, sizeof(*bigger->v))))
		return -1;
	for (size_t i = 0; cp->v && i <= cp->mask; i++)
		if (cp->v[i].path)
			*slot(bigger, &cp->v[i]) = cp->v[i];
	free(cp->v);
	cp->v = bigger->v;
	cp->mask = mask;
	return 0;
}

void callpath_keep(struct callpath *cp, const struct cv_call *c, uint32_t value)
{
	struct callpath_ent k = key_of(cp, c);

	if (!c->path || ((cp->n + 1) * 2 > cp->mask && grow(cp)))
		return;
	k.value = value;
	*slot(cp, &k) = k;
	cp->n++;
}

void callpath_free(struct callpath *cp)
{
	free(cp->v);
	memset(cp, 0, sizeof(*cp));
}
