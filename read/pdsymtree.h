/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf's red-black tree of a DSO's symbols, replayed: nodes are numbered
 * by the caller (the order the symbols came in), keyed by start; a lookup
 * walks down from the root as perf 6.1's symbols__find does.
 */
#ifndef JITPERF_PDSYMTREE_H
#define JITPERF_PDSYMTREE_H

#include <stdint.h>

#define PD_SYMTREE_NONE UINT32_MAX

struct pd_symtree;

/* A tree for nodes 0..n-1, none inserted yet; NULL without memory. */
struct pd_symtree *pd_symtree_new(uint32_t n);
void pd_symtree_free(struct pd_symtree *t);
/* Insert node (not in the tree) at key; an equal key goes right of it. */
void pd_symtree_insert(struct pd_symtree *t, uint32_t node, uint64_t key);
void pd_symtree_erase(struct pd_symtree *t, uint32_t node);
/* The first node down from the root whose range holds addr (range gives a
 * node's [start, end)), or PD_SYMTREE_NONE. */
uint32_t pd_symtree_find(const struct pd_symtree *t, uint64_t addr,
			 void (*range)(const void *ctx, uint32_t node, uint64_t *start, uint64_t *end),
			 const void *ctx);
/*
 * What pd_symtree_find finds, for every address at once: span(sctx, node,
 * first, last) for each node some lookup ends at, in address order, with
 * [first, last] the addresses whose lookup ends there (one range per node:
 * the addresses that reach a node are a range, and of those it holds a
 * range).  Addresses no lookup finds anything for are in no span.  Time
 * linear in the nodes; recursion as deep as the tree.
 */
void pd_symtree_spans(const struct pd_symtree *t,
		      void (*range)(const void *ctx, uint32_t node, uint64_t *start, uint64_t *end),
		      const void *ctx,
		      void (*span)(void *sctx, uint32_t node, uint64_t first, uint64_t last),
		      void *sctx);

#endif
