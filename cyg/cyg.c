/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libjitperf-cyg: __cyg_profile_func_enter/exit for code built with
 * -finstrument-functions, so ahead-of-time functions land in the same
 * trace and statistics as JIT code.  Link it (-ljitperf-cyg) or load it
 * with LD_PRELOAD; it uses jitperf_default(), so JITPERF=trace,stats turns
 * it on and an unset JITPERF costs one load and one branch per call.
 *
 * Each function is registered once, at first sight, under the name
 * "@native:<module path>+0x<address in the module's ELF>" (the address a
 * debugger or addr2line uses, i.e. the run-time address minus the
 * module's load bias); the trace reader turns that into "function
 * (file.c:line)" with libdw.  After that, a call costs a lookup in a
 * thread-local direct-mapped cache and the counting path of jitperf.h,
 * inline; a call to time goes to the library's slow path through the
 * GOT (jitperf__enter_slow is noplt).  libjitperf is loaded with this
 * library, at start-up: its TLS is static (initial-exec), so no
 * __tls_get_addr call per event.
 *
 * Only this library's two entry points are exported; everything here is
 * no_instrument_function so the profiler never profiles itself.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitperf.h"
#include "lib/compiler.h"

#define EXPORT   __attribute__((visibility("default")))

void __cyg_profile_func_enter(void *this_fn, void *call_site) EXPORT JP_NOINSTR;
void __cyg_profile_func_exit(void *this_fn, void *call_site) EXPORT JP_NOINSTR;


/* ---- process-wide table: address -> function id (first sight only) */

struct known {
	uintptr_t  addr;
	jitperf_fn fn;
};

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static struct known *known;          /* open addressing, power-of-two size */
static size_t known_cap, known_used;

static size_t JP_NOINSTR hash_addr(uintptr_t a)
{
	a ^= a >> 17;
	a *= 0xed5ad4bbu;
	return (size_t)(a ^ (a >> 11));
}

static struct known * JP_NOINSTR known_find(uintptr_t addr)
{
	size_t i, mask = known_cap - 1;

	for (i = hash_addr(addr) & mask; known[i].addr; i = (i + 1) & mask)
		if (known[i].addr == addr)
			return &known[i];
	return &known[i];              /* the empty slot it would go in */
}

static int JP_NOINSTR known_grow(void)
{
	size_t i, oldcap = known_cap, cap = oldcap ? oldcap * 2 : 1024;
	struct known *old = known, *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	known = t;
	known_cap = cap;
	for (i = 0; i < oldcap; i++)
		if (old[i].addr)
			*known_find(old[i].addr) = old[i];
	free(old);
	return 0;
}

/* Path of the main program, whose link map has an empty name. */
static const char * JP_NOINSTR self_exe(void)
{
	static char path[4096];
	ssize_t n;

	if (path[0])
		return path;
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0)
		return "";
	path[n] = '\0';
	return path;
}

