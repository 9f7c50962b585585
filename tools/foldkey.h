/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Building the "root;frame;...;leaf" key of a sample or a call. */
#ifndef JITPERF_FOLDKEY_H
#define JITPERF_FOLDKEY_H

#include "convert.h"

struct foldkey {
	char  *s;
	size_t len, cap;
};

int foldkey_sample(struct foldkey *k, const struct ps_sample *s);   /* 0 / -ENOMEM */
int foldkey_call(struct foldkey *k, const struct cv_call *c, unsigned ps_flags);

#endif
