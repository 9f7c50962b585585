/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Interned folded stacks: open addressing with linear probing over an index
 * of entry numbers; keys live in large append-only blocks, so adding a
 * stack seen before costs one hash and one memcmp, and no allocation.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

#define BLOCK_SIZE (1u << 20)

struct block {
	struct block *next;
	size_t        used, size;
	char          data[];
};

struct stacks {
	struct stack_ent  *ents;
	size_t             nents, cap_ents;
	uint32_t          *index;      /* entry number + 1, 0 = empty */
	size_t             mask;
	struct block      *blocks;
	uint64_t           total;
	const struct stack_ent **sorted;
};

static inline uint64_t load64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* a multiply-fold hash: 8 bytes per step, good enough for a table index */
static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	while (n >= 16) {
		h = mix(load64(s) ^ 0xa0761d6478bd642full, load64(s + 8) ^ h);
		s += 16;
		n -= 16;
	}
	if (n >= 8) {
		h = mix(load64(s) ^ 0xe7037ed1a0b428dbull, h ^ 0x8ebc6af09c88c6e3ull);
		s += 8;
		n -= 8;
	}
	if (n) {
		uint64_t t = 0;

		memcpy(&t, s, n);
		h = mix(t ^ 0x589965cc75374cc3ull, h ^ 0x1d8e4e27c47d124full);
	}
	return mix(h, 0x9e3779b97f4a7c15ull);
}

struct stacks *stacks_new(void)
{
	struct stacks *t = calloc(1, sizeof(*t));

	if (!t)
		return errno = ENOMEM, NULL;
	t->mask = 1023;
	t->index = calloc(t->mask + 1, sizeof(*t->index));
	if (!t->index) {
		free(t);
		return errno = ENOMEM, NULL;
	}
	return t;
}

void stacks_free(struct stacks *t)
{
	struct block *b, *next;

	if (!t)
		return;
	for (b = t->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	free(t->ents);
	free(t->index);
	free(t->sorted);
	free(t);
}

static char *store(struct stacks *t, const char *key, size_t len)
{
	struct block *b = t->blocks;
	char *p;

	if (!b || b->size - b->used < len) {
		size_t size = len > BLOCK_SIZE / 4 ? len : BLOCK_SIZE;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		if (size == len && t->blocks) {   /* big key: keep the current block */
			b->next = t->blocks->next;
			t->blocks->next = b;
		} else {
			b->next = t->blocks;
			t->blocks = b;
		}
	}
	p = b->data + b->used;
	if (len)
		memcpy(p, key, len);
	b->used += len;
	return p;
}

static int rehash(struct stacks *t)
{
	size_t mask = t->mask * 2 + 1, i;
	uint32_t *index = calloc(mask + 1, sizeof(*index));

	if (!index)
		return -ENOMEM;
	for (i = 0; i < t->nents; i++) {
		size_t j = t->ents[i].hash & mask;

		while (index[j])
			j = (j + 1) & mask;
		index[j] = i + 1;
	}
	free(t->index);
	t->index = index;
	t->mask = mask;
	return 0;
}

int stacks_add(struct stacks *t, const char *key, size_t len, uint64_t count)
{
	size_t idx;

	return stacks_add_idx(t, key, len, count, &idx);
}

void stacks_add_to(struct stacks *t, size_t idx, uint64_t count)
{
	t->total += count;
	t->ents[idx].count += count;
}

int stacks_add_idx(struct stacks *t, const char *key, size_t len, uint64_t count, size_t *idx)
{
	uint64_t h = hash(key, len);
	size_t j = h & t->mask;
	struct stack_ent *e;
	uint32_t k;

	t->total += count;
	while ((k = t->index[j])) {
		e = &t->ents[k - 1];
		if (e->hash == h && e->len == len && !memcmp(e->key, key, len)) {
			e->count += count;
			*idx = k - 1;
			return 0;
		}
		j = (j + 1) & t->mask;
	}
	if (t->nents >= UINT32_MAX - 1)
		return -ENOMEM;
	if (t->nents == t->cap_ents) {
		size_t cap = t->cap_ents ? t->cap_ents * 2 : 1024;
		struct stack_ent *ents = realloc(t->ents, cap * sizeof(*ents));

		if (!ents)
			return -ENOMEM;
		t->ents = ents;
		t->cap_ents = cap;
	}
	e = &t->ents[t->nents];
	e->key = store(t, key, len);
	if (!e->key)
		return -ENOMEM;
	e->hash = h;
	e->len = len;
	e->count = count;
	*idx = t->nents;
	t->index[j] = ++t->nents;
	if (t->nents * 2 > t->mask)
		return rehash(t);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	const struct stack_ent *x = *(const struct stack_ent *const *)a;
	const struct stack_ent *y = *(const struct stack_ent *const *)b;
	int r = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);

	if (r)
		return r;
	return x->len < y->len ? -1 : x->len > y->len;
}

const struct stack_ent *const *stacks_sorted(struct stacks *t, size_t *n)
{
	size_t i;

	free(t->sorted);
	t->sorted = malloc((t->nents + 1) * sizeof(*t->sorted));
	if (!t->sorted)
		return errno = ENOMEM, NULL;
	for (i = 0; i < t->nents; i++) {
		/* a sum below zero (estimated call times less their callees'
		 * estimated times, tools/convert/cvtrace.c) is shown as 0 */
		if (t->ents[i].count > INT64_MAX) {
			t->total -= t->ents[i].count;
			t->ents[i].count = 0;
		}
		t->sorted[i] = &t->ents[i];
	}
	qsort(t->sorted, t->nents, sizeof(*t->sorted), cmp);
	*n = t->nents;
	return t->sorted;
}

uint64_t stacks_total(const struct stacks *t)
{
	return t->total;
}

const struct stack_ent *stacks_entries(const struct stacks *t, size_t *n)
{
	*n = t->nents;
	return t->ents;
}
