/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_wrap's per-thread shadow stack of the callers' return addresses,
 * and the two C helpers the stubs' machine code (arch/) calls on entry and
 * exit (lib/instr/wrap.h).  Below wrap.c and its machine code: it calls
 * only the probes.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "instrument.h"
#include "wrap.h"

/* ---- per-thread shadow stack of return addresses */

struct shadow_ent {
	uintptr_t            ret;   /* the caller's return address */
	uintptr_t            sp;    /* stack pointer the target saw: identifies the frame */
	struct jp_wrap_slot *slot;
};

/* Chunks are linked and never move, so growing needs no lock and no copy. */
struct shadow_chunk {
	struct shadow_chunk *prev, *next;
	size_t               cap;
	struct shadow_ent    e[];
};

struct shadow {
	struct shadow_chunk *cur;
	size_t               top;       /* used entries of cur */
	uintptr_t            stack_lo;  /* this thread's own stack, for pruning */
	uintptr_t            stack_hi;
};

#define CHUNK_BYTES (64 * 1024)

static __thread struct shadow tls_shadow __attribute__((tls_model("initial-exec")));
static pthread_key_t shadow_key;
static pthread_once_t shadow_once = PTHREAD_ONCE_INIT;

static void JP_NOINSTR shadow_free(void *arg)
{
	struct shadow_chunk *c = arg, *next;

	while (c && c->prev)
		c = c->prev;
	for (; c; c = next) {
		next = c->next;
		munmap(c, CHUNK_BYTES);
	}
	tls_shadow.cur = NULL;
	tls_shadow.top = 0;
}

static void JP_NOINSTR shadow_key_init(void)
{
	pthread_key_create(&shadow_key, shadow_free);
}

/*
 * First use in a thread: note the bounds of its stack (longjmp pruning only
 * trusts stack pointers inside them) and arrange to free the chunks when
 * the thread ends.
 */
static void JP_NOINSTR shadow_first_use(struct shadow *s)
{
	pthread_attr_t attr;
	void *lo;
	size_t size;

	pthread_once(&shadow_once, shadow_key_init);
	pthread_setspecific(shadow_key, s->cur);
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
			s->stack_lo = (uintptr_t)lo;
			s->stack_hi = (uintptr_t)lo + size;
		}
		pthread_attr_destroy(&attr);
	}
}

/* Make room for one more entry; mmap is async-signal-safe, malloc is not. */
static int JP_NOINSTR shadow_grow(struct shadow *s)
{
	struct shadow_chunk *c = s->cur ? s->cur->next : NULL;

	if (!c) {
		c = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			return -1;
		c->prev = s->cur;
		c->next = NULL;
		c->cap = (CHUNK_BYTES - sizeof(*c)) / sizeof(c->e[0]);
		if (s->cur)
			s->cur->next = c;
	}
	if (!s->cur) {
		s->cur = c;
		shadow_first_use(s);
	}
	s->cur = c;
	s->top = 0;
	return 0;
}

static inline struct shadow_ent * JP_NOINSTR shadow_peek(struct shadow *s)
{
	if (s->top == 0) {
		if (!s->cur || !s->cur->prev)
			return NULL;
		return &s->cur->prev->e[s->cur->prev->cap - 1];
	}
	return &s->cur->e[s->top - 1];
}

static inline void JP_NOINSTR shadow_drop(struct shadow *s)
{
	if (s->top == 0) {      /* step back into the previous (full) chunk */
		s->cur = s->cur->prev;
		s->top = s->cur->cap;
	}
	s->top--;
}

/*
 * A frame the shadow stack still holds but that a longjmp skipped: drop it
 * and end its call now, so the probes' call stack stays in step with the
 * real one (the call ends when the skip is noticed).
 */
static void JP_NOINSTR shadow_repair(struct shadow *s)
{
	struct shadow_ent *e = shadow_peek(s);

	jp_probe_unwind(e->slot->fn);
	shadow_drop(s);
}

/* sp lies on this thread's own stack (not a signal stack or a coroutine's) */
static inline int JP_NOINSTR on_stack(const struct shadow *s, uintptr_t sp)
{
	return sp >= s->stack_lo && sp < s->stack_hi;
}

/* Where a thunk returns when the shadow stack has lost its caller. */
static void __attribute__((noreturn, used)) JP_NOINSTR jp_wrap_lost_return(void)
{
	/* Only reachable after switching stacks inside a wrapped function
	 * (documented as unsupported): there is no caller to return to. */
	__builtin_trap();
}

struct jp_wrap_go JP_NOINSTR jp_wrap_on_enter(struct jp_wrap_slot *slot, uintptr_t *ret_slot)
{
	struct shadow *s = &tls_shadow;
	uintptr_t sp = (uintptr_t)(ret_slot + 1);
	struct shadow_ent *e;
	int saved_errno = errno;

	/*
	 * Entries of frames at or below this stack pointer on this thread's
	 * own stack were skipped by a longjmp: no live frame can be there.
	 */
	if (on_stack(s, sp)) {
		while ((e = shadow_peek(s)) && e->sp <= sp && on_stack(s, e->sp))
			shadow_repair(s);
	}

	if ((!s->cur || s->top == s->cur->cap) && shadow_grow(s) != 0) {
		/* no memory for the shadow stack: this call runs unrecorded,
		 * returning straight to its caller */
		errno = saved_errno;
		return (struct jp_wrap_go){ slot->entry, 0 };
	}
	/* Written before and after publishing: a signal handler that runs a
	 * thunk between the two cannot leave its own entry in our slot. */
	e = &s->cur->e[s->top];
	e->ret = *ret_slot;
	e->sp = sp;
	e->slot = slot;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->top++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->ret = *ret_slot;
	e->sp = sp;
	e->slot = slot;

	jp_probe_enter(slot->fn);
	errno = saved_errno;
	return (struct jp_wrap_go){ slot->entry, 1 };
}

uintptr_t JP_NOINSTR jp_wrap_on_exit(uintptr_t sp)
{
	struct shadow *s = &tls_shadow;
	struct shadow_ent *e;
	uintptr_t ret;
	int saved_errno = errno;

	/* entries above ours belong to frames a longjmp skipped; only an
	 * entry on the same stack as ours can be compared with it (a signal
	 * handler may run on an alternate stack at any address) */
	while ((e = shadow_peek(s)) && e->sp < sp && on_stack(s, e->sp) == on_stack(s, sp))
		shadow_repair(s);
	e = shadow_peek(s);
	if (!e) {
		errno = saved_errno;
		return (uintptr_t)jp_wrap_lost_return;
	}
	jp_probe_exit(e->slot->fn);
	ret = e->ret;
	shadow_drop(s);
	errno = saved_errno;
	return ret;
}
