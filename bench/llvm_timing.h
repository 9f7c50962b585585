/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/llvm_timing.h - a JIT event listener that times two others: each
 * loaded object goes to both, in turns first and second (so neither always
 * finds the object in a warm cache), and the time of each call is kept per
 * object.
 */
#ifndef BENCH_LLVM_TIMING_H
#define BENCH_LLVM_TIMING_H

#include <stddef.h>
#include <llvm-c/Types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bench_lap {
	double ns[2];           /* in listener a, in listener b: CLOCK_MONOTONIC */
	double cpu[2];          /* the same in CPU time of the whole process (all threads) */
};

/*
 * The listener to register: laps[*n] is filled for each object loaded,
 * up to cap objects.  Never freed.
 */
LLVMJITEventListenerRef bench_timed(LLVMJITEventListenerRef a, LLVMJITEventListenerRef b,
				    struct bench_lap *laps, size_t cap, size_t *n);

/*
 * The floor of a listener that writes a perf map and a jitdump: for each
 * object, one write() of map_len bytes to map_fd (none when map_len is 0)
 * and one of dump_len bytes to dump_fd, and nothing else.  Never freed.
 */
LLVMJITEventListenerRef bench_floor(int map_fd, size_t map_len, int dump_fd, size_t dump_len);

#ifdef __cplusplus
}
#endif
#endif
