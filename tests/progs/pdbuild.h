/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small perf.data of known content, built byte by byte as perf lays it
 * out, for the reader's unit tests and as the perf.data fuzzer's seed:
 *
 *   one cpu-clock event (EVENT_DESC "cpu-clock", ids 7 and 8), sample_type
 *   IP|TID|TIME|CALLCHAIN|ID|PERIOD, sample_id_all; records COMM 10/10
 *   "prog", MMAP2 10/10 //anon r-x at 0x400000 (perf map of pid 10), FORK
 *   10 -> 11, COMM 11/11 "child", a SAMPLE at t=300 of 10/10 (callchain
 *   USER, 0x400150, 0x400050; period 7) written before a SAMPLE at t=200 of
 *   11/11 (USER, 0x400050; period 5), LOST 3; features CMDLINE
 *   "perf record prog" and BUILD_ID of /bin/prog.
 *
 * The perf map PDB_MAP (write it as DIR/perf-10.map) names 0x400000-0x400100
 * fn_a and 0x400100-0x400300 fn_b.
 */
#ifndef JITPERF_PDBUILD_H
#define JITPERF_PDBUILD_H

#include <stddef.h>
#include <stdint.h>

#define PDB_MAP "400000 100 fn_a\n400100 200 fn_b\n"

/* The file (pipe: perf record -o - layout), malloc'ed, its size in *len; NULL on ENOMEM. */
unsigned char *pdb_build(int pipe, size_t *len);
/* The same with n more samples of 11/11 after the others, at times[i] with period i + 1. */
unsigned char *pdb_build_times(int pipe, const uint64_t *times, size_t n, size_t *len);

#endif
