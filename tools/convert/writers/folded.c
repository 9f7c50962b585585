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

#include "tools/convert/convert.h"
#include "tools/convert/foldkey.h"
#include "tools/convert/stacks.h"

static void *folded_begin(struct outfile *out, const struct cv_opts *o)
{
	struct foldagg *a = malloc(sizeof(*a));

	if (a && foldagg_init(a, out, o)) {
		foldagg_fini(a);
		free(a);
		return NULL;
	}
	return a;
}

static int folded_end(void *w)
{
	struct foldagg *a = w;
	const struct stack_ent *const *v;
	FILE *fp = a->out->fp;
	size_t n, i;

	v = stacks_sorted(a->t, &n);
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
	if (!w)
		return;
	foldagg_fini(w);
	free(w);
}

const struct cv_ops cv_folded_ops = {
	.what   = "folded",
	.flags  = CV_CALL_STACKS | CV_STACKS_ONLY | CV_DEFAULT,
	.begin  = folded_begin,
	.sample = foldagg_sample,
	.call   = foldagg_call,
	.fork   = foldagg_fork,
	.merge  = foldagg_merge,
	.drop   = foldagg_drop,
	.end    = folded_end,
	.free   = folded_free,
};
