/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * prog.c - a jitcalc program: its functions, the arena their IR lives in,
 * and the executable mapping of their code.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jit.h"

/* IR nodes and names live until the program is freed: one arena, freed at once. */
struct jc_arena { struct jc_arena *next; size_t used, cap; max_align_t data[]; };

void *jc_alloc(struct jc_prog *p, size_t size)
{
	struct jc_arena *a = p->arena;

	size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!a || a->cap - a->used < size) {
		size_t cap = size > 65536 ? size : 65536;

		a = malloc(sizeof(*a) + cap);
		if (!a)
			return NULL;
		a->used = 0;
		a->cap = cap;
		a->next = p->arena;
		p->arena = a;
	}
	a->used += size;
	return memset((char *)a->data + a->used - size, 0, size);
}

struct jc_prog *jc_prog_new(void)
{
	return calloc(1, sizeof(struct jc_prog));
}

void jc_prog_free(struct jc_prog *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nfn; i++) {
		free(p->fn[i]->lines);
		free(p->fn[i]->calls);
		free(p->fn[i]->probe_fix);
	}
	if (p->code)
		munmap(p->code, p->map_size);
	while (p->arena) {
		struct jc_arena *next = p->arena->next;

		free(p->arena);
		p->arena = next;
	}
	free(p->fn);
	free(p->path);
	free(p);
}

struct jc_func *jc_find(const struct jc_prog *p, const char *name)
{
	for (int i = 0; i < p->nfn; i++)
		if (!strcmp(p->fn[i]->name, name))
			return p->fn[i];
	return NULL;
}
