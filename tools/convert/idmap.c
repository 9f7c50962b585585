/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 64-bit keys to non-zero 32-bit values (idmap.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "idmap.h"

static size_t spread(uint64_t key, size_t mask)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (size_t)(key ^ key >> 32) & mask;
}

/* the slot of key, or the empty one it goes to */
static size_t slot(const uint64_t *keys, const uint32_t *vals, size_t mask, uint64_t key)
{
	size_t j;

	for (j = spread(key, mask); vals[j] && keys[j] != key; j = (j + 1) & mask)
		;
	return j;
}

uint32_t idmap_get(const struct idmap *m, uint64_t key)
{
	return m->vals ? m->vals[slot(m->keys, m->vals, m->mask, key)] : 0;
}

static int grow(struct idmap *m)
{
	size_t mask = m->mask ? m->mask * 2 + 1 : 1023;
	uint64_t *keys = malloc((mask + 1) * sizeof(*keys));
	uint32_t *vals = calloc(mask + 1, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; m->vals && i <= m->mask; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		j = slot(keys, vals, mask, m->keys[i]);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->mask = mask;
	return 0;
}

int idmap_put(struct idmap *m, uint64_t key, uint32_t val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->mask && grow(m))
		return -1;
	j = slot(m->keys, m->vals, m->mask, key);
	m->keys[j] = key;
	m->vals[j] = val;
	m->n++;
	return 0;
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
