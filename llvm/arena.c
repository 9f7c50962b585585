/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What reading one loaded object allocates (symbols, line rows, file
 * names, FDE index, each function's lines and .eh_frame), taken from one
 * arena and given back at once.  The listener runs right after LLVM
 * compiled the object, when the allocator's code and state are as cold
 * as ours: a dozen malloc/realloc/free pairs per object cost more than
 * the reading they serve.  The first block is the caller's (its stack),
 * more come from malloc only for objects that outgrow it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "llvm/llvm.h"

#define ALIGN      16
#define BLOCK_MIN  ((size_t)64 << 10)

/* Under AddressSanitizer every allocation is a block of its own, so that
 * a read past one is reported, not silently served by the next. */
#if defined(__SANITIZE_ADDRESS__)
# define EXACT 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define EXACT 1
# endif
#endif
#ifndef EXACT
# define EXACT 0
#endif

struct block {
	struct block *next;
	size_t        len;
	/* the room follows, aligned */
};

#define BLOCK_HEAD ((sizeof(struct block) + ALIGN - 1) & ~(size_t)(ALIGN - 1))

static size_t align_up(size_t n)
{
	return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

void jpl_arena_init(struct jpl_arena *a, void *space, size_t len)
{
	uintptr_t p = ((uintptr_t)space + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
	uintptr_t end = (uintptr_t)space + len;

	if (EXACT || p > end)
		end = p;
	a->p = (unsigned char *)p;
	a->end = (unsigned char *)end;
	a->last = NULL;
	a->blocks = NULL;
}

/* A new block for at least n bytes; -1 when malloc fails. */
static int more(struct jpl_arena *a, size_t n)
{
	size_t len = a->blocks ? 2 * a->blocks->len : BLOCK_MIN;
	struct block *b;

	if (len < n || EXACT)
		len = n;
	if (len > SIZE_MAX - BLOCK_HEAD || !(b = malloc(BLOCK_HEAD + len)))
		return -1;
	b->next = a->blocks;
	b->len = len;
	a->blocks = b;
	a->p = (unsigned char *)b + BLOCK_HEAD;
	a->end = a->p + len;
	return 0;
}

void *jpl_alloc(struct jpl_arena *a, size_t n)
{
	void *p;

	if (n > SIZE_MAX - ALIGN)
		return NULL;
	n = EXACT ? (n ? n : 1) : align_up(n ? n : 1);
	if ((size_t)(a->end - a->p) < n && more(a, n))
		return NULL;
	p = a->p;
	a->p = EXACT ? a->end : a->p + n;
	a->last = p;
	return p;
}

void *jpl_realloc(struct jpl_arena *a, void *old, size_t old_n, size_t n)
{
	unsigned char *p;

	if (!EXACT && old && old == a->last && n <= SIZE_MAX - ALIGN &&
	    align_up(n) <= (size_t)(a->end - (unsigned char *)old)) {
		/* the newest allocation grows where it is */
		a->p = (unsigned char *)old + align_up(n);
		return old;
	}
	if (!(p = jpl_alloc(a, n)))
		return NULL;
	if (old)
		memcpy(p, old, old_n < n ? old_n : n);
	return p;
}

void jpl_arena_free(struct jpl_arena *a)
{
	struct block *b = a->blocks, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	a->blocks = NULL;
	a->p = a->end = a->last = NULL;
}
