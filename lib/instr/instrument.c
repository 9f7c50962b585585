/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The instrumentation side of a session: the function table, choosing the
 * instrumenting session, and the hooks lib/session.c calls (open, close,
 * fork, code events).  Probes are in probe.c, the trace writer in
 * trace_write.c, statistics in stats.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instr.h"
#include "lib/log.h"

static unsigned last_gen;               /* generation of the last session activated */

static struct jp_instr *instr_new(struct jitperf *jp)
{
	struct jp_instr *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	pthread_mutex_init(&in->lock, NULL);
	in->jp = jp;
	in->debug = jp->debug;
	in->mode = jp->sample_every == JITPERF_SAMPLE_NONE ? JP_SAMPLE_NONE :
		   jp->sample_every == JITPERF_SAMPLE_ADAPTIVE ? JP_SAMPLE_ADAPTIVE : JP_SAMPLE_FIXED;
	in->every = in->mode == JP_SAMPLE_FIXED && jp->sample_every ? jp->sample_every : 1;
	in->rate = jp->timed_per_sec ? jp->timed_per_sec : JP_DEFAULT_RATE;
	in->trace_max = jp->trace_max;
	in->trace_ring = jp->trace_ring;
	in->trace_min_ns = jp->trace_min_ns;
	return in;
}

/* Threads are released (jp_threads_release) before, under the active lock. */
static void instr_free(struct jp_instr *in)
{
	for (unsigned c = 0; c < JP_FN_CHUNKS && in->fns[c]; c++) {
		for (unsigned i = 0; i < JP_FN_CHUNK; i++)
			free(in->fns[c][i].name);
		free(in->fns[c]);
	}
	jp_counters_free(&in->counters);
	pthread_mutex_destroy(&in->lock);
	free(in);
}

/* Make in the session the probes record into. */
static int activate(struct jp_instr *in)
{
	struct jitperf *jp = in->jp;
	int err;

	if (jp_cur)
		return -EBUSY;   /* one instrumenting session per process */
	if ((err = jp_clock_setup(jp->clock, in->debug)))
		return err;
	if ((err = jp_counters_parse(&in->counters, jp->counters, in->debug)))
		return err;
	in->ticks_per_sec = jp_clock_measure_hz();
	jp_clock_pair(&in->open_tick, &in->open_ns);
	in->cpu_open_ns = jp_clock_cpu_ns();
	if (in->tracing && (err = jp_trace_open(in)))
		return err;
	last_gen = last_gen + 1 ? last_gen + 1 : 1;     /* never 0: "off" */
	in->gen = last_gen;
	in->active = 1;
	__atomic_store_n(&jp_cur, in, __ATOMIC_SEQ_CST);
	/* what jitperf__tls.gen is compared with */
	__atomic_store_n(&jitperf__probe_active, (int)in->gen, __ATOMIC_SEQ_CST);
	jp_calibrate(in);
	jp_trace_costs(in);
	return 0;
}

int jp_instr_open(struct jitperf *jp)
{
	struct jp_instr *in = instr_new(jp);
	int err = 0;

	if (!in)
		return -ENOMEM;
	in->tracing = !!(jp->outputs & JITPERF_TRACE);
	in->stats = !!(jp->outputs & JITPERF_STATS);
	if ((in->tracing || in->stats) && __atomic_load_n(&jp_cur, __ATOMIC_ACQUIRE)) {
		err = -EBUSY;   /* without waiting for the lock a close may hold */
	} else if (in->tracing || in->stats) {
		jp_active_lock();
		err = activate(in);
		jp_active_unlock();
	}
	if (err) {
		if (in->debug)
			fprintf(stderr, "jitperf: instrumentation: %s\n", strerror(-err));
		instr_free(in);
		return err;
	}
	jp->instr = in;
	return 0;
}

/* More precise tick rate from the open and close pairs, when far enough apart. */
static void recalibrate(struct jp_instr *in)
{
	uint64_t tick, ns;

	if (!jp_clock_is_tsc)
		return;
	jp_clock_pair(&tick, &ns);
	if (ns > in->open_ns + 50000000u && tick > in->open_tick)
		in->ticks_per_sec = (uint64_t)((double)(tick - in->open_tick) * 1e9 /
					       (double)(ns - in->open_ns));
}

