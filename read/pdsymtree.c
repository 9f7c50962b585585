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

struct pd_symtree {
	uint32_t *left, *right, *parent;
	uint8_t  *red;
	uint64_t *key;
	uint32_t  root, n;
};

static void set_child(struct pd_symtree *t, uint32_t parent, uint32_t old, uint32_t new)
{
	if (parent == NIL)
		t->root = new;
	else if (t->left[parent] == old)
		t->left[parent] = new;
	else
		t->right[parent] = new;
}

/* x's right child takes its place */
static void rotate_left(struct pd_symtree *t, uint32_t x)
{
	uint32_t y = t->right[x];

	t->right[x] = t->left[y];
	if (t->left[y] != NIL)
		t->parent[t->left[y]] = x;
	t->parent[y] = t->parent[x];
	set_child(t, t->parent[x], x, y);
	t->left[y] = x;
	t->parent[x] = y;
}

static void rotate_right(struct pd_symtree *t, uint32_t x)
{
	uint32_t y = t->left[x];

	t->left[x] = t->right[y];
	if (t->right[y] != NIL)
		t->parent[t->right[y]] = x;
	t->parent[y] = t->parent[x];
	set_child(t, t->parent[x], x, y);
	t->right[y] = x;
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
		x = key < t->key[x] ? t->left[x] : t->right[x];
	}
	t->parent[z] = y;
	t->left[z] = t->right[z] = NIL;
	t->red[z] = 1;
	if (y == NIL)
		t->root = z;
	else if (key < t->key[y])
		t->left[y] = z;
	else
		t->right[y] = z;
	while (is_red(t, t->parent[z])) {
		uint32_t p = t->parent[z], g = t->parent[p];

		if (p == t->left[g]) {
			uint32_t u = t->right[g];

			if (is_red(t, u)) {
				t->red[p] = t->red[u] = 0;
				t->red[g] = 1;
				z = g;
				continue;
			}
			if (z == t->right[p]) {
				z = p;
				rotate_left(t, z);
				p = t->parent[z];
			}
			t->red[p] = 0;
			t->red[g] = 1;
			rotate_right(t, g);
		} else {
			uint32_t u = t->left[g];

			if (is_red(t, u)) {
				t->red[p] = t->red[u] = 0;
				t->red[g] = 1;
				z = g;
				continue;
			}
			if (z == t->left[p]) {
				z = p;
				rotate_right(t, z);
				p = t->parent[z];
			}
			t->red[p] = 0;
			t->red[g] = 1;
			rotate_left(t, g);
		}
	}
	t->red[t->root] = 0;
}

/* After a black node left from under parent (x, maybe NIL, is its child). */
static void erase_fixup(struct pd_symtree *t, uint32_t x, uint32_t parent)
{
	while (x != t->root && !is_red(t, x)) {
		if (x == t->left[parent]) {
			uint32_t w = t->right[parent];

			if (is_red(t, w)) {
				t->red[w] = 0;
				t->red[parent] = 1;
				rotate_left(t, parent);
				w = t->right[parent];
			}
			if (!is_red(t, t->left[w]) && !is_red(t, t->right[w])) {
				t->red[w] = 1;
				x = parent;
				parent = t->parent[x];
				continue;
			}
			if (!is_red(t, t->right[w])) {
				t->red[t->left[w]] = 0;
				t->red[w] = 1;
				rotate_right(t, w);
				w = t->right[parent];
			}
			t->red[w] = t->red[parent];
			t->red[parent] = 0;
			t->red[t->right[w]] = 0;
			rotate_left(t, parent);
		} else {
			uint32_t w = t->left[parent];

			if (is_red(t, w)) {
				t->red[w] = 0;
				t->red[parent] = 1;
				rotate_right(t, parent);
				w = t->left[parent];
			}
			if (!is_red(t, t->left[w]) && !is_red(t, t->right[w])) {
				t->red[w] = 1;
				x = parent;
				parent = t->parent[x];
				continue;
			}
			if (!is_red(t, t->left[w])) {
				t->red[t->right[w]] = 0;
				t->red[w] = 1;
				rotate_left(t, w);
				w = t->left[parent];
			}
			t->red[w] = t->red[parent];
			t->red[parent] = 0;
			t->red[t->left[w]] = 0;
			rotate_right(t, parent);
		}
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

	if (t->left[z] == NIL || t->right[z] == NIL) {
		x = t->left[z] != NIL ? t->left[z] : t->right[z];
		parent = t->parent[z];
		black = !t->red[z];
		set_child(t, parent, z, x);
		if (x != NIL)
			t->parent[x] = parent;
	} else {
		uint32_t y = t->right[z];

		while (t->left[y] != NIL)
			y = t->left[y];
		x = t->right[y];
		black = !t->red[y];
		if (t->parent[y] == z) {
			parent = y;
		} else {
			parent = t->parent[y];
			t->left[parent] = x;
			if (x != NIL)
				t->parent[x] = parent;
			t->right[y] = t->right[z];
			t->parent[t->right[y]] = y;
		}
		t->left[y] = t->left[z];
		t->parent[t->left[y]] = y;
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
			x = t->left[x];
		else if (addr > end || (addr == end && addr != start))
			x = t->right[x];
		else
			return x;
	}
	return PD_SYMTREE_NONE;
}

struct pd_symtree *pd_symtree_new(uint32_t n)
{
	struct pd_symtree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->left = malloc(n * sizeof(*t->left));
	t->right = malloc(n * sizeof(*t->right));
	t->parent = malloc(n * sizeof(*t->parent));
	t->red = malloc(n);
	t->key = malloc(n * sizeof(*t->key));
	if (!t->left || !t->right || !t->parent || !t->red || !t->key) {
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
	free(t->left);
	free(t->right);
	free(t->parent);
	free(t->red);
	free(t->key);
	free(t);
}
