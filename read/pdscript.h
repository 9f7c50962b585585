/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Samples of a perf.data as `perf script` shows them and
 * stackcollapse-perf.pl folds them: each sample becomes the struct
 * ps_sample the perf script text parser (read/perfscript.h) makes of the
 * same sample, so everything downstream treats both inputs alike, but
 * without perf and without text in between.
 */
#ifndef JITPERF_PDSCRIPT_H
#define JITPERF_PDSCRIPT_H

#include <stdint.h>

#include "pdsession.h"
#include "perfscript.h"

struct pd_script_info {
	int      period;       /* every event records its period */
	int      monotonic;    /* every event is on CLOCK_MONOTONIC (perf record -k 1) */
	int      unwind;       /* call graphs need unwinding (--call-graph dwarf): not read */
	int      filtered;     /* samples of other events than the first were dropped */
	uint64_t samples;      /* handed to the callback */
	uint64_t lost;         /* samples the kernel lost (PERF_RECORD_LOST) */
	char     event[128];   /* the event samples were kept for */
};

/*
 * Read path ("-" = standard input) and call fn for each sample, in time
 * order, with flags PS_PID, PS_TID, PS_KERNEL, PS_JIT, PS_ADDRS as for
 * perf script text.  datadir: where to look for copies of perf maps and
 * jitted-*.so besides their recorded paths (NULL: path's directory).
 * Returns 0, fn's non-zero value, -EOPNOTSUPP with info->unwind set when
 * the call graphs are DWARF stack copies (nothing was read then), or
 * -errno with a one-line message naming the file and offset in err.
 */
int pd_script_read(const char *path, unsigned flags, const char *datadir, ps_sample_fn fn,
		   void *arg, struct pd_script_info *info, char *err, size_t errlen);

/* The same on an open file (pd_open, pd_open_mem); datadir NULL = nowhere else. */
int pd_script_read_file(struct pd_file *f, unsigned flags, const char *datadir, ps_sample_fn fn,
			void *arg, struct pd_script_info *info, char *err, size_t errlen);

/*
 * The samples unfolded, for readers that aggregate by symbol or object
 * (jitperf report, --pprof): each sample's places, leaf first, resolved as
 * for the folded stacks but not tidied.
 */
struct pd_frame {
	uint64_t      ip;         /* as recorded */
	struct pd_loc loc;        /* map, symbol and map-relative address; map NULL if unknown */
	int           relative;   /* a callchain entry (perf prints loc.addr), else the sample ip */
	int           kernel;
};

struct pd_raw {
	const struct pd_sample *sample;
	const char             *comm;
	const char             *event;
	uint64_t                period;   /* as folded stacks weigh it */
	const struct pd_frame  *frames;   /* leaf first */
	size_t                  nframes;
};

typedef int (*pd_raw_fn)(const struct pd_raw *s, void *arg);

int pd_raw_read(const char *path, const char *datadir, pd_raw_fn fn, void *arg,
		struct pd_script_info *info, char *err, size_t errlen);

#endif /* JITPERF_PDSCRIPT_H */
