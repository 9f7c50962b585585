/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report: whether a statistics file's figures agree with each
 * other, and how far each can be trusted.
 *
 * Besides its rows, a statistics file says per row the error of its total
 * ("# error:") and the estimated time of the callees it was seen to call
 * ("# callees:"), and how long its threads could run ("# check:";
 * jitperf-stats(5)).  A process's self times cannot add up to more than
 * that, and no function's callees can take longer than the function
 * itself: each beyond its error is said in a warning, as figures that
 * contradict each other are wrong somewhere, and a user must not trust
 * them to choose what to optimize.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The values of "# what: total_ns=a,b,-,..." into v[0..n): -1 for "-". */
static void list_of(const char *line, double *v, size_t n)
{
	const char *p = strstr(line, "total_ns=");

	if (!p)
		return;
	p += strlen("total_ns=");
	for (size_t i = 0; i < n && *p; i++) {
		char *end;

		if (*p == '-') {
			end = (char *)p + 1;
		} else {
			double x = strtod(p, &end);

			if (end == p)
				return;
			v[i] = x;
		}
		if (*end != ',')
			return;         /* the last value, or not a list */
		p = end + 1;
	}
}

int report_check_read(const char *path, struct report_check *c, size_t nrows)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	memset(c, 0, sizeof(*c));
	c->err_ns = malloc((nrows ? nrows : 1) * sizeof(double));
	c->callee_ns = malloc((nrows ? nrows : 1) * sizeof(double));
	if (!c->err_ns || !c->callee_ns) {
		report_check_free(c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nrows; i++)
		c->err_ns[i] = c->callee_ns[i] = -1;
	/* stats_read read it whole a moment ago: only a race makes this fail,
	 * and then the figures go unchecked, as an older file's do */
	f = fopen(path, "r");
	if (!f)
		return 0;
	while ((len = getline(&line, &cap, f)) > 0 && line[0] == '#') {
		unsigned long long wall;
		unsigned threads;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (!strncmp(line, "# error:", 8))
			list_of(line, c->err_ns, nrows);
		else if (!strncmp(line, "# callees:", 10))
			list_of(line, c->callee_ns, nrows);
		else if (sscanf(line, "# check: wall_ns=%llu threads=%u", &wall, &threads) == 2) {
			c->run_ns = (double)wall * threads;
			c->has_run = 1;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

void report_check_free(struct report_check *c)
{
	free(c->err_ns);
	free(c->callee_ns);
	c->err_ns = c->callee_ns = NULL;
}

static int warn(struct table *t, char *text)
{
	char **w;

	if (!text)
		return -ENOMEM;
	w = realloc(t->warnings, (t->nwarnings + 1) * sizeof(*w));
	if (!w) {
		free(text);
		return -ENOMEM;
	}
	t->warnings = w;
	w[t->nwarnings++] = text;
	return 0;
}

/* A message, allocated; NULL: no memory. */
static char *say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *say(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

/*
 * The checks of one process's figures (s, with c beside its rows).  A
 * figure is off only beyond twice its error and the rounding of the
 * probes' resolution over its calls.  0 or -ENOMEM.
 */
int report_check_run(struct table *t, const struct stats_file *s, const struct report_check *c)
{
	double res = s->has_probes ? s->probe_ns[STATS_COST_SELF] : 0;
	double self = 0, var = 0;
	int err = 0;

	for (size_t i = 0; i < s->nrows && !err; i++) {
		const struct stats_row *r = &s->rows[i];
		double e = c->err_ns[i] > 0 ? c->err_ns[i] : 0;

		if (!r->timed || r->total_ns == STATS_NO_VALUE)
			continue;
		if (r->self_ns != STATS_NO_VALUE) {
			self += (double)r->self_ns;
			var += e * e;
		}
		if (c->callee_ns[i] >= 0 &&
		    c->callee_ns[i] > (double)r->total_ns + 2 * e + res * (double)r->calls)
			err = warn(t, say("%s (pid %" PRIu32 "): its callees take %.3f ms, longer than "
					  "its own %.3f ms", r->name, s->pid, c->callee_ns[i] / 1e6,
					  (double)r->total_ns / 1e6));
	}
	if (!err && c->has_run && self > c->run_ns + 2 * sqrt(var))
		err = warn(t, say("pid %" PRIu32 ": self times add up to %.3f ms, more than its "
				  "threads ran (%.3f ms)", s->pid, self / 1e6, c->run_ns / 1e6));
	return err;
}

void report_print_warnings(const struct table *t)
{
	for (size_t i = 0; i < t->nwarnings; i++)
		printf("# warning: inconsistent figures: %s\n", t->warnings[i]);
}
