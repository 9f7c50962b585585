/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf traces as convert input: calls (with their stacks as names),
 * thread names and code events, read through read/trace_read.h.
 *
 * For stacks (folded, SVG, pprof) a traced call stands for calls of its
 * function that were only counted: the statistics file beside the trace
 * gives each function's exact count, shared out over its traced calls in
 * whole numbers, so a stack's calls add up to the exact counts.  A call's
 * time is scaled by the same weight and added to its stack; the same
 * amount is taken from its caller's stack, so a stack's time is what its
 * calls took less what the calls they made took, timed or not (the
 * untimed ones estimated through the timed ones of their stacks).  The
 * places where the trace says uncounted callers may lie (probes that keep
 * no stack) are left out of the stacks: the callers around them are known.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callpath.h"
#include "cvinput.h"
#include "tools/cmds.h"
#include "read/stats_read.h"
#include "read/trace_read.h"

struct walk {
	struct jpt_reader    *r;
	uint32_t              input;
	const struct jpt_info *info;
	const struct cv_sink *sink;
	void                 *arg;
	const char          **names;     /* by function id; filled on first use */
	size_t                nnames;
	/* per stack position, as the last call left them (jpt_call.same_below);
	 * with stacks, positions of known callers only (placeholders left out) */
	const char          **stack;
	uint32_t             *paths;
	uint32_t             *below;     /* known callers below each trace position */
	size_t                cap_stack;
	/* by function id: exact calls and estimated total time (from the
	 * statistics), traced calls and their durations summed, traced calls
	 * met so far; counts[id].traced 0: no weight known */
	struct { uint64_t calls, total_ns, traced, seen; double dur; } *counts;
	size_t                ncounts;
	struct pathtree       tree;
	struct { uint32_t tid; const char *name; } *threads;
	size_t                nthreads;
	int                   had_code;
};

static const char *fn_name(struct walk *w, uint32_t id)
{
	if (id >= w->nnames) {
		size_t n = id + 64;
		const char **v = realloc(w->names, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + w->nnames, 0, (n - w->nnames) * sizeof(*v));
		w->names = v;
		w->nnames = n;
	}
	if (!w->names[id]) {
		const struct jpt_fn *f = jpt_fn(w->r, id);

		w->names[id] = f ? f->name : "[unknown]";
	}
	return w->names[id];
}

static const char *thread_name(struct walk *w, uint32_t tid)
{
	for (size_t i = 0; i < w->nthreads; i++)
		if (w->threads[i].tid == tid)
			return w->threads[i].name;
	return "";
}

static int sum_call(const struct jpt_call *jc, void *arg)
{
	struct walk *w = arg;

	if (jc->fn < w->ncounts) {
		w->counts[jc->fn].traced++;
		w->counts[jc->fn].dur += (double)(jc->end_ns - jc->start_ns);
	}
	return 0;
}

/*
 * The statistics of the trace's process (jitperf-PID.stats beside it):
 * each function's exact calls and estimated total time, by function id,
 * and a pass over the trace for its traced calls and their durations.
 * The traced durations hold the probes of the calls inside them; the
 * statistics' totals are net of them (and weighted by each timed call's
 * own share), so the durations of a function not every call of which was
 * traced are scaled to its total.  Without statistics every traced call
 * stands for itself.
 */
static void load_counts(struct walk *w, const char *trace_path)
{
	struct stats_file *sf;
	const char *slash = strrchr(trace_path, '/');
	char path[PATH_MAX];
	size_t n = jpt_nfns(w->r) + 1;

	snprintf(path, sizeof(path), "%.*sjitperf-%u.stats",
		 slash ? (int)(slash - trace_path + 1) : 0, trace_path, w->info->pid);
	if (stats_read(path, &sf, NULL, 0))
		return;
	w->counts = calloc(n, sizeof(*w->counts));
	if (w->counts) {
		w->ncounts = n;
		for (uint32_t id = 1; id < n; id++) {
			const struct jpt_fn *f = jpt_fn(w->r, id);

			for (size_t i = 0; f && i < sf->nrows; i++)
				if (!strcmp(sf->rows[i].name, f->name)) {
					w->counts[id].calls = sf->rows[i].calls;
					w->counts[id].total_ns = sf->rows[i].total_ns;
					break;
				}
		}
		if (jpt_for_each_call(w->r, sum_call, w, NULL, 0)) {
			free(w->counts);
			w->counts = NULL;
			w->ncounts = 0;
		}
	}
	stats_free(sf);
}

/*
 * The calls the next traced call of fn stands for: the i-th of T traced
 * calls gets floor((i+1)C/T) - floor(iC/T) of the C calls, so they add up
 * to C; *scale is what its duration is multiplied by.
 */
static uint64_t share(struct walk *w, uint32_t fn, double *scale)
{
	unsigned __int128 c, t, i;

	*scale = 1;
	if (fn >= w->ncounts || !w->counts[fn].traced || w->counts[fn].calls < w->counts[fn].traced)
		return 1;
	c = w->counts[fn].calls;
	t = w->counts[fn].traced;
	i = w->counts[fn].seen++;
	/* every call traced: their own durations, nothing to estimate */
	if (c > t && w->counts[fn].total_ns != STATS_NO_VALUE && w->counts[fn].dur > 0)
		*scale = (double)w->counts[fn].total_ns / w->counts[fn].dur;
	if (i >= t)
		return 0;
	return (uint64_t)((i + 1) * c / t - i * c / t);
}

