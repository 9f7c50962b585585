/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Code index -> address, length, name: what jitperf_code_move/_unload and
 * the fork child need.  Entries live in blocks of BLOCK, found through a
 * directory of blocks, and names in a string arena: no malloc per load, and
 * nothing is ever copied to grow (a realloc of a table of thousands of
 * entries would copy it all, and touch as many new pages, in one load).
 * Freed with the session.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define CHUNK_SIZE (64 * 1024)

struct chunk {
	struct chunk *prev;
	size_t        used, cap;
	char          text[];
};

#define BLOCK 512             /* entries per block: 20 KiB */

struct jp_codetab {
	struct chunk         *names;
	uint64_t              n;        /* indices 1..n are in use */
	uint64_t              nblocks, dircap;
	struct jp_code_entry **blocks;  /* the directory: entry i is blocks[i / BLOCK][i % BLOCK] */
};

static char *arena_copy(struct chunk **top, const char *s, size_t len)
{
	size_t n = len + 1;
	struct chunk *c = *top;
	char *p;

	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_SIZE ? n : CHUNK_SIZE;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->prev = *top;
		c->used = 0;
		c->cap = cap;
		*top = c;
	}
	p = c->text + c->used;
	memcpy(p, s, len);
	p[len] = 0;
	c->used += n;
	return p;
}

/* Room for entry tab->n (0-based): a new block when the last one is full. */
static int room(struct jp_codetab *tab)
{
	struct jp_code_entry *b;

	if (tab->n < tab->nblocks * BLOCK)
		return 0;
	if (tab->nblocks == tab->dircap) {
		uint64_t cap = tab->dircap ? tab->dircap * 2 : 16;
		struct jp_code_entry **d = realloc(tab->blocks, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		tab->blocks = d;
		tab->dircap = cap;
	}
	b = malloc(BLOCK * sizeof(*b));
	if (!b)
		return -ENOMEM;
	tab->blocks[tab->nblocks++] = b;
	return 0;
}

int jp_codetab_add(struct jp_codetab **tabp, uint64_t addr, uint64_t len, const char *name,
		   size_t nlen, uint64_t *index)
{
	struct jp_codetab *tab = *tabp;
	struct jp_code_entry *e;
	char *copy;

	if (!tab && !(tab = *tabp = calloc(1, sizeof(*tab))))
		return -ENOMEM;
	if (room(tab))
		return -ENOMEM;
	copy = arena_copy(&tab->names, name, nlen);
	if (!copy)
		return -ENOMEM;
	e = &tab->blocks[tab->n / BLOCK][tab->n % BLOCK];
	e->addr = addr;
	e->len = len;
	e->name = copy;
	e->live = 1;
	e->keep = NULL;
	*index = ++tab->n;      /* 1-based: 0 never names code */
	return 0;
}

/* Drop the last add (its output failed); its name stays in the arena. */
void jp_codetab_undo(struct jp_codetab *tab)
{
	if (tab && tab->n) {
		tab->n--;
		free(tab->blocks[tab->n / BLOCK][tab->n % BLOCK].keep);
	}
}

struct jp_code_entry *jp_codetab_get(struct jp_codetab *tab, uint64_t index)
{
	if (!tab || index == 0 || index > tab->n)
		return NULL;
	index--;
	return &tab->blocks[index / BLOCK][index % BLOCK];
}

uint64_t jp_codetab_count(const struct jp_codetab *tab)
{
	return tab ? tab->n : 0;
}

void jp_codetab_free(struct jp_codetab *tab)
{
	struct chunk *c, *prev;

	if (!tab)
		return;
	for (c = tab->names; c; c = prev) {
		prev = c->prev;
		free(c);
	}
	for (uint64_t i = 0; i < tab->n; i++)
		free(tab->blocks[i / BLOCK][i % BLOCK].keep);
	for (uint64_t i = 0; i < tab->nblocks; i++)
		free(tab->blocks[i]);
	free(tab->blocks);
	free(tab);
}
