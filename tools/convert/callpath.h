/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Call paths, numbered, and what a writer keeps for each.
 *
 * A trace's reader numbers every distinct stack of function ids it meets
 * (struct pathtree: a path is its caller's path and its last id, so a call
 * costs a lookup for each frame that changed since the call before, not
 * one for each frame it has).  A writer then keeps, per trace, thread and
 * path, the entry of its own table that the path's names gave it
 * (struct callpath): a call on a known path costs one lookup, not its
 * function names looked up or joined again, which is what most of the
 * time of converting a long trace went to.  Keys are compared whole, so
 * two paths are never merged.  The cache is only a cache: when memory
 * runs out a path is not kept, and is spelt again next time.
 */
#ifndef JITPERF_CALLPATH_H
#define JITPERF_CALLPATH_H

#include <stddef.h>
#include <stdint.h>

#include "convert.h"
#include "idmap.h"

/* The paths of one trace: (caller's path, function id) -> path, from 1. */
struct pathtree {
	struct idmap ids;
};

/* The path of fn called on path parent (0: a root); 0 when out of memory. */
uint32_t callpath_tree_child(struct pathtree *t, uint32_t parent, uint32_t fn);
void callpath_tree_free(struct pathtree *t);

struct callpath {
	struct idmap *by_input;         /* (thread and) path -> value + 1, per input */
	size_t        ninputs;
	int           by_thread;        /* the thread is part of the key */
};

/* An empty cache (zeroed memory is one, without by_thread). */
void callpath_init(struct callpath *cp, int by_thread);
/* The value kept for c's path, or -1. */
int64_t callpath_find(const struct callpath *cp, const struct cv_call *c);
/* Keep value for c's path, which callpath_find did not know. */
void callpath_keep(struct callpath *cp, const struct cv_call *c, uint32_t value);
void callpath_free(struct callpath *cp);

#endif
