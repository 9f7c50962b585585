/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_wrap: entry/exit recording for code a JIT cannot instrument.
 *
 * Architecture-independent part: the pool of executable stub pages and
 * the public call (lib/instr/wrap.h explains the shape).  The stubs'
 * machine code (arch/) calls into shadow.c, never back into this file.
 *
 * W^X: a pool page is filled with stubs while it is writable and private,
 * then made read+execute once and never written again; a stub only refers
 * to its slot, which lives in ordinary memory and is filled when the stub
 * is handed out.  So no page is ever writable and executable, and no page
 * that another thread may be running is ever made writable.
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


/* ---- stub pool (thunks live until the process ends: JIT code may keep them) */

/* One executable page of stubs and the slots they refer to.  Pages are
 * kept in a list, never freed: JIT code may call a stub until exit. */
struct pool_page {
	struct pool_page   *prev;
	uint8_t            *code;
	size_t              used, cap;
	struct jp_wrap_slot slots[];
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool_page *pool;          /* newest page */

static int pool_new_page(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t pagesize = psz > 0 ? (size_t)psz : 4096;
	size_t max = pagesize / jp_wrap_arch_stub_size();
	struct pool_page *p = calloc(1, sizeof(*p) + max * sizeof(p->slots[0]));
	int err;

	if (!p)
		return -ENOMEM;
	p->code = mmap(NULL, pagesize, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->code == MAP_FAILED) {
		free(p);
		return -ENOMEM;
	}
	p->cap = jp_wrap_arch_fill(p->code, pagesize, p->slots, max);
	if (p->cap == 0) {
		err = -EOPNOTSUPP;
		goto fail;
	}
	/* instruction fetch sees the new code (AArch64's caches are not
	 * coherent for it; a no-op on x86-64) */
	__builtin___clear_cache((char *)p->code, (char *)p->code + pagesize);
	if (mprotect(p->code, pagesize, PROT_READ | PROT_EXEC) != 0) {
		err = -errno;
		goto fail;
	}
	p->prev = pool;
	pool = p;
	return 0;
fail:
	munmap(p->code, pagesize);
	free(p);
	return err;
}

/* Hand out a stub for (fn, entry); returns its address or NULL with *err. */
static void *pool_take(jitperf_fn fn, const void *entry, int *err)
{
	void *stub = NULL;

	pthread_mutex_lock(&pool_lock);
	*err = pool && pool->used < pool->cap ? 0 : pool_new_page();
	if (*err == 0) {
		struct jp_wrap_slot *slot = &pool->slots[pool->used];

		slot->entry = entry;
		slot->fn = fn;
		stub = pool->code + jp_wrap_arch_stub_offset(pool->used);
		pool->used++;
	}
	/* the unlock publishes the slot before the caller can run the stub */
	pthread_mutex_unlock(&pool_lock);
	return stub;
}

/* ---- the public call */

int jitperf_wrap(jitperf *jp, jitperf_fn fn, const void *entry, void **wrapped)
{
	const char *name;
	void *stub;
	int err;

	if (!fn || !entry || !wrapped)
		return -EINVAL;
	if (!jp)
		jp = jitperf_default();
	name = jp_fn_name(jp, fn);
	if (!name)
		return -EINVAL;         /* not a function of this session */
	if (jp_wrap_arch_stub_size() == 0)
		return -EOPNOTSUPP;
	stub = pool_take(fn, entry, &err);
	if (!stub)
		return err;

	/* Name the stub for perf: it is the frame a profiler sees between
	 * the wrapped function and whoever called it. */
	if (jitperf_outputs(jp) & (JITPERF_PERFMAP | JITPERF_JITDUMP)) {
		size_t len = strlen(name) + sizeof("wrap:");
		char *label = malloc(len);

		if (label) {
			snprintf(label, len, "wrap:%s", name);
			/* a failed write leaves the stub working, just unnamed */
			(void)jitperf_code_load(jp, label, stub,
						jp_wrap_arch_stub_size(), NULL);
			free(label);
		}
	}
	*wrapped = stub;
	return 0;
}

#if !defined(JP_WRAP_X86_64) && !defined(JP_WRAP_AARCH64)
/* No thunk generator for this architecture: jitperf_wrap returns -EOPNOTSUPP. */
size_t jp_wrap_arch_stub_size(void) { return 0; }
size_t jp_wrap_arch_stub_offset(size_t i) { (void)i; return 0; }
size_t jp_wrap_arch_fill(uint8_t *page, size_t pagesize,
			 struct jp_wrap_slot *slots, size_t nslots)
{
	(void)page; (void)pagesize; (void)slots; (void)nslots;
	return 0;
}
#endif
