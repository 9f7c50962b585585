/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The code indices each loaded object got, by LLVM's object key, so that
 * notifyFreeingObject can unload exactly those: a chained hash table that
 * doubles when it holds as many objects as it has buckets.  The caller
 * serialises calls.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llvm/llvm.h"

struct entry {
	struct entry *next;
	uint64_t      key;
	size_t        n;
	uint64_t      index[];
};

struct jpl_keys {
	struct entry **bucket;
	size_t         nbuckets;    /* a power of two */
	size_t         count;
};

static size_t slot(uint64_t key, size_t nbuckets)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;   /* keys are often addresses: mix the low bits */
	key ^= key >> 33;
	return (size_t)key & (nbuckets - 1);
}

static int rehash(struct jpl_keys *t, size_t nbuckets)
{
	struct entry **b = calloc(nbuckets, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < t->nbuckets; i++)
		while (t->bucket[i]) {
			struct entry *e = t->bucket[i];
			size_t s = slot(e->key, nbuckets);

			t->bucket[i] = e->next;
			e->next = b[s];
			b[s] = e;
		}
	free(t->bucket);
	t->bucket = b;
	t->nbuckets = nbuckets;
	return 0;
}

int jpl_keys_add(struct jpl_keys **tp, uint64_t key, const uint64_t *index, size_t n)
{
	struct jpl_keys *t = *tp;
	struct entry *e;
	size_t s;

	if (!t) {
		if (!(t = calloc(1, sizeof(*t))) || rehash(t, 64)) {
			free(t);
			return -ENOMEM;
		}
		*tp = t;
	}
	if (t->count >= t->nbuckets && rehash(t, 2 * t->nbuckets))
		return -ENOMEM;
	if (!(e = malloc(sizeof(*e) + n * sizeof(*index))))
		return -ENOMEM;
	e->key = key;
	e->n = n;
	memcpy(e->index, index, n * sizeof(*index));
	s = slot(key, t->nbuckets);
	e->next = t->bucket[s];
	t->bucket[s] = e;
	t->count++;
	return 0;
}

size_t jpl_keys_take(struct jpl_keys *t, uint64_t key, uint64_t **index)
{
	struct entry **p, *e;
	size_t n;

	*index = NULL;
	if (!t)
		return 0;
	for (p = &t->bucket[slot(key, t->nbuckets)]; (e = *p); p = &e->next) {
		if (e->key != key)
			continue;
		*p = e->next;
		t->count--;
		n = e->n;
		/* the entry's own memory is handed out: index[] is its tail */
		memmove(e, e->index, n * sizeof(*e->index));
		*index = (uint64_t *)(void *)e;
		return n;
	}
	return 0;
}

void jpl_keys_free(struct jpl_keys *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbuckets; i++)
		while (t->bucket[i]) {
			struct entry *e = t->bucket[i];

			t->bucket[i] = e->next;
			free(e);
		}
	free(t->bucket);
	free(t);
}
