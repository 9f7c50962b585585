/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The JITPERF* environment variables. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/*
 * Every JITPERF* variable is read here, with secure_getenv: in a program
 * that runs set-user-ID or set-group-ID (or gained file capabilities), the
 * environment is the caller's, and the caller must not choose what the
 * program writes where with its rights (JITPERF, JITPERF_DIR), nor make it
 * print paths on stderr (JITPERF_DEBUG).  There every variable reads as
 * unset: jitperf_default() stays inactive, and jitperf_open() does what its
 * options say.  Empty means unset too.
 */
const char *jp_getenv(const char *name)
{
	const char *s = secure_getenv(name);

	return s && *s ? s : NULL;
}

/*
 * Why the last JITPERF* variable read on this thread was refused, for the
 * one line the default session prints when the environment asked for
 * outputs it cannot have.  Per thread: each session is set up on the
 * thread that opens it.
 */
static __thread char env_reason[256];

void jp_env_error(const char *var, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	/* JITPERF's own value is named by the message's "JITPERF=..." already */
	if (strcmp(var, "JITPERF"))
		n = snprintf(env_reason, sizeof(env_reason), "%s: ", var);
	va_start(ap, fmt);
	vsnprintf(env_reason + n, sizeof(env_reason) - n, fmt, ap);
	va_end(ap);
	jp_debug("%s: %s", var, env_reason + n);
}

const char *jp_env_reason(void)
{
	return env_reason[0] ? env_reason : NULL;
}

void jp_env_reason_clear(void)
{
	env_reason[0] = 0;
}

static const struct {
	const char *word;
	unsigned    bits;
} output_words[] = {
	{ "perfmap", JITPERF_PERFMAP },
	{ "jitdump", JITPERF_JITDUMP },
	{ "trace",   JITPERF_TRACE },
	{ "stats",   JITPERF_STATS },
	{ "all",     JITPERF_PERFMAP | JITPERF_JITDUMP | JITPERF_TRACE | JITPERF_STATS },
	/* the perf map and the jitdump, held back until a recorder attaches */
	{ "standby", JITPERF_STANDBY | JITPERF_PERFMAP | JITPERF_JITDUMP },
};

/* "perfmap,jitdump" -> bits.  NULL or "" -> 0.  Spaces around words are allowed. */
int jp_parse_outputs(const char *s, unsigned *outputs)
{
	unsigned bits = 0;

	*outputs = 0;
	if (!s)
		return 0;
	while (*s) {
		size_t n, i;

		while (*s == ' ' || *s == ',')
			s++;
		n = strcspn(s, ", ");
		if (!n)
			break;
		for (i = 0; i < sizeof(output_words) / sizeof(output_words[0]); i++)
			if (strlen(output_words[i].word) == n && !memcmp(s, output_words[i].word, n))
				break;
		if (i == sizeof(output_words) / sizeof(output_words[0])) {
			jp_env_error("JITPERF", "unknown output '%.*s' (expected perfmap, jitdump, trace, stats, all or standby)",
				     (int)n, s);
			return -EINVAL;
		}
		bits |= output_words[i].bits;
		s += n;
	}
	*outputs = bits;
	return 0;
}

/* JITPERF_CLOCK: NULL, "", "tsc" or "monotonic". */
int jp_parse_clock(const char *s)
{
	if (!s || !*s || !strcmp(s, "tsc") || !strcmp(s, "monotonic"))
		return 0;
	jp_env_error("JITPERF_CLOCK", "'%s' is neither 'tsc' nor 'monotonic'", s);
	return -EINVAL;
}