int jp_instr_close(struct jitperf *jp)
{
	struct jp_instr *in = jp ? jp->instr : NULL;
	int err = 0;

	if (!in)
		return 0;
	if (in->active) {
		/* Held to the end: the threads' states are read here, and a
		 * thread that exits meanwhile waits for it before freeing its
		 * own; no other session can start and reset them. */
		jp_active_lock();
		__atomic_store_n(&jitperf__probe_active, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&jp_cur, NULL, __ATOMIC_SEQ_CST);
		jp_probe_quiesce(in);
		recalibrate(in);
		if (in->stats)
			err = jp_stats_write(in);
		if (in->trace) {
			struct jp_totals tot;

			jp_totals(in, &tot);
			if (tot.drop_full)
				jp_log_error("trace full: %llu calls left out of it (JITPERF_TRACE_MAX)",
					     (unsigned long long)tot.drop_full);
			pthread_mutex_lock(&in->lock);
			/* the names of the threads that wrote calls */
			for (struct jp_thread *t = in->threads; t; t = t->next)
				if (t->blkseq)
					jp_trace_meta_thread(in, t);
			jp_trace_meta_cal(in);
			pthread_mutex_unlock(&in->lock);
			jp_trace_close(in, 1);
		}
		jp_threads_release(in);
		jp_active_unlock();
	}
	jp->instr = NULL;
	instr_free(in);
	return err;
}

void jp_instr_atfork_prepare(struct jitperf *jp)
{
	if (jp->instr)
		jp_trace_pause(jp->instr);
}

void jp_instr_atfork_parent(struct jitperf *jp)
{
	if (jp->instr)
		jp_trace_resume(jp->instr);
}

void jp_instr_atfork_child(struct jitperf *jp)
{
	struct jp_instr *in = jp->instr;
	uint32_t n;

	/* Only this thread runs now: locks another thread held at fork() are free. */
	jp_active_lock_reset();
	if (!in || !in->active)
		return;
	pthread_mutex_init(&in->lock, NULL);
	jp_probe_fork_child(in);
	jp_clock_pair(&in->open_tick, &in->open_ns);
	if (in->trace) {
		jp_trace_close(in, 0);   /* the parent's file stays the parent's */
		if (jp_trace_open(in)) {
			in->tracing = 0;
		} else {
			jp_trace_costs(in);
			n = __atomic_load_n(&in->nfns, __ATOMIC_ACQUIRE);
			for (jitperf_fn id = 1; id <= n; id++)
				jp_trace_meta_fn(in, id);
		}
	}
	jp_probe_fork_trace(in);
}

void jp_instr_code_event(struct jitperf *jp, enum jpt_code_kind kind, uint64_t index,
			 uint64_t addr, uint64_t len, const char *name)
{
	struct jp_instr *in = jp ? jp->instr : NULL;

	if (!in || !in->trace)
		return;
	pthread_mutex_lock(&in->lock);
	jp_trace_meta_code(in, kind, index, addr, len, name);
	pthread_mutex_unlock(&in->lock);
}

/* Add a function; in->lock held. */
static jitperf_fn fn_add(struct jp_instr *in, const char *name, const void *addr, size_t len)
{
	uint32_t id = in->nfns + 1;
	struct jp_fnent *e;

	/* ENOBUFS, not ENOSPC: a full table is no full disk */
	if (id > JP_FN_MAX || id > JPT_FN_MAX)
		return errno = ENOBUFS, 0;
	if (!in->fns[id / JP_FN_CHUNK] &&
	    !(in->fns[id / JP_FN_CHUNK] = calloc(JP_FN_CHUNK, sizeof(struct jp_fnent))))
		return errno = ENOMEM, 0;
	e = &in->fns[id / JP_FN_CHUNK][id % JP_FN_CHUNK];
	if (!(e->name = strdup(name)))
		return errno = ENOMEM, 0;
	e->addr = (uintptr_t)addr;
	e->len = len;
	/* Published after the entry is complete: probes check ids against nfns. */
	__atomic_store_n(&in->nfns, id, __ATOMIC_RELEASE);
	if (in->trace)
		jp_trace_meta_fn(in, id);
	return id;
}

static struct jp_instr *instr_of(struct jitperf *jp)
{
	static pthread_mutex_t lazy = PTHREAD_MUTEX_INITIALIZER;
	struct jp_instr *in;

	if ((in = __atomic_load_n(&jp->instr, __ATOMIC_ACQUIRE)))
		return in;
	/* A session whose hooks never ran (inactive): ids must still work. */
	pthread_mutex_lock(&lazy);
	if (!(in = jp->instr) && (in = instr_new(jp)))
		__atomic_store_n(&jp->instr, in, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lazy);
	return in;
}

jitperf_fn jp_fn_register(struct jitperf *jp, const char *name, const void *addr, size_t len)
{
	struct jp_instr *in;
	jitperf_fn id;

	if (!name || !jp)
		return errno = EINVAL, 0;
	if (!(in = instr_of(jp)))
		return errno = ENOMEM, 0;
	pthread_mutex_lock(&in->lock);
	id = fn_add(in, name, addr, len);
	pthread_mutex_unlock(&in->lock);
	return id;
}

const char *jp_fn_name(struct jitperf *jp, jitperf_fn fn)
{
	struct jp_instr *in = jp ? jp->instr : NULL;

	if (!in || fn == 0 || fn > __atomic_load_n(&in->nfns, __ATOMIC_ACQUIRE))
		return NULL;
	return jp_fnent(in, fn)->name;
}
