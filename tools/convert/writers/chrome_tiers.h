/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compiles of a Chrome trace (chrome_tiers.c): a span per compile on
 * its thread, and a flow from the request through the compile to the
 * first call (or perf sample) of the code it made.
 */
#ifndef JITPERF_CHROME_TIERS_H
#define JITPERF_CHROME_TIERS_H

#include <stdint.h>
#include <stdio.h>

#include "tools/convert/cvtiers.h"

struct cv_chrome_tiers;

/* NULL on ENOMEM; t may have no compiles */
struct cv_chrome_tiers *cv_chrome_tiers_new(const struct cv_tiers *t);
void cv_chrome_tiers_free(struct cv_chrome_tiers *ct);

/*
 * A call span, or the slice of a perf sample's leaf frame, named name,
 * that starts at ts on track (pid, tid): the first of each installed
 * compile's code after its install ends its flow.
 */
void cv_chrome_tiers_call(struct cv_chrome_tiers *ct, uint32_t pid, uint32_t tid,
			  const char *name, size_t len, uint64_t ts);
void cv_chrome_tiers_sample(struct cv_chrome_tiers *ct, uint32_t pid, uint32_t tid,
			    const char *name, size_t len, uint64_t ts);

/*
 * The spans, requests and flows, after every other slice (a flow's end
 * binds to the slice it meets).  *first: no event written yet; *bytes
 * grows by what is written, and no event goes past max_bytes (0: no
 * bound): *left_out counts those.  0 or -ENOMEM.
 */
int cv_chrome_tiers_write(struct cv_chrome_tiers *ct, FILE *fp, int *first, uint64_t *bytes,
			  uint64_t max_bytes, uint64_t *left_out);

#endif
