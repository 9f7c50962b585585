/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The instrumentation settings of a session: how calls are sampled for
 * timing and how big the trace may grow, from struct jitperf_options,
 * else from the environment, else the defaults:
 *
 *   JITPERF_SAMPLE      N (about 1 call in N of each function timed; 1:
 *                       every call), 0 (count only), auto or auto:R
 *                       (adaptive, R timed calls per second per thread);
 *                       default auto:10000
 *   JITPERF_TRACE_MAX   size of the trace file (K, M, G: KiB, MiB, GiB;
 *                       0: up to 4 GiB); default 32M
 *   JITPERF_TRACE_RING  keep only the last SIZE of each thread's calls
 *   JITPERF_TRACE_MIN   timed calls shorter than this (ns, or with us, ms,
 *                       s) are not traced
 *
 * The values' grammar is format/env.h's, which `jitperf record` checks
 * its options with.
 */
#include "config.h"

#include <errno.h>

#include "instr.h"
#include "format/env.h"
#include "lib/core.h"

/* secure_getenv, through jp_getenv: set-ID programs take nothing from it */
static const char *env(const char *name)
{
	const char *s = jp_getenv(name);

	return s && *s ? s : NULL;
}

/* JITPERF_SAMPLE, said when bad (the grammar is format/env.h's) */
static int parse_sample(const char *s, unsigned *every, unsigned *rate)
{
	uint64_t n;
	int automatic;

	if (jpenv_sample(s, &automatic, &n)) {
		jp_env_error("JITPERF_SAMPLE", "'%s' is not N, 0, auto or auto:R", s);
		return -EINVAL;
	}
	if (automatic) {
		*every = JITPERF_SAMPLE_ADAPTIVE;
		if (n)
			*rate = (unsigned)n;
	} else {
		*every = n ? (unsigned)n : JITPERF_SAMPLE_NONE;
	}
	return 0;
}

int jp_instr_setup(struct jitperf *jp, const struct jitperf_options *o)
{
	unsigned every = o->sample_every, rate = o->timed_per_sec;
	const char *s;

	if (!every && (s = env("JITPERF_SAMPLE")) && parse_sample(s, &every, &rate))
		return -EINVAL;
	jp->sample_every = every ? every : JITPERF_SAMPLE_ADAPTIVE;
	jp->timed_per_sec = rate ? rate : JP_DEFAULT_RATE;

	jp->trace_max = o->trace_max;
	if (!jp->trace_max && (s = env("JITPERF_TRACE_MAX"))) {
		if (jpenv_size(s, &jp->trace_max)) {
			jp_env_error("JITPERF_TRACE_MAX", "'%s' is not a size (N, NK, NM or NG)", s);
			return -EINVAL;
		}
		if (!jp->trace_max)
			jp->trace_max = JITPERF_UNLIMITED;
	}
	if (!jp->trace_max)
		jp->trace_max = JP_DEFAULT_TRACE_MAX;

	jp->trace_ring = o->trace_ring;
	if (!jp->trace_ring && (s = env("JITPERF_TRACE_RING")) && jpenv_size(s, &jp->trace_ring)) {
		jp_env_error("JITPERF_TRACE_RING", "'%s' is not a size (N, NK, NM or NG)", s);
		return -EINVAL;
	}
	jp->trace_min_ns = o->trace_min_ns;
	if (!jp->trace_min_ns && (s = env("JITPERF_TRACE_MIN")) &&
	    jpenv_duration(s, &jp->trace_min_ns)) {
		jp_env_error("JITPERF_TRACE_MIN", "'%s' is not a duration (N, Nns, Nus, Nms or Ns)", s);
		return -EINVAL;
	}
	return 0;
}
