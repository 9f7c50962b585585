/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reader of jitperf-<pid>.stats files (read/stats_read.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats_read.h"
#include "util.h"

#define STATS_MAX_COUNTERS 64

void stats_free(struct stats_file *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nrows; i++) {
		free(s->rows[i].name);
		free(s->rows[i].counters);
	}
	for (size_t i = 0; i < s->ncounters; i++)
		free(s->counters[i]);
	free(s->counters);
	free(s->rows);
	free(s);
}

/* Split line at tabs in place; returns the number of fields (at most max). */
static size_t split(char *line, char **field, size_t max)
{
	size_t n = 0;

	for (char *p = line; n < max; p++) {
		field[n++] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p = '\0';
	}
	return n;
}

static int number(const char *s, uint64_t *v)
{
	char *end;

	if (!strcmp(s, "-")) {
		*v = STATS_NO_VALUE;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_magic(struct stats_file *s, const char *line)
{
	unsigned version, pid, every, rate;
	char sample[32];

	if (sscanf(line, "# jitperf-stats %u pid=%u clock=%15s sample_every=%u",
		   &version, &pid, s->clock, &every) == 4 && version == 1) {
		s->version = 1;
		s->pid = pid;
		s->sample_every = every ? every : 1;
		return 0;
	}
	if (sscanf(line, "# jitperf-stats %u pid=%u clock=%15s sample=%31s",
		   &version, &pid, s->clock, sample) != 4 || version != 2)
		return -1;
	s->version = 2;
	s->pid = pid;
	if (!strcmp(sample, "none"))
		s->sample_every = STATS_NONE;
	else if (sscanf(sample, "auto:%u", &rate) == 1 && rate) {
		s->sample_every = STATS_ADAPTIVE;
		s->timed_per_sec = rate;
	} else if (sscanf(sample, "%u", &every) == 1 && every)
		s->sample_every = every;
	else
		return -1;
	return 0;
}

/* The value of key in a "# what: key=value key=value" line, or NULL. */
static const char *value_of(const char *line, const char *key)
{
	size_t len = strlen(key);

	for (const char *p = strchr(line, ':'); p && *p; p += strcspn(p, " ")) {
		p += strspn(p, ": ");
		if (!strncmp(p, key, len) && p[len] == '=')
			return p + len + 1;
	}
	return NULL;
}

static int get_u64(const char *line, const char *key, uint64_t *v)
{
	const char *p = value_of(line, key);
	char *end;

	if (!p || *p < '0' || *p > '9')
		return -1;
	errno = 0;
	*v = strtoull(p, &end, 10);
	return errno || (*end && *end != ' ') ? -1 : 0;
}

static int get_double(const char *line, const char *key, double *v)
{
	const char *p = value_of(line, key);
	char *end;

	if (!p || *p < '0' || *p > '9')
		return -1;
	*v = strtod(p, &end);
	return *end && *end != ' ' ? -1 : 0;
}

/* A "# probes:", "# run:" or "# trace:" line of version 2; others are comments. */
static int parse_comment(struct stats_file *s, const char *line)
{
	static const char *const cost[] = { "self_ns", "lib_ns", "inline_ns", "timed_ns", "framed_ns" };
	int bad = 0;

	if (s->version < 2)
		return 0;
	if (!strncmp(line, "# probes:", 9)) {
		for (int i = 0; i < STATS_NCOSTS; i++)
			bad |= get_double(line, cost[i], &s->probe_ns[i]);
		s->has_probes = !bad;
	} else if (!strncmp(line, "# run:", 6)) {
		bad |= get_u64(line, "calls", &s->calls) | get_u64(line, "lib_calls", &s->lib_calls) |
		       get_u64(line, "inline_calls", &s->inline_calls) |
		       get_u64(line, "framed_calls", &s->framed_calls) |
		       get_u64(line, "timed", &s->timed) | get_u64(line, "cpu_ns", &s->cpu_ns) |
		       get_double(line, "probe_ns", &s->run_probe_ns);
		s->has_run = !bad;
	} else if (!strncmp(line, "# trace:", 8)) {
		bad |= get_u64(line, "max", &s->trace_max) | get_u64(line, "ring", &s->trace_ring) |
		       get_u64(line, "min_ns", &s->trace_min_ns) | get_u64(line, "traced", &s->traced) |
		       get_u64(line, "dropped_full", &s->dropped_full) |
		       get_u64(line, "dropped_short", &s->dropped_short) |
		       get_u64(line, "dropped_ring", &s->dropped_ring);
		s->has_trace = !bad;
	}
	return bad ? -1 : 0;
}

/* Columns before the counters: version 2 has "timed" after "calls". */
static size_t nfixed(const struct stats_file *s)
{
	return s->version == 1 ? 8 : 9;
}

static int parse_columns(struct stats_file *s, char *line)
{
	static const char *const v1[] = { "function", "calls", "total_ns", "self_ns",
					  "min_ns", "mean_ns", "max_ns", "unbalanced" };
	static const char *const v2[] = { "function", "calls", "timed", "total_ns", "self_ns",
					  "min_ns", "mean_ns", "max_ns", "unbalanced" };
	const char *const *fixed = s->version == 1 ? v1 : v2;
	size_t nf = nfixed(s);
	char *field[9 + STATS_MAX_COUNTERS + 1];
	size_t n = split(line, field, 9 + STATS_MAX_COUNTERS + 1);

	if (n < nf || n > nf + STATS_MAX_COUNTERS)
		return -1;
	for (size_t i = 0; i < nf; i++)
		if (strcmp(field[i], fixed[i]))
			return -1;
	s->ncounters = n - nf;
	s->counters = calloc(s->ncounters ? s->ncounters : 1, sizeof(char *));
	if (!s->counters)
		return -ENOMEM;
	for (size_t i = 0; i < s->ncounters; i++)
		if (!(s->counters[i] = strdup(field[nf + i])))
			return -ENOMEM;
	return 0;
}

static int parse_row(struct stats_file *s, char *line, size_t *cap)
{
	char *field[9 + STATS_MAX_COUNTERS + 1];
	size_t n = split(line, field, 9 + STATS_MAX_COUNTERS + 1), nf = nfixed(s);
	struct stats_row *r;

	if (n != nf + s->ncounters)
		return -1;
	if (s->nrows == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct stats_row *rows = realloc(s->rows, c * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		s->rows = rows;
		*cap = c;
	}
	r = &s->rows[s->nrows];
	memset(r, 0, sizeof(*r));
	if (s->version == 1) {
		uint64_t *num[] = { &r->calls, &r->total_ns, &r->self_ns, &r->min_ns,
				    &r->mean_ns, &r->max_ns, &r->unbalanced };

		for (size_t i = 0; i < 7; i++)
			if (number(field[1 + i], num[i]) || *num[i] == STATS_NO_VALUE)
				return -1;
		r->timed = r->calls;    /* version 1 timed every call */
	} else {
		uint64_t *num[] = { &r->calls, &r->timed, &r->total_ns, &r->self_ns, &r->min_ns,
				    &r->mean_ns, &r->max_ns, &r->unbalanced };

		for (size_t i = 0; i < 8; i++) {
			/* times are "-" exactly when no call was timed; self may
			 * be "-" (not known) either way */
			int dash = i >= 2 && i <= 6 && !r->timed;

			if (number(field[1 + i], num[i]) ||
			    ((*num[i] == STATS_NO_VALUE) != dash && !(i == 3 && r->timed)))
				return -1;
		}
		if (r->timed > r->calls)
			return -1;
	}
	r->counters = calloc(s->ncounters ? s->ncounters : 1, sizeof(uint64_t));
	if (!r->counters)
		return -ENOMEM;
	for (size_t i = 0; i < s->ncounters; i++)
		if (number(field[nf + i], &r->counters[i])) {
			free(r->counters);
			return -1;
		}
	if (!(r->name = strdup(field[0]))) {
		free(r->counters);
		return -ENOMEM;
	}
	s->nrows++;
	return 0;
}

int stats_read(const char *path, struct stats_file **out, char *errbuf, size_t errlen)
{
	struct stats_file *s;
	char *line = NULL;
	size_t linecap = 0, cap = 0, lineno = 0;
	int state = 0, err = 0;   /* 0 magic, 1 comments/columns, 2 rows */
	char bad[16] = "";
	ssize_t len;
	FILE *fp;

	*out = NULL;
	err = rd_open_regular(path, RD_MAX_FILE, NULL);
	fp = err < 0 ? NULL : fdopen(err, "r");
	if (!fp) {
		if (err >= 0) {
			close(err);
			err = -errno;
		}
		snprintf(errbuf, errlen, "%s: %s", path, rd_strerror(err));
		return err;
	}
	err = 0;
	s = calloc(1, sizeof(*s));
	if (!s) {
		fclose(fp);
		snprintf(errbuf, errlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	while ((len = getline(&line, &linecap, fp)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (memchr(line, '\0', (size_t)len)) {
			err = -1;
			break;
		}
		if (state == 0)
			err = parse_magic(s, line);
		else if (state == 1 && line[0] == '#') {
			if (!(err = parse_comment(s, line)))
				continue;
			snprintf(bad, sizeof(bad), "%.*s", (int)strcspn(line, ":"), line);
			err = -3;
		}
		else if (state == 1)
			err = parse_columns(s, line);
		else
			err = parse_row(s, line, &cap);
		if (err)
			break;
		state += state < 2;
	}
	if (!err && state < 2)
		err = -2;
	free(line);
	if (!err && ferror(fp))
		err = -EIO;
	fclose(fp);
	if (err) {
		static const char *const what[] = { "not a jitperf-stats 1 or 2 header",
			"bad column header", "bad row" };

		if (err == -3)
			snprintf(errbuf, errlen, "%s: line %zu: bad '%s:' line", path, lineno, bad);
		else if (err == -2)
			snprintf(errbuf, errlen, "%s: line %zu: file ends before the column header",
				 path, lineno + 1);
		else if (err < -3)
			snprintf(errbuf, errlen, "%s: line %zu: %s", path, lineno, strerror(-err));
		else
			snprintf(errbuf, errlen, "%s: line %zu: %s", path, lineno, what[state]);
		stats_free(s);
		return err >= -3 ? -EINVAL : err;
	}
	*out = s;
	return 0;
}

static uint64_t larger(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void stats_sum_add(struct stats_sum *sum, const struct stats_file *s)
{
	sum->functions += s->nrows;
	if (s->has_run) {
		sum->has_run = 1;
		sum->calls += s->calls;
		sum->timed += s->timed;
		sum->cpu_ns += s->cpu_ns;
		sum->run_probe_ns += s->run_probe_ns;
	}
	if (s->has_trace) {
		sum->has_trace = 1;
		sum->traced += s->traced;
		sum->dropped_full += s->dropped_full;
		sum->dropped_short += s->dropped_short;
		sum->dropped_ring += s->dropped_ring;
		sum->trace_max = larger(sum->trace_max, s->trace_max);
		sum->trace_ring = larger(sum->trace_ring, s->trace_ring);
		sum->trace_min_ns = larger(sum->trace_min_ns, s->trace_min_ns);
	}
}
