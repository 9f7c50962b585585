/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Call paths, numbered, and what a writer keeps for each (callpath.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "callpath.h"

uint32_t callpath_tree_child(struct pathtree *t, uint32_t parent, uint32_t fn)
{
	uint64_t key = (uint64_t)parent << 32 | fn;
	uint32_t path = idmap_get(&t->ids, key);

	if (path || t->ids.n >= UINT32_MAX - 1)
		return path;
	path = (uint32_t)t->ids.n + 1;
	return idmap_put(&t->ids, key, path) ? 0 : path;
}

void callpath_tree_free(struct pathtree *t)
{
	idmap_free(&t->ids);
}

void callpath_init(struct callpath *cp, int by_thread)
{
	memset(cp, 0, sizeof(*cp));
	cp->by_thread = by_thread;
}

/* a trace is one process: its thread is enough */
static uint64_t key_of(const struct callpath *cp, const struct cv_call *c)
{
	return (uint64_t)(cp->by_thread ? c->tid : 0) << 32 | c->path;
}

int64_t callpath_find(const struct callpath *cp, const struct cv_call *c)
{
	uint32_t v;

	if (!c->path || c->input >= cp->ninputs)
		return -1;
	v = idmap_get(&cp->by_input[c->input], key_of(cp, c));
	return v ? (int64_t)v - 1 : -1;
}

void callpath_keep(struct callpath *cp, const struct cv_call *c, uint32_t value)
{
	if (!c->path || value == UINT32_MAX)
		return;
	if (c->input >= cp->ninputs) {
		size_t n = (size_t)c->input + 1;
		struct idmap *m = realloc(cp->by_input, n * sizeof(*m));

		if (!m)
			return;
		memset(m + cp->ninputs, 0, (n - cp->ninputs) * sizeof(*m));
		cp->by_input = m;
		cp->ninputs = n;
	}
	idmap_put(&cp->by_input[c->input], key_of(cp, c), value + 1);
}

void callpath_free(struct callpath *cp)
{
	for (size_t i = 0; i < cp->ninputs; i++)
		idmap_free(&cp->by_input[i]);
	free(cp->by_input);
	memset(cp, 0, sizeof(*cp));
}
