/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * 64-bit keys to non-zero 32-bit values, for the caches of a conversion
 * (a sample's stack id, a caller's path and a function id): open
 * addressing, grown to twice the slots when half full.  Zeroed memory is
 * an empty map.
 */
#ifndef JITPERF_IDMAP_H
#define JITPERF_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	uint64_t *keys;
	uint32_t *vals;         /* 0: empty slot */
	size_t    mask, n;
};

/* key's value, or 0. */
uint32_t idmap_get(const struct idmap *m, uint64_t key);
/* Add key (not in m) with val (not 0): 0, or -1 when out of memory. */
int idmap_put(struct idmap *m, uint64_t key, uint32_t val);
void idmap_free(struct idmap *m);

#endif
