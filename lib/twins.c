/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Has this session already written these exact code bytes?  perf inject
 * --jit names each injected ELF by a build-id; perf 6.1 draws it at random,
 * but newer perf hashes only the code bytes, so two functions with
 * identical code would share a build-id and perf (through its build-id
 * cache) could show one's name for the other.  lib/jitdump.c asks here and
 * gives every repeat a few distinguishing bytes after its code.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/*
 * Open addressing over 32-bit fingerprints: half the cache misses of full
 * hashes.  A fingerprint collision only gives code a needless tail.
 */
struct jp_twins {
	size_t    cap;      /* power of two */
	size_t    n;
	uint32_t *slot;     /* 0 = empty */
};

/*
 * Four independent lanes, so the multiplies overlap.  With dst, the bytes
 * are copied while they are hashed: the code is read once (it is often
 * no longer in the cache) instead of once for the hash and once for the copy.
 */
static inline __attribute__((always_inline)) uint64_t
hash_copy(unsigned char *dst, const void *code, size_t len)
{
	const unsigned char *p = code;
	uint64_t h[4] = { 0x9e3779b97f4a7c15ull ^ len, 0xbf58476d1ce4e5b9ull,
			  0x94d049bb133111ebull, 0x2545f4914f6cdd1dull };
	uint64_t v, r;
	int i;

	for (; len >= 32; p += 32, len -= 32) {
		if (dst) {
			memcpy(dst, p, 32);
			dst += 32;
		}
		for (i = 0; i < 4; i++) {
			memcpy(&v, p + 8 * i, 8);
			h[i] = (h[i] ^ v) * 0xff51afd7ed558ccdull;
			h[i] ^= h[i] >> 32;
		}
	}
	if (dst)
		memcpy(dst, p, len);
	for (i = 0; len >= 8; p += 8, len -= 8, i++) {
		memcpy(&v, p, 8);
		h[i] = (h[i] ^ v) * 0xff51afd7ed558ccdull;
	}
	v = 0;
	memcpy(&v, p, len);
	r = (h[0] ^ (h[1] >> 1) ^ (h[2] << 1) ^ (h[3] >> 3) ^ v) * 0xc4ceb9fe1a85ec53ull;
	r ^= (h[1] + h[3]) * 0xff51afd7ed558ccdull;
	r ^= r >> 29;
	return r ? r : 1;
}

uint64_t jp_code_hash(const void *code, size_t len)
{
	return hash_copy(NULL, code, len);
}

uint64_t jp_code_copy_hash(void *dst, const void *code, size_t len)
{
	return hash_copy(dst, code, len);
}

static int grow(struct jp_twins *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slot[i])
			continue;
		for (j = (t->slot[i] * 0x9e3779b1u) & (cap - 1); slot[j]; j = (j + 1) & (cap - 1))
			;
		slot[j] = t->slot[i];
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

static uint32_t fingerprint(uint64_t hash)
{
	return (uint32_t)(hash >> 32) ? (uint32_t)(hash >> 32) : 1;
}

/* Start loading the slot of hash: the lookup is a cache miss once the table is big. */
void jp_twins_prefetch(const struct jp_twins *t, uint64_t hash)
{
	if (t)
		__builtin_prefetch(&t->slot[(fingerprint(hash) * 0x9e3779b1u) & (t->cap - 1)], 0);
}

int jp_twins_seen(struct jp_twins **tp, uint64_t hash)
{
	struct jp_twins *t = *tp;
	uint32_t fp = fingerprint(hash);
	size_t j;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		*tp = t;
	}
	if (2 * (t->n + 1) > t->cap && grow(t) < 0)
		return -ENOMEM;
	for (j = (fp * 0x9e3779b1u) & (t->cap - 1); t->slot[j]; j = (j + 1) & (t->cap - 1))
		if (t->slot[j] == fp)
			return 1;
	t->slot[j] = fp;
	t->n++;
	return 0;
}

void jp_twins_free(struct jp_twins *t)
{
	if (t) {
		free(t->slot);
		free(t);
	}
}
