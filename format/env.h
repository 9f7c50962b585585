/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The grammar of the values libjitperf reads from its environment
 * (libjitperf(3), ENVIRONMENT), shared by the library, which reads them
 * (lib/instr/settings.c), and `jitperf record`, which checks its options
 * before it sets them (tools/record/record.c): one parser, so that what
 * record accepts is what the library takes.  Header only, static inline:
 * it adds no symbol to either side, and depends on neither.
 *
 *   JITPERF_SAMPLE      N (1 call in N timed; 0: count only), auto, auto:R
 *   JITPERF_TRACE_MAX,  N, NK, NM, NG (KiB, MiB, GiB; "NKB", "NKiB" too)
 *   JITPERF_TRACE_RING
 *   JITPERF_TRACE_MIN   N (ns), Nns, Nus, Nms, Ns
 *
 * Each parser returns 0, or -EINVAL for a value outside the grammar or
 * beyond what its result holds.
 */
#ifndef JITPERF_FORMAT_ENV_H
#define JITPERF_FORMAT_ENV_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JPENV_SAMPLE_MAX  0xfffffffdu     /* the largest N of JITPERF_SAMPLE */
#define JPENV_RATE_MAX    1000000000u     /* the largest R of auto:R */

/* A decimal number without sign; *end gets what follows it. */
static inline int jpenv_number(const char *s, uint64_t *v, const char **end)
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

/*
 * JITPERF_SAMPLE: *automatic 1 for auto (*n the rate R, 0 if not given),
 * else 0 with *n the N of "1 call in N" (0: count only).
 */
static inline int jpenv_sample(const char *s, int *automatic, uint64_t *n)
{
	const char *end;

	*automatic = !strncmp(s, "auto", 4) && (s[4] == 0 || s[4] == ':');
	*n = 0;
	if (*automatic) {
		if (s[4] == 0)
			return 0;
		if (jpenv_number(s + 5, n, &end) || *end || *n == 0 || *n > JPENV_RATE_MAX)
			return -EINVAL;
		return 0;
	}
	if (jpenv_number(s, n, &end) || *end || *n > JPENV_SAMPLE_MAX)
		return -EINVAL;
	return 0;
}

/* JITPERF_TRACE_MAX and JITPERF_TRACE_RING: a size in bytes */
static inline int jpenv_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMG";
	const char *end, *u;
	uint64_t v;

	if (jpenv_number(s, &v, &end))
		return -EINVAL;
	if (*end) {
		if (!(u = strchr(units, *end)) || !*u ||
		    (end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B")))
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

/* JITPERF_TRACE_MIN: a duration in ns */
static inline int jpenv_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	const char *end;
	uint64_t v;

	if (jpenv_number(s, &v, &end))
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

#endif /* JITPERF_FORMAT_ENV_H */
