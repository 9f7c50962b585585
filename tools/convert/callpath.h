/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Call paths met before: a call's trace, function ids (and thread, where
 * the writer's stacks name it) -> a number the writer chose, its entry for
 * that stack.  A call on a known path then costs a hash over its ids and
 * one compare, not its function names looked up or joined again: what
 * most of the time of converting a long trace went to.  The paths' words
 * are kept, so a hash collision never merges two paths.  Only a cache:
 * when memory runs out a path is not kept, and is spelt again next time.
 */
#ifndef JITPERF_CALLPATH_H
#define JITPERF_CALLPATH_H

#include <stddef.h>
#include <stdint.h>

#include "convert.h"

struct callpath_ent;
struct callpath {
	struct callpath_ent *v;
	size_t               mask, n;
	uint32_t            *pool;         /* each path's words, for the compare */
	size_t               pool_len, pool_cap;
	int                  by_thread;    /* pid and tid are part of the path */
};

/* An empty cache (zeroed memory is one, without by_thread). */
void callpath_init(struct callpath *cp, int by_thread);
uint64_t callpath_hash(const struct callpath *cp, const struct cv_call *c);
/* The number kept for c's path (hash h), or -1. */
int64_t callpath_find(const struct callpath *cp, const struct cv_call *c, uint64_t h);
/* Keep value for c's path, which callpath_find did not know. */
void callpath_keep(struct callpath *cp, const struct cv_call *c, uint64_t h, uint32_t value);
void callpath_free(struct callpath *cp);

#endif
