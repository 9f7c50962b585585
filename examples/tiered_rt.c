/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tiered_rt.c - a tiered runtime over a jitcalc program: the program
 * read and parsed with jitcalc's front end, every function
 * compiled to bytecode (tier 0, recorded as a compile of tier 0) and given
 * its trampoline, the tier tags named, the compiler thread started.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tiered.h"

int tx_load(struct jc_prog *p, const char *file)
{
	char path[PATH_MAX], *text;
	size_t len;
	int err;

	if (!realpath(file, path) || !(text = jc_slurp(path, &len))) {
		snprintf(p->err, sizeof(p->err), "%s: %s", file, strerror(errno));
		return -errno;
	}
	if (memchr(text, 0, len)) {
		snprintf(p->err, sizeof(p->err), "%s: NUL byte in the source", file);
		free(text);
		return -EINVAL;
	}
	if (!(p->path = strdup(path))) {
		free(text);
		return -ENOMEM;
	}
	err = jc_parse(p, text, file);
	free(text);
	if (!err)
		err = jc_parse_finish(p);
	for (int i = 0; !err && i < p->nfn; i++)
		if (!strcmp(p->fn[i]->file, file))
			p->fn[i]->file = p->path;       /* line info wants the absolute path */
	return err;
}

static int tier0(struct tx_rt *rt, struct tx_fn *f)
{
	int64_t (*eval)(struct tx_fn *, const int64_t *) = tx_eval;
	const void *target;
	uint64_t id = 0;
	void *entry;
	int err;

	jitperf_compile_begin(rt->jp, f->ir->name, 0, &id);
	err = tx_bytecode(rt, f);
	jitperf_compile_end(rt->jp, id, err);
	if (err)
		return err;
	memcpy(&target, &eval, sizeof(target));     /* function to object pointer */
	if ((err = jitperf_trampoline(rt->jp, f->ir->name, 0, target, &entry))) {
		snprintf(rt->prog->err, sizeof(rt->prog->err), "jitperf_trampoline(%s): %s",
			 f->ir->name, jitperf_strerror(err));
		return err;
	}
	entry = tx_counted(rt, f, "interp", entry, 0);     /* its size is the library's */
	memcpy(&f->tramp, &entry, sizeof(f->tramp));
	return 0;
}

void *tx_counted(struct tx_rt *rt, struct tx_fn *f, const char *tag, void *entry, size_t len)
{
	char name[256];
	jitperf_fn fn;
	void *wrapped;

	if (!(jitperf_outputs(rt->jp) & (JITPERF_STATS | JITPERF_TRACE)))
		return entry;
	snprintf(name, sizeof(name), "%s[%s]", f->ir->name, tag);
	fn = jitperf_fn_register(rt->jp, name, entry, len);
	if (!fn || jitperf_wrap(rt->jp, fn, entry, &wrapped))
		return entry;           /* uncounted, still right */
	return wrapped;
}

int tx_rt_open(struct tx_rt *rt, struct jc_prog *p, jitperf *jp, unsigned long threshold)
{
	int err;

	memset(rt, 0, sizeof(*rt));
	rt->prog = p;
	rt->jp = jp;
	rt->threshold = threshold;
	if (!(rt->fn = calloc((size_t)p->nfn, sizeof(*rt->fn)))) {
		snprintf(p->err, sizeof(p->err), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	jitperf_tier_name(jp, 0, "interp");
	jitperf_tier_name(jp, 1, "opt");
	for (int i = 0; i < p->nfn; i++) {
		rt->fn[i].ir = p->fn[i];
		rt->fn[i].rt = rt;
		if ((err = tier0(rt, &rt->fn[i])))
			return err;
	}
	if ((err = tx_tierup_start(rt)))
		snprintf(p->err, sizeof(p->err), "compiler thread: %s", strerror(-err));
	return err;
}

struct tx_fn *tx_rt_find(struct tx_rt *rt, const char *name)
{
	for (int i = 0; i < rt->prog->nfn; i++)
		if (!strcmp(rt->fn[i].ir->name, name))
			return &rt->fn[i];
	return NULL;
}

void tx_rt_close(struct tx_rt *rt)
{
	tx_tierup_stop(rt);
	for (int i = 0; rt->fn && i < rt->prog->nfn; i++) {
		free(rt->fn[i].code);
		if (rt->fn[i].native_map)
			munmap(rt->fn[i].native_map, rt->fn[i].native_size);
	}
	free(rt->fn);
	rt->fn = NULL;
}
