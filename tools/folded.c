/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Folded stacks writer: "root;frame;...;leaf COUNT" lines, sorted, as
 * stackcollapse-perf.pl prints them.  Samples count their period, calls
 * their self time in ns.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "foldkey.h"
#include "stacks.h"

struct folded {
	struct outfile       *out;
	const struct cv_opts *o;
	struct stacks        *t;
	struct foldkey        key;
};

static void *folded_begin(struct outfile *out, const struct cv_opts *o)
{
	struct folded *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->out = out;
	f->o = o;
	f->t = stacks_new();
	if (!f->t) {
		free(f);
		return NULL;
	}
	return f;
}

static int folded_sample(void *w, const struct ps_sample *s)
{
	struct folded *f = w;

	if (f->o->source != CV_SAMPLES)
		return 0;
	if (foldkey_sample(&f->key, s))
		return -ENOMEM;
	return stacks_add(f->t, f->key.s, f->key.len, s->period);
}

static int folded_call(void *w, const struct cv_call *c)
{
	struct folded *f = w;

	if (f->o->source != CV_CALLS)
		return 0;
	if (foldkey_call(&f->key, c, f->o->ps_flags))
		return -ENOMEM;
	return stacks_add(f->t, f->key.s, f->key.len, c->self_ns);
}

static int folded_end(void *w)
{
	struct folded *f = w;
	const struct stack_ent *const *v;
	FILE *fp = f->out->fp;
	size_t n, i;

	v = stacks_sorted(f->t, &n);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		fwrite_unlocked(v[i]->key, 1, v[i]->len, fp);
		fprintf(fp, " %" PRIu64 "\n", v[i]->count);
	}
	return ferror(fp) ? -EIO : 0;
}

static void folded_free(void *w)
{
	struct folded *f = w;

	if (!f)
		return;
	stacks_free(f->t);
	free(f->key.s);
	free(f);
}

const struct cv_ops cv_folded_ops = {
	.what   = "folded",
	.begin  = folded_begin,
	.sample = folded_sample,
	.call   = folded_call,
	.end    = folded_end,
	.free   = folded_free,
};
