/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Code index -> address, length, name: what jitperf_code_move/_unload and
 * the fork child need.  Names live in a string arena (no malloc per load);
 * they are freed with the session.
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

struct jp_codetab {
	struct chunk        *names;
	uint64_t             n;     /* indices 1..n are in use */
	uint64_t             cap;
	struct jp_code_entry e[];
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

int jp_codetab_add(struct jp_codetab **tabp, uint64_t addr, uint64_t len, const char *name,
		   size_t nlen, uint64_t *index)
{
	struct jp_codetab *tab = *tabp;
	struct jp_code_entry *e;
	char *copy;

	if (!tab || tab->n == tab->cap) {
		uint64_t cap = tab ? tab->cap * 2 : 64;
		struct jp_codetab *t = realloc(tab, sizeof(*t) + cap * sizeof(t->e[0]));

		if (!t)
			return -ENOMEM;
		if (!tab) {
			t->n = 0;
			t->names = NULL;
		}
		t->cap = cap;
		*tabp = tab = t;
	}
	copy = arena_copy(&tab->names, name, nlen);
	if (!copy)
		return -ENOMEM;
	e = &tab->e[tab->n++];
	e->addr = addr;
	e->len = len;
	e->name = copy;
	e->live = 1;
	*index = tab->n;        /* 1-based: 0 never names code */
	return 0;
}

/* Drop the last add (its output failed); its name stays in the arena. */
void jp_codetab_undo(struct jp_codetab *tab)
{
	if (tab && tab->n)
		tab->n--;
}

struct jp_code_entry *jp_codetab_get(struct jp_codetab *tab, uint64_t index)
{
	if (!tab || index == 0 || index > tab->n)
		return NULL;
	return &tab->e[index - 1];
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
	free(tab);
}
