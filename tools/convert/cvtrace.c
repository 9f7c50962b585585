/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf traces as convert input: calls (with their stacks as names),
 * thread names and code events, read through read/trace_read.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callpath.h"
#include "cvinput.h"
#include "tools/cmds.h"
#include "read/trace_read.h"

struct walk {
	struct jpt_reader    *r;
	uint32_t              input;
	const struct jpt_info *info;
	const struct cv_sink *sink;
	void                 *arg;
	const char          **names;     /* by function id; filled on first use */
	size_t                nnames;
	/* per stack position, as the last call left them (jpt_call.same_below) */
	const char          **stack;
	uint32_t             *paths;
	size_t                cap_stack;
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

static int on_call(const struct jpt_call *jc, void *arg)
{
	struct walk *w = arg;
	struct cv_call c;
	size_t i;

	if (jc->depth + 1 > w->cap_stack) {
		size_t cap = (jc->depth + 1) * 2;
		const char **s = realloc(w->stack, cap * sizeof(*s));
		uint32_t *p;

		if (s)
			w->stack = s;
		if (!s || !(p = realloc(w->paths, cap * sizeof(*p))))
			return -ENOMEM;
		w->paths = p;
		w->cap_stack = cap;
	}
	if (w->sink->call_stacks) {
		/* the frames that changed since the call before: their paths and names */
		for (i = jc->same_below; i <= jc->depth; i++) {
			w->paths[i] = pathtree_child(&w->tree, i ? w->paths[i - 1] : 0,
						     jc->stack[i]);
			if (!w->paths[i] || !(w->stack[i] = fn_name(w, jc->stack[i])))
				return -ENOMEM;
		}
	} else if (!(w->stack[jc->depth] = fn_name(w, jc->stack[jc->depth]))) {
		return -ENOMEM;         /* a slice needs only its own name */
	}
	c = (struct cv_call){
		.input = w->input, .pid = w->info->pid, .tid = jc->tid, .thread = thread_name(w, jc->tid),
		.start_ns = jc->start_ns, .end_ns = jc->end_ns, .self_ns = jc->self_ns,
		.depth = jc->depth, .stack = w->stack,
		.path = w->sink->call_stacks ? w->paths[jc->depth] : 0,
		.ncounters = w->info->ncounters,
		.counter_names = w->info->counter_names, .counters = jc->counters,
	};
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
	pathtree_free(&w.tree);
	free(w.threads);
	jpt_close(w.r);
	return ret;
}
