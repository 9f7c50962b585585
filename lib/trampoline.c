/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_trampoline: a small entry per interpreted function, so that
 * perf's stacks show which function an interpreter runs (as CPython's perf
 * trampolines do).  x86-64 and AArch64.
 *
 * A trampoline keeps a frame of its own and calls the target, which gets
 * the caller's register arguments untouched.  On x86-64:
 *
 *	 0  55                  push %rbp
 *	 1  48 89 e5            mov  %rsp,%rbp
 *	 4  49 bb <slot>        movabs $slot,%r11
 *	14  41 ff 13            call *(%r11)
 *	17  5d                  pop  %rbp
 *	18  c3                  ret
 *
 * On AArch64 (the slot's address is a literal after the code; x16 is free
 * at any call):
 *
 *	 0  stp  x29, x30, [sp, #-16]!
 *	 4  mov  x29, sp
 *	 8  ldr  x16, <slot>    the literal at 32
 *	12  ldr  x16, [x16]
 *	16  blr  x16
 *	20  ldp  x29, x30, [sp], #16
 *	24  ret
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

#if defined(__x86_64__) && !defined(__ILP32__)

#define TRAMP_LEN   19u         /* bytes of code */
#define TRAMP_SLOT  32u         /* bytes a trampoline takes in its page */

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

#elif defined(__aarch64__) && !defined(__ILP32__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__

#define TRAMP_LEN   28u
#define TRAMP_SLOT  40u         /* the code, a brk, the slot's address */

static void fill(unsigned char *p, const void **slot)
{
	static const uint32_t code[8] = {
		0xa9bf7bfd,     /* stp x29, x30, [sp, #-16]! */
		0x910003fd,     /* mov x29, sp */
		0x580000d0,     /* ldr x16, .+24 (the literal at 32) */
		0xf9400210,     /* ldr x16, [x16] */
		0xd63f0200,     /* blr x16 */
		0xa8c17bfd,     /* ldp x29, x30, [sp], #16 */
		0xd65f03c0,     /* ret */
		0xd4200000,     /* brk #0 */
	};
	uint64_t a = (uintptr_t)slot;

	memcpy(p, code, sizeof(code));
	memcpy(p + 32, &a, sizeof(a));
}

/*
 * The .eh_frame of a trampoline (as if loaded at addr + 32): a CIE
 * (CFA = sp, return address in x30) and an FDE: after the stp CFA = sp + 16
 * with x29 and x30 at CFA - 16 and CFA - 8, after the mov CFA = x29 + 16,
 * after the ldp CFA = sp again with both registers restored.
 */
static const unsigned char eh_frame[56] = {
	/* CIE: length 16, id 0, version 1, "zR", code align 4, data align -8,
	 * return address x30, augmentation: FDE pointers pcrel|sdata4 */
	16, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 4, 0x78, 30, 1, 0x1b,
	0x0c, 31, 0,            /* DW_CFA_def_cfa sp, 0 */
	/* FDE: length 32, CIE pointer 24, pc_begin -60 (addr), range 28, no augmentation */
	32, 0, 0, 0, 24, 0, 0, 0, 0xc4, 0xff, 0xff, 0xff, TRAMP_LEN, 0, 0, 0, 0,
	0x41,                   /* advance 4: after stp */
	0x0e, 16,               /* DW_CFA_def_cfa_offset 16 */
	0x9d, 2,                /* DW_CFA_offset x29, CFA - 16 */
	0x9e, 1,                /* DW_CFA_offset x30, CFA - 8 */
	0x41,                   /* advance 4: after mov x29, sp */
	0x0d, 29,               /* DW_CFA_def_cfa_register x29 */
	0x44,                   /* advance 16: after ldp */
	0x0c, 31, 0,            /* DW_CFA_def_cfa sp, 0 */
	0xdd, 0xde,             /* DW_CFA_restore x29, x30 */
	0, 0, 0,
};
_Static_assert(((TRAMP_LEN + 7) & ~7u) + 28 == 60, "pc_begin of the FDE");

#endif

#ifdef TRAMP_LEN

struct page {
	struct page   *prev;
	unsigned char *code;
	size_t         used, cap;
	const void    *target[];  /* slot i: what trampoline i calls */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct page *pool;

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
	/* instruction fetch sees the new code (a no-op on x86-64) */
	__builtin___clear_cache((char *)p->code, (char *)p->code + size);
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
	return -EOPNOTSUPP;
}

#endif
