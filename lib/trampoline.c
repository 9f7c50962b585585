/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_trampoline: a small entry per interpreted function, so that
 * perf's stacks show which function an interpreter runs (as CPython's perf
 * trampolines do).  x86-64 only.
 *
 * A trampoline keeps a frame of its own and calls the target, which gets
 * the caller's register arguments untouched:
 *
 *	 0  55                  push %rbp
 *	 1  48 89 e5            mov  %rsp,%rbp
 *	 4  49 bb <slot>        movabs $slot,%r11
 *	14  41 ff 13            call *(%r11)
 *	17  5d                  pop  %rbp
 *	18  c3                  ret
 *
 * perf's frame-pointer unwinding walks through its frame, and its .eh_frame
 * (registered with the code) lets --call-graph dwarf do the same.  W^X as
 * jitperf_wrap's stubs (lib/instr/wrap.c): a page is filled with
 * trampolines while it is private and writable, each pointing at its slot
 * in ordinary memory, then made read+execute once and never written
 * again.  Pages are never freed: the JIT may call an entry until exit.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"

#define TRAMP_LEN   19u         /* bytes of code */
#define TRAMP_SLOT  32u         /* bytes a trampoline takes in its page */

#if defined(__x86_64__) && !defined(__ILP32__)

struct page {
	struct page   *prev;
	unsigned char *code;
	size_t         used, cap;
	const void    *target[];  /* slot i: what trampoline i calls */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct page *pool;

static void fill(unsigned char *p, const void **slot)
{
	static const unsigned char head[4] = { 0x55, 0x48, 0x89, 0xe5 };
	static const unsigned char tail[5] = { 0x41, 0xff, 0x13, 0x5d, 0xc3 };
	uint64_t a = (uintptr_t)slot;

	memset(p, 0xcc, TRAMP_SLOT);            /* int3 between trampolines */
	memcpy(p, head, sizeof(head));
	p[4] = 0x49;
	p[5] = 0xbb;
	memcpy(p + 6, &a, sizeof(a));
	memcpy(p + 14, tail, sizeof(tail));
}

static int new_page(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t size = psz > 0 ? (size_t)psz : 4096, cap = size / TRAMP_SLOT;
	struct page *p = calloc(1, sizeof(*p) + cap * sizeof(p->target[0]));
	int err;

	if (!p)
		return -ENOMEM;
	p->code = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->code == MAP_FAILED) {
		free(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		fill(p->code + i * TRAMP_SLOT, &p->target[i]);
	if (mprotect(p->code, size, PROT_READ | PROT_EXEC)) {
		err = -errno;
		munmap(p->code, size);
		free(p);
		return err;
	}
	p->cap = cap;
	p->prev = pool;
	pool = p;
	return 0;
}

/* A trampoline calling target; NULL with *err. */
static void *take(const void *target, int *err)
{
	void *t = NULL;

	pthread_mutex_lock(&pool_lock);
	*err = pool && pool->used < pool->cap ? 0 : new_page();
	if (!*err) {
		pool->target[pool->used] = target;
		t = pool->code + pool->used * TRAMP_SLOT;
		pool->used++;
	}
	/* the unlock publishes the slot before the caller can run the trampoline */
	pthread_mutex_unlock(&pool_lock);
	return t;
}

/*
 * The .eh_frame of a trampoline, by the convention of jitperf.h (as if
 * loaded at addr + 24): a CIE (CFA = %rsp + 8, return address at CFA - 8)
 * and an FDE: after the push CFA = %rsp + 16 and %rbp at CFA - 16, after
 * the mov CFA = %rbp + 16, after the pop CFA = %rsp + 8 again.
 */
static const unsigned char eh_frame[56] = {
	/* CIE: length 20, id 0, version 1, "zR", code align 1, data align -8,
	 * return address r16, augmentation: FDE pointers pcrel|sdata4 */
	20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
	0x0c, 7, 8,             /* DW_CFA_def_cfa %rsp, 8 */
	0x90, 1,                /* DW_CFA_offset r16, CFA - 8 */
	0, 0,
	/* FDE: length 28, CIE pointer 28, pc_begin -56 (addr), range 19, no augmentation */
	28, 0, 0, 0, 28, 0, 0, 0, 0xc8, 0xff, 0xff, 0xff, TRAMP_LEN, 0, 0, 0, 0,
	0x41,                   /* advance 1: after push %rbp */
	0x0e, 16,               /* DW_CFA_def_cfa_offset 16 */
	0x86, 2,                /* DW_CFA_offset %rbp, CFA - 16 */
	0x43,                   /* advance 3: after mov %rsp,%rbp */
	0x0d, 6,                /* DW_CFA_def_cfa_register %rbp */
	0x4e,                   /* advance 14: after pop %rbp */
	0x0c, 7, 8,             /* DW_CFA_def_cfa %rsp, 8 */
	0, 0, 0,
};
_Static_assert(((TRAMP_LEN + 7) & ~7u) + 32 == 56, "pc_begin of the FDE");

int jitperf_trampoline(jitperf *jp, const char *func, unsigned tier, const void *target,
		       void **entry)
{
	struct jitperf_code c = { .size = sizeof(c), .len = TRAMP_LEN, .eh_frame = eh_frame,
				  .eh_frame_len = sizeof(eh_frame) };
	char space[256], *name = NULL;
	void *t;
	int err;

	if (entry)
		*entry = NULL;
	if (!func || !target || !entry || tier >= JITPERF_TIERS)
		return -EINVAL;
	if (!jp)
		jp = jitperf_default();
	if (!jitperf_outputs(jp)) {
		*entry = (void *)(uintptr_t)target;     /* nothing records: no detour */
		return 0;
	}
	if (!(t = take(target, &err)))
		return err;
	err = jp_tiers_name(jp, func, tier, space, sizeof(space), &name);
	if (!err) {
		c.name = name;
		c.addr = t;
		err = jitperf_code_load_ex(jp, &c, NULL);
	}
	if (name != space)
		free(name);
	if (err == -EBADF) {            /* closed meanwhile: nothing records */
		*entry = (void *)(uintptr_t)target;
		return 0;
	}
	if (!err)
		*entry = t;     /* on failure the trampoline stays unused in its page */
	return err;
}

#else

int jitperf_trampoline(jitperf *jp, const char *func, unsigned tier, const void *target,
		       void **entry)
{
	(void)jp;
	if (entry)
		*entry = NULL;
	if (!func || !target || !entry || tier >= JITPERF_TIERS)
		return -EINVAL;
	return -ENOTSUP;
}

#endif
