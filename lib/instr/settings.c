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
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "instr.h"
#include "lib/core.h"

/* secure_getenv, through jp_getenv: set-ID programs take nothing from it */
static const char *env(const char *name)
{
	const char *s = jp_getenv(name);

	return s && *s ? s : NULL;
}

/* A decimal number without sign; end gets what follows it. */
static int number(const char *s, uint64_t *v, const char **end)
{
	char *e;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &e, 10);
	if (errno)
		return -EINVAL;
	*end = e;
	return 0;
}

static int jp_parse_sample(const char *s, unsigned *every, unsigned *rate)
{
	const char *end;
	uint64_t v;

	if (!strncmp(s, "auto", 4) && (s[4] == 0 || s[4] == ':')) {
		*every = JITPERF_SAMPLE_ADAPTIVE;
		if (s[4] == 0)
			return 0;
		if (number(s + 5, &v, &end) || *end || v == 0 || v > 1000000000u)
			goto bad;
		*rate = (unsigned)v;
		return 0;
	}
	if (number(s, &v, &end) || *end || v > 0xfffffffdu)
		goto bad;
	*every = v ? (unsigned)v : JITPERF_SAMPLE_NONE;
	return 0;
bad:
	jp_env_error("JITPERF_SAMPLE", "'%s' is not N, 0, auto or auto:R", s);
	return -EINVAL;
}

static int jp_parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMG";
	const char *end, *u;
	uint64_t v;

	if (number(s, &v, &end))
		return -EINVAL;
	if (*end) {
		if (!(u = strchr(units, *end)) || !*u || (end[1] && strcmp(end + 1, "iB") &&
							   strcmp(end + 1, "B")))
			return -EINVAL;
		for (int i = 0; i <= u - units; i++) {
			if (v > UINT64_MAX / 1024)
				return -EINVAL;
			v *= 1024;
		}
	}
	*bytes = v;
	return 0;
}

static int jp_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	const char *end;
	uint64_t v;

	if (number(s, &v, &end))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			if (v > UINT64_MAX / units[i].ns)
				return -EINVAL;
			*ns = v * units[i].ns;
			return 0;
		}
	return -EINVAL;
}

int jp_instr_setup(struct jitperf *jp, const struct jitperf_options *o)
{
	unsigned every = o->sample_every, rate = o->timed_per_sec;
	const char *s;

	if (!every && (s = env("JITPERF_SAMPLE")) && jp_parse_sample(s, &every, &rate))
		return -EINVAL;
	jp->sample_every = every ? every : JITPERF_SAMPLE_ADAPTIVE;
	jp->timed_per_sec = rate ? rate : JP_DEFAULT_RATE;

	jp->trace_max = o->trace_max;
	if (!jp->trace_max && (s = env("JITPERF_TRACE_MAX"))) {
		if (jp_parse_size(s, &jp->trace_max)) {
			jp_env_error("JITPERF_TRACE_MAX", "'%s' is not a size (N, NK, NM or NG)", s);
			return -EINVAL;
		}
		if (!jp->trace_max)
			jp->trace_max = JITPERF_UNLIMITED;
	}
	if (!jp->trace_max)
		jp->trace_max = JP_DEFAULT_TRACE_MAX;

	jp->trace_ring = o->trace_ring;
	if (!jp->trace_ring && (s = env("JITPERF_TRACE_RING")) && jp_parse_size(s, &jp->trace_ring)) {
		jp_env_error("JITPERF_TRACE_RING", "'%s' is not a size (N, NK, NM or NG)", s);
		return -EINVAL;
	}
	jp->trace_min_ns = o->trace_min_ns;
	if (!jp->trace_min_ns && (s = env("JITPERF_TRACE_MIN")) &&
	    jp_parse_duration(s, &jp->trace_min_ns)) {
		jp_env_error("JITPERF_TRACE_MIN", "'%s' is not a duration (N, Nns, Nus, Nms or Ns)", s);
		return -EINVAL;
	}
	return 0;
}