/* Find module and bias of addr and register it under its @native name. */
static jitperf_fn JP_NOINSTR register_native(uintptr_t addr)
{
	Dl_info info;
	struct link_map *map = NULL;
	const ElfW(Sym) *sym = NULL;
	const char *module = "";
	uintptr_t bias = 0;
	size_t len = 1;
	char name[4200];

	if (dladdr1((void *)addr, &info, (void **)&map, RTLD_DL_LINKMAP) && map) {
		bias = map->l_addr;
		module = map->l_name && map->l_name[0] ? map->l_name : self_exe();
	}
	/* the size is only known for exported symbols; 1 byte names the start */
	if (dladdr1((void *)addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
	    (uintptr_t)info.dli_saddr == addr && sym->st_size)
		len = sym->st_size;
	snprintf(name, sizeof(name), "@native:%s+0x%lx", module,
		 (unsigned long)(addr - bias));
	return jitperf_fn_register(jitperf_default(), name, (void *)addr, len);
}

/* The id for addr (0: not recorded); -1 when it cannot be known yet (no memory). */
static int JP_NOINSTR lookup_slow(uintptr_t addr, jitperf_fn *fn)
{
	struct known *k;
	int err = 0;

	pthread_mutex_lock(&known_lock);
	if (known_used * 2 >= known_cap && known_grow() != 0) {
		err = -1;
		goto out;
	}
	k = known_find(addr);
	if (!k->addr) {
		/* a failure (full function table) is remembered too, so the
		 * module lookup never runs per call */
		k->addr = addr;
		k->fn = register_native(addr);
		known_used++;
	}
	*fn = k->fn;
out:
	pthread_mutex_unlock(&known_lock);
	return err;
}

/* ---- per-thread direct-mapped cache: the hot path */

#define CACHE_SLOTS 1024u

struct cache_ent {
	uintptr_t  addr;
	jitperf_fn fn;
};

/* small initial-exec TLS (the library is loaded at start-up: preloaded or
 * linked); the cache itself is allocated at a thread's first call */
static __thread struct cache_ent *tls_cache __attribute__((tls_model("initial-exec")));
static __thread int tls_busy __attribute__((tls_model("initial-exec")));
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void JP_NOINSTR cache_free(void *p)
{
	free(p);
	tls_cache = NULL;
}

static void JP_NOINSTR cache_key_init(void)
{
	pthread_key_create(&cache_key, cache_free);
}

static jitperf_fn JP_NOINSTR cache_miss(struct cache_ent *e, uintptr_t addr)
{
	int saved_errno = errno;
	jitperf_fn fn = 0;

	/* a signal handler built with -finstrument-functions that interrupts
	 * this thread's miss is not traced (the lock is not re-entrant) */
	if (tls_busy)
		return 0;
	tls_busy = 1;
	if (!e) {
		pthread_once(&cache_once, cache_key_init);
		tls_cache = calloc(CACHE_SLOTS, sizeof(*tls_cache));
		if (tls_cache)
			pthread_setspecific(cache_key, tls_cache);
	}
	if (lookup_slow(addr, &fn) == 0 && tls_cache) {
		e = &tls_cache[(addr >> 4) & (CACHE_SLOTS - 1)];
		e->addr = addr;
		e->fn = fn;
	}
	tls_busy = 0;
	errno = saved_errno;
	return fn;
}

static inline jitperf_fn JP_NOINSTR lookup(void *this_fn)
{
	uintptr_t addr = (uintptr_t)this_fn;
	struct cache_ent *c = tls_cache, *e = NULL;

	if (__builtin_expect(c != NULL, 1)) {
		e = &c[(addr >> 4) & (CACHE_SLOTS - 1)];
		if (__builtin_expect(e->addr == addr, 1))
			return e->fn;
	}
	return cache_miss(c ? e : NULL, addr);
}

void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
	unsigned a = (unsigned)jitperf__probe_active;
	jitperf_fn fn;

	(void)call_site;
	if (__builtin_expect(!a, 1))
		return;
	fn = lookup(this_fn);
	if (fn) {
		/* counted like a call of jitperf_enter: this code runs in a
		 * library of its own, not inside the instrumented function */
		if (jitperf__enter_fast(a, fn))
			jitperf__inc(&jitperf__tls.lib_calls);
		else
			jitperf__enter_slow(fn);
	}
}

void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
	unsigned a = (unsigned)jitperf__probe_active;
	jitperf_fn fn;

	(void)call_site;
	if (__builtin_expect(!a, 1))
		return;
	fn = lookup(this_fn);
	if (fn && !jitperf__exit_fast(a, fn))
		jitperf__exit_slow(fn);
}

/* Open the default session before main, so probes are on from the start;
 * libjitperf closes it (and writes the statistics) at exit. */
static void __attribute__((constructor)) JP_NOINSTR cyg_start(void)
{
	(void)jitperf_default();
}
