/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A table of folded stacks ("a;b;c" -> count), interned in a hash table:
 * what folded and SVG output aggregate samples or calls into.
 */
#ifndef JITPERF_STACKS_H
#define JITPERF_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct stack_ent {
	uint64_t    hash;
	uint64_t    count;
	size_t      len;
	const char *key;
};

struct stacks;

struct stacks *stacks_new(void);             /* NULL, errno = ENOMEM */
void stacks_free(struct stacks *t);
int stacks_add(struct stacks *t, const char *key, size_t len, uint64_t count);  /* 0 / -ENOMEM */
/* The same, telling the entry's number (for stacks_add_to) in *idx. */
int stacks_add_idx(struct stacks *t, const char *key, size_t len, uint64_t count, size_t *idx);
/* Add count to entry number idx. */
void stacks_add_to(struct stacks *t, size_t idx, uint64_t count);
/* Entries sorted bytewise by key (Perl's `sort { $a cmp $b }`); NULL on ENOMEM. */
const struct stack_ent *const *stacks_sorted(struct stacks *t, size_t *n);
uint64_t stacks_total(const struct stacks *t);
/* Every entry, in the order they were added. */
const struct stack_ent *stacks_entries(const struct stacks *t, size_t *n);

#endif /* JITPERF_STACKS_H */
