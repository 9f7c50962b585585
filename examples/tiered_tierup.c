/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tiered_tierup.c - the tier-up queue and the compiler thread.
 *
 * tx_call requests a tier-up when a function's interpreted calls reach
 * the threshold; the request goes to libjitperf (jitperf_tier_request) and
 * to the queue.  The compiler thread takes it, compiles between
 * jitperf_compile_begin and jitperf_compile_end, installs the code
 * (jitperf_code_load_ex with .compile set: named func[opt]) and only then
 * publishes it with a release store, so the code is registered before it
 * first runs and the program's thread switches on its next call.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tiered.h"

#define TIER_OPT 1u

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void compile(struct tx_rt *rt, struct tx_fn *f)
{
	uint64_t id = 0, t0 = now_ns();
	jc_entry entry;
	int err;

	jitperf_compile_begin(rt->jp, f->ir->name, TIER_OPT, &id);
	err = tx_native(rt, f);
	f->compile_ns = now_ns() - t0;
	jitperf_compile_end(rt->jp, id, err);
	if (!err && (err = tx_native_install(rt, f, id, &entry))) {
		munmap(f->native_map, f->native_size);
		f->native_map = NULL;
	}
	f->compile_status = err;
	if (!err)
		atomic_store_explicit(&f->native, entry, memory_order_release);
}

static void *compiler(void *arg)
{
	struct tx_rt *rt = arg;

	atomic_store(&rt->compiler_tid, (int)syscall(SYS_gettid));
	pthread_mutex_lock(&rt->lock);
	for (;;) {
		struct tx_fn *f;

		while (!rt->nqueue && !rt->stop)
			pthread_cond_wait(&rt->cond, &rt->lock);
		if (!rt->nqueue)
			break;
		f = rt->queue[0];
		rt->nqueue--;
		for (int i = 0; i < rt->nqueue; i++)
			rt->queue[i] = rt->queue[i + 1];
		pthread_mutex_unlock(&rt->lock);
		compile(rt, f);
		pthread_mutex_lock(&rt->lock);
	}
	pthread_mutex_unlock(&rt->lock);
	return NULL;
}

int tx_tierup_start(struct tx_rt *rt)
{
	int err;

	/* one slot per function: each is requested once */
	if (!(rt->queue = calloc((size_t)rt->prog->nfn, sizeof(*rt->queue))))
		return -ENOMEM;
	pthread_mutex_init(&rt->lock, NULL);
	pthread_cond_init(&rt->cond, NULL);
	if ((err = pthread_create(&rt->thread, NULL, compiler, rt)))
		return -err;
	pthread_setname_np(rt->thread, "tx-compiler");
	rt->started = 1;
	return 0;
}

void tx_tierup_request(struct tx_fn *f)
{
	struct tx_rt *rt = f->rt;

	jitperf_tier_request(rt->jp, f->ir->name, TIER_OPT);
	pthread_mutex_lock(&rt->lock);
	rt->queue[rt->nqueue++] = f;
	pthread_cond_broadcast(&rt->cond);
	pthread_mutex_unlock(&rt->lock);
}

void tx_tierup_stop(struct tx_rt *rt)
{
	if (rt->started) {
		pthread_mutex_lock(&rt->lock);
		rt->stop = 1;
		pthread_cond_broadcast(&rt->cond);
		pthread_mutex_unlock(&rt->lock);
		pthread_join(rt->thread, NULL);
		pthread_mutex_destroy(&rt->lock);
		pthread_cond_destroy(&rt->cond);
		rt->started = 0;
	}
	free(rt->queue);
	rt->queue = NULL;
}
