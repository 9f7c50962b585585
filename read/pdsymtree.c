/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf's symbol tree, for tables whose symbols overlap (read/pdsymtree.h).
 *
 * perf 6.1 keeps a DSO's symbols in a red-black tree keyed by start (an
 * equal start goes right) and finds an address by walking down from the
 * root, stopping at the first symbol that holds it.  Where symbols do not
 * overlap that is the one symbol holding the address; where they do (a
 * perf map whose runtime reused an address, a symbol without a size
 * stretched over the PLT entries added after it) the tree's shape decides.
 * The shape follows from the order of insertions and removals alone, so
 * replaying them with the same algorithm (the kernel's lib/rbtree.c, as
 * every red-black tree of the textbook does it) names what perf names.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "pdsymtree.h"

#define NIL UINT32_MAX
#define L 0
#define R 1

/* Each case of the rebalancing is written once, for a side d and its
 * mirror !d: child[L] and child[R] are the left and right children. */
struct pd_symtree {
	uint32_t *child[2], *parent;
	uint8_t  *red;
	uint64_t *key;
	uint32_t  root, n;
};

static int side_of(const struct pd_symtree *t, uint32_t x, uint32_t parent)
{
	return t->child[R][parent] == x;
}

static void set_child(struct pd_symtree *t, uint32_t parent, uint32_t old, uint32_t new)
{
	if (parent == NIL)
		t->root = new;
	else
		t->child[side_of(t, old, parent)][parent] = new;
}

/* x's child on side !d takes its place; x becomes that child's child on side d */
static void rotate(struct pd_symtree *t, uint32_t x, int d)
{
	uint32_t y = t->child[!d][x], inner = t->child[d][y];

	t->child[!d][x] = inner;
	if (inner != NIL)
		t->parent[inner] = x;
	t->parent[y] = t->parent[x];
	set_child(t, t->parent[x], x, y);
	t->child[d][y] = x;
	t->parent[x] = y;
}

static int is_red(const struct pd_symtree *t, uint32_t x)
{
	return x != NIL && t->red[x];
}

void pd_symtree_insert(struct pd_symtree *t, uint32_t z, uint64_t key)
{
	uint32_t y = NIL, x = t->root;

	t->key[z] = key;
	while (x != NIL) {
		y = x;
		x = t->child[key >= t->key[x]][x];
	}
	t->parent[z] = y;
	t->child[L][z] = t->child[R][z] = NIL;
	t->red[z] = 1;
	if (y == NIL)
		t->root = z;
	else
		t->child[key >= t->key[y]][y] = z;
	while (is_red(t, t->parent[z])) {
		uint32_t p = t->parent[z], g = t->parent[p];
		int d = side_of(t, p, g);       /* p is g's child on side d */
		uint32_t u = t->child[!d][g];

		if (is_red(t, u)) {
			t->red[p] = t->red[u] = 0;
			t->red[g] = 1;
			z = g;
			continue;
		}
		if (z == t->child[!d][p]) {
			z = p;
			rotate(t, z, d);
			p = t->parent[z];
		}
		t->red[p] = 0;
		t->red[g] = 1;
		rotate(t, g, !d);
	}
	t->red[t->root] = 0;
}

/* After a black node left from under parent (x, maybe NIL, is its child there). */
static void erase_fixup(struct pd_symtree *t, uint32_t x, uint32_t parent)
{
	while (x != t->root && !is_red(t, x)) {
		int d = t->child[L][parent] == x ? L : R;       /* x's side */
		uint32_t w = t->child[!d][parent];

		if (is_red(t, w)) {
			t->red[w] = 0;
			t->red[parent] = 1;
			rotate(t, parent, d);
			w = t->child[!d][parent];
		}
		if (!is_red(t, t->child[L][w]) && !is_red(t, t->child[R][w])) {
			t->red[w] = 1;
			x = parent;
			parent = t->parent[x];
			continue;
		}
		if (!is_red(t, t->child[!d][w])) {
			t->red[t->child[d][w]] = 0;
			t->red[w] = 1;
			rotate(t, w, !d);
			w = t->child[!d][parent];
		}
		t->red[w] = t->red[parent];
		t->red[parent] = 0;
		t->red[t->child[!d][w]] = 0;
		rotate(t, parent, d);
		x = t->root;
	}
	if (x != NIL)
		t->red[x] = 0;
}

