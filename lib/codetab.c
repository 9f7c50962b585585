/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Code index -> address, length, name: what jitperf_code_move/_unload and
 * the fork child need.  The entries and the names each fill a reservation
 * of address space (never moved, no malloc per load) that the flusher
 * thread keeps touched ahead (lib/batchfile.c): a registration does not
 * pay the first touch of a new page.  Freed with the session.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* address space per table: entries for 128M loads, and their names */
#define RESERVE ((uint64_t)(sizeof(void *) == 8 ? (uint64_t)4 << 30 : (uint64_t)64 << 20))

struct jp_codetab {
	struct jp_ahead entries;    /* struct jp_code_entry[n] */
	struct jp_ahead names;      /* the names, each with its NUL */
	uint64_t        n;          /* indices 1..n are in use */
};

static int make(struct jp_codetab **tabp)
{
	struct jp_codetab *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	if (jp_ahead_init(&t->entries, RESERVE) || jp_ahead_init(&t->names, RESERVE)) {
		jp_codetab_free(t);
		return -ENOMEM;
	}
	*tabp = t;
	return 0;
}

int jp_codetab_add(struct jp_codetab **tabp, uint64_t addr, uint64_t len, const char *name,
		   size_t nlen, uint64_t *index)
{
	struct jp_codetab *tab = *tabp;
	struct jp_code_entry *e;
	uint64_t at, end;
	char *copy;
	int err;

	if (!tab && (err = make(tabp)))
		return err;
	tab = *tabp;
	at = tab->names.used;
	end = (tab->n + 1) * sizeof(*e);
	if (end > tab->entries.size || nlen + 1 > tab->names.size - at)
		return -ENOMEM;
	copy = (char *)tab->names.base + at;
	memcpy(copy, name, nlen);
	copy[nlen] = 0;
	e = (struct jp_code_entry *)(void *)tab->entries.base + tab->n;
	e->addr = addr;
	e->len = len;
	e->name = copy;
	e->live = 1;
	__atomic_store_n(&tab->names.used, at + nlen + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&tab->entries.used, end, __ATOMIC_RELEASE);
	*index = ++tab->n;      /* 1-based: 0 never names code */
	return 0;
}

/* Drop the last add (its output failed); its name stays. */
void jp_codetab_undo(struct jp_codetab *tab)
{
	if (tab && tab->n) {
		tab->n--;
		__atomic_store_n(&tab->entries.used, tab->n * sizeof(struct jp_code_entry),
				 __ATOMIC_RELEASE);
	}
}

struct jp_code_entry *jp_codetab_get(struct jp_codetab *tab, uint64_t index)
{
	if (!tab || index == 0 || index > tab->n)
		return NULL;
	return (struct jp_code_entry *)(void *)tab->entries.base + (index - 1);
}

uint64_t jp_codetab_count(const struct jp_codetab *tab)
{
	return tab ? tab->n : 0;
}

void jp_codetab_free(struct jp_codetab *tab)
{
	if (!tab)
		return;
	jp_ahead_free(&tab->entries);
	jp_ahead_free(&tab->names);
	free(tab);
}