static int grow_stack(struct walk *w, size_t need)
{
	size_t cap = need * 2;
	const char **s;
	uint32_t *p, *b;

	if (need <= w->cap_stack)
		return 0;
	if ((s = realloc(w->stack, cap * sizeof(*s))))
		w->stack = s;
	if (s && (p = realloc(w->paths, cap * sizeof(*p))))
		w->paths = p;
	else
		return -ENOMEM;
	if (!(b = realloc(w->below, (cap + 1) * sizeof(*b))))
		return -ENOMEM;
	w->below = b;
	w->cap_stack = cap;
	return 0;
}

/*
 * The stack of known callers: the positions from same_below up are
 * redone; a placeholder (id 0, "uncounted callers may lie here") takes
 * no position.  Returns the position of the call itself.
 */
static int known_stack(struct walk *w, const struct jpt_call *jc, size_t *top)
{
	w->below[0] = 0;
	for (size_t i = jc->same_below; i <= jc->depth; i++) {
		uint32_t id = jc->stack[i], k = w->below[i];

		w->below[i + 1] = k + (id != 0);
		if (!id)
			continue;
		w->paths[k] = callpath_tree_child(&w->tree, k ? w->paths[k - 1] : 0, id);
		if (!w->paths[k] || !(w->stack[k] = fn_name(w, id)))
			return -ENOMEM;
	}
	*top = w->below[jc->depth + 1] - 1;
	return 0;
}

static int on_call(const struct jpt_call *jc, void *arg)
{
	struct walk *w = arg;
	struct cv_call c;
	size_t top = jc->depth;
	double scale;
	int ret;

	if (grow_stack(w, jc->depth + 1))
		return -ENOMEM;
	if (w->sink->call_stacks) {
		if (known_stack(w, jc, &top))
			return -ENOMEM;
	} else if (!(w->stack[jc->depth] = fn_name(w, jc->stack[jc->depth]))) {
		return -ENOMEM;         /* a slice needs only its own name */
	}
	c = (struct cv_call){
		.input = w->input, .pid = w->info->pid, .tid = jc->tid, .thread = thread_name(w, jc->tid),
		.start_ns = jc->start_ns, .end_ns = jc->end_ns, .self_ns = jc->self_ns,
		.calls = 1, .est_ns = (int64_t)jc->self_ns,
		.depth = top, .stack = w->stack,
		.path = w->sink->call_stacks ? w->paths[top] : 0,
		.ncounters = w->info->ncounters,
		.counter_names = w->info->counter_names, .counters = jc->counters,
	};
	if (!w->sink->call_stacks)
		return w->sink->call(&c, w->arg);
	c.calls = share(w, jc->stack[jc->depth], &scale);
	c.est_ns = (int64_t)(scale * (double)(jc->end_ns - jc->start_ns) + 0.5);
	ret = w->sink->call(&c, w->arg);
	if (ret || top == 0)
		return ret;
	/* the caller's share: this call's time is not the caller's own */
	c.correction = 1;
	c.calls = 0;
	c.est_ns = -c.est_ns;
	c.depth = top - 1;
	c.path = w->paths[top - 1];
	return w->sink->call(&c, w->arg);
}

static int on_code(const struct jpt_code *jc, void *arg)
{
	struct walk *w = arg;
	struct cv_code c = {
		.kind = jc->kind, .pid = w->info->pid, .tid = jc->tid, .ts_ns = jc->ts_ns,
		.addr = jc->addr, .len = jc->len, .index = jc->index, .name = jc->name,
	};

	w->had_code = 1;
	return w->sink->code(&c, w->arg);
}

int cv_read_trace(const char *path, uint32_t input, const struct cv_sink *sink, void *arg,
		  int with_code, int *had_code, char *err, size_t errlen)
{
	struct walk w = { .input = input, .sink = sink, .arg = arg };
	size_t i;
	int ret;

	ret = jpt_open(&w.r, path, err, errlen);
	if (ret)
		return ret;
	w.info = jpt_info(w.r);
	if (sink->call_stacks)
		load_counts(&w, path);
	w.nthreads = jpt_nthreads(w.r);
	w.threads = calloc(w.nthreads + 1, sizeof(*w.threads));
	if (!w.threads) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w.nthreads; i++) {
		const struct jpt_thread *t = jpt_thread(w.r, i);
		struct cv_thread ct = { .pid = w.info->pid, .tid = t->tid, .name = t->name };

		w.threads[i].tid = t->tid;
		w.threads[i].name = t->name ? t->name : "";
		ret = sink->thread(&ct, arg);
		if (ret)
			goto out;
	}
	ret = jpt_for_each_call(w.r, on_call, &w, err, errlen);
	if (!ret && with_code)
		ret = jpt_for_each_code(w.r, on_code, &w, err, errlen);
	if (w.had_code)
		*had_code = 1;
	if (!ret && w.info->truncated)
		cmd_err("%s: trace ends inside a block (writer killed?); converted up to the "
			"last complete block", path);
out:
	free(w.names);
	free(w.stack);
	free(w.paths);
	free(w.below);
	free(w.counts);
	callpath_tree_free(&w.tree);
	free(w.threads);
	jpt_close(w.r);
	return ret;
}
