/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Between libjitperf and libjitperf-llvm only: not part of the API, not
 * installed (its one symbol is exported for libjitperf-llvm.so).
 *
 * jitperf__code_load_later registers code as jitperf_code_load_ex does --
 * its perf map line, its jitdump CODE_LOAD with the code bytes, its index,
 * all before it returns -- but without its source lines and unwind info
 * (c's lines and eh_frame are not read).  Those come from later->fill,
 * called once on the thread that writes the jitdump out (libjitperf's
 * flusher, a thread whose record finds the ring full, or jitperf_close),
 * which sets c->lines, c->nlines, c->eh_frame and c->eh_frame_len (c->addr
 * and c->len are the code's); they must stay valid until later->done.
 * The records made go in just before the CODE_LOAD, with its timestamp.
 * later->done is called once in every case (maybe before this returns,
 * maybe without fill: the session writes no jitdump, or the records were
 * not needed), on any of those threads.  A process killed in between
 * keeps the function (its name, its code) without lines or unwind info.
 *
 * Why: reading an object's DWARF and .eh_frame is most of what a JIT
 * would otherwise wait for in LLVM's listener callback.
 */
#ifndef JITPERF_LATER_H
#define JITPERF_LATER_H

#include "jitperf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jitperf__later {
	int  (*fill)(struct jitperf__later *later, struct jitperf_code *c);
	void (*done)(struct jitperf__later *later);
};

/* 0, or the errors of jitperf_code_load_ex (-EINVAL for a NULL jp, c or later) */
JITPERF_API int jitperf__code_load_later(jitperf *jp, const struct jitperf_code *c,
					 struct jitperf__later *later, uint64_t *index);

#ifdef __cplusplus
}
#endif
#endif /* JITPERF_LATER_H */