/*
 * As the kernel erases: a node with two children is replaced by its
 * successor, which takes its place and colour.
 */
void pd_symtree_erase(struct pd_symtree *t, uint32_t z)
{
	uint32_t x, parent;
	int black;

	if (t->child[L][z] == NIL || t->child[R][z] == NIL) {
		x = t->child[L][z] != NIL ? t->child[L][z] : t->child[R][z];
		parent = t->parent[z];
		black = !t->red[z];
		set_child(t, parent, z, x);
		if (x != NIL)
			t->parent[x] = parent;
	} else {
		uint32_t y = t->child[R][z];

		while (t->child[L][y] != NIL)
			y = t->child[L][y];
		x = t->child[R][y];
		black = !t->red[y];
		if (t->parent[y] == z) {
			parent = y;
		} else {
			parent = t->parent[y];
			t->child[L][parent] = x;
			if (x != NIL)
				t->parent[x] = parent;
			t->child[R][y] = t->child[R][z];
			t->parent[t->child[R][y]] = y;
		}
		t->child[L][y] = t->child[L][z];
		t->parent[t->child[L][y]] = y;
		t->parent[y] = t->parent[z];
		set_child(t, t->parent[z], z, y);
		t->red[y] = t->red[z];
	}
	if (black)
		erase_fixup(t, x, parent);
}

uint32_t pd_symtree_find(const struct pd_symtree *t, uint64_t addr,
			 void (*range)(const void *ctx, uint32_t node, uint64_t *start, uint64_t *end),
			 const void *ctx)
{
	uint32_t x = t->root;

	while (x != NIL) {
		uint64_t start, end;

		range(ctx, x, &start, &end);
		if (addr < start)
			x = t->child[L][x];
		else if (addr > end || (addr == end && addr != start))
			x = t->child[R][x];
		else
			return x;
	}
	return PD_SYMTREE_NONE;
}

struct spans {
	const struct pd_symtree *t;
	void (*range)(const void *ctx, uint32_t node, uint64_t *start, uint64_t *end);
	const void *ctx;
	void (*span)(void *sctx, uint32_t node, uint64_t first, uint64_t last);
	void *sctx;
};

/*
 * The addresses [lo, hi] reach x.  pd_symtree_find's three ways out of a
 * node split them: below start to the left; the node's own (start up to
 * end, or start alone for a node without a size; none when end wrapped
 * below start); the rest to the right.
 */
static void spans_from(const struct spans *w, uint32_t x, uint64_t lo, uint64_t hi)
{
	const struct pd_symtree *t = w->t;

	while (x != NIL) {
		uint64_t start, end, last;

		w->range(w->ctx, x, &start, &end);
		if (lo < start) {
			spans_from(w, t->child[L][x], lo, hi < start ? hi : start - 1);
			if (hi < start)
				return;
			lo = start;
		}
		if (end >= start) {
			last = end > start ? end - 1 : start;
			if (lo <= last) {
				w->span(w->sctx, x, lo, hi < last ? hi : last);
				if (hi <= last)
					return;
				lo = last + 1;
			}
		}
		x = t->child[R][x];
	}
}

void pd_symtree_spans(const struct pd_symtree *t,
		      void (*range)(const void *ctx, uint32_t node, uint64_t *start, uint64_t *end),
		      const void *ctx,
		      void (*span)(void *sctx, uint32_t node, uint64_t first, uint64_t last),
		      void *sctx)
{
	struct spans w = { t, range, ctx, span, sctx };

	spans_from(&w, t->root, 0, UINT64_MAX);
}

struct pd_symtree *pd_symtree_new(uint32_t n)
{
	struct pd_symtree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->child[L] = malloc(n * sizeof(*t->child[L]));
	t->child[R] = malloc(n * sizeof(*t->child[R]));
	t->parent = malloc(n * sizeof(*t->parent));
	t->red = malloc(n);
	t->key = malloc(n * sizeof(*t->key));
	if (!t->child[L] || !t->child[R] || !t->parent || !t->red || !t->key) {
		pd_symtree_free(t);
		return NULL;
	}
	t->root = NIL;
	t->n = n;
	return t;
}

void pd_symtree_free(struct pd_symtree *t)
{
	if (!t)
		return;
	free(t->child[L]);
	free(t->child[R]);
	free(t->parent);
	free(t->red);
	free(t->key);
	free(t);
}
