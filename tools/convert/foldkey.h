/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Building the "root;frame;...;leaf" key of a sample or a call. */
#ifndef JITPERF_FOLDKEY_H
#define JITPERF_FOLDKEY_H

#include "callpath.h"
#include "convert.h"

struct foldkey {
	char  *s;
	size_t len, cap;
};

/*
 * The stacks of a conversion added up by key, as the folded and SVG
 * writers both need them: samples weigh their period, calls their self
 * time in ns, whichever --source asks for.  Each writer's state begins
 * with a struct foldagg, so foldagg_sample and foldagg_call serve as its
 * cv_ops .sample and .call.
 */
struct stacks;
struct foldagg {
	struct outfile       *out;
	const struct cv_opts *o;
	struct stacks        *t;
	struct foldkey        key;
	/* ps_sample.stack_id -> entry of t + 1, so a stack met again costs one lookup */
	struct idmap          stack_ids;
	struct callpath       paths;     /* a call's path -> entry of t, the same way */
};

int foldagg_init(struct foldagg *a, struct outfile *out, const struct cv_opts *o);
int foldagg_sample(void *w, const struct ps_sample *s);
int foldagg_call(void *w, const struct cv_call *c);
void foldagg_fini(struct foldagg *a);

/*
 * Samples read by another thread: foldagg_fork gives a state of its own
 * for foldagg_sample (NULL = ENOMEM), foldagg_merge adds it into w's stacks
 * and frees it (0 or -ENOMEM), foldagg_drop frees it unmerged.
 */
void *foldagg_fork(void *w);
int foldagg_merge(void *w, void *part);
void foldagg_drop(void *part);

#endif
