/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Code index -> address, length, name: what jitperf_code_move/_unload need. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

struct jp_codetab {
	uint64_t             n;     /* indices 1..n are in use */
	uint64_t             cap;
	struct jp_code_entry e[];
};

int jp_codetab_add(struct jp_codetab **tabp, uint64_t addr, uint64_t len, const char *name,
		   uint64_t *index)
{
	struct jp_codetab *tab = *tabp;
	struct jp_code_entry *e;
	char *copy;

	if (!tab || tab->n == tab->cap) {
		uint64_t cap = tab ? tab->cap * 2 : 64;
		struct jp_codetab *t = realloc(tab, sizeof(*t) + cap * sizeof(t->e[0]));

		if (!t)
			return -ENOMEM;
		if (!tab)
			t->n = 0;
		t->cap = cap;
		*tabp = tab = t;
	}
	copy = strdup(name);
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

void jp_codetab_undo(struct jp_codetab *tab)
{
	if (tab && tab->n)
		free(tab->e[--tab->n].name);
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
	uint64_t i;

	if (!tab)
		return;
	for (i = 0; i < tab->n; i++)
		free(tab->e[i].name);
	free(tab);
}
