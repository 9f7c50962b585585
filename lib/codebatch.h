/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Registration of many functions at once, for libjitperf-llvm's listener:
 * exported (lib/libjitperf.map) but not API, and not in jitperf.h.
 *
 * jitperf__code_load_batch registers the n functions of code[] (each a
 * struct jitperf_code of this library's size) as n calls of
 * jitperf_code_load_ex would, with the same bytes in both files, but under
 * one lock, with one timestamp, one write() to the perf map and one to
 * the jitdump (a writev() when code bytes repeat, see lib/jitdump.c).
 * index[i] gets the code index of code[i]; all are 0 when the session is
 * inactive or was closed meanwhile.
 *
 * All or nothing: when it returns 0 every function is in both files; on an
 * error none is, and neither file holds a part of the batch.  Errors are
 * those of jitperf_code_load_ex (-EINVAL names no function: the caller may
 * register them one by one to find it), and -E2BIG for more than
 * JITPERF__BATCH_MAX functions.
 */
#ifndef JITPERF_CODEBATCH_H
#define JITPERF_CODEBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "jitperf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define JITPERF__BATCH_MAX ((size_t)1 << 20)

JITPERF_API int jitperf__code_load_batch(jitperf *jp, const struct jitperf_code *code, size_t n,
					 uint64_t *index);

#ifdef __cplusplus
}
#endif
#endif /* JITPERF_CODEBATCH_H */
