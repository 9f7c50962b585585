/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reader of jitperf-<pid>.stats files (read/stats_read.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats_read.h"

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
	unsigned version, pid, every;

	if (sscanf(line, "# jitperf-stats %u pid=%u clock=%15s sample_every=%u",
		   &version, &pid, s->clock, &every) != 4 || version != 1)
		return -1;
	s->pid = pid;
	s->sample_every = every;
	return 0;
}

static int parse_columns(struct stats_file *s, char *line)
{
	static const char *const fixed[] = { "function", "calls", "total_ns", "self_ns",
					     "min_ns", "mean_ns", "max_ns", "unbalanced" };
	char *field[8 + STATS_MAX_COUNTERS + 1];
	size_t n = split(line, field, 8 + STATS_MAX_COUNTERS + 1);

	if (n < 8 || n > 8 + STATS_MAX_COUNTERS)
		return -1;
	for (size_t i = 0; i < 8; i++)
		if (strcmp(field[i], fixed[i]))
			return -1;
	s->ncounters = n - 8;
	s->counters = calloc(s->ncounters ? s->ncounters : 1, sizeof(char *));
	if (!s->counters)
		return -ENOMEM;
	for (size_t i = 0; i < s->ncounters; i++)
		if (!(s->counters[i] = strdup(field[8 + i])))
			return -ENOMEM;
	return 0;
}

static int parse_row(struct stats_file *s, char *line, size_t *cap)
{
	char *field[8 + STATS_MAX_COUNTERS + 1];
	size_t n = split(line, field, 8 + STATS_MAX_COUNTERS + 1);
	struct stats_row *r;

	if (n != 8 + s->ncounters)
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
	{
		uint64_t *num[] = { &r->calls, &r->total_ns, &r->self_ns, &r->min_ns,
				    &r->mean_ns, &r->max_ns, &r->unbalanced };

		for (size_t i = 0; i < 7; i++)
			if (number(field[1 + i], num[i]) || *num[i] == STATS_NO_VALUE)
				return -1;
	}
	r->counters = calloc(s->ncounters ? s->ncounters : 1, sizeof(uint64_t));
	if (!r->counters)
		return -ENOMEM;
	for (size_t i = 0; i < s->ncounters; i++)
		if (number(field[8 + i], &r->counters[i])) {
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
	ssize_t len;
	FILE *fp;

	*out = NULL;
	fp = fopen(path, "r");
	if (!fp) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", path, strerror(-err));
		return err;
	}
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
		else if (state == 1 && line[0] == '#')
			continue;
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
		static const char *const what[] = { "not a jitperf-stats 1 header",
			"bad column header", "bad row" };

		if (err == -2)
			snprintf(errbuf, errlen, "%s: line %zu: file ends before the column header",
				 path, lineno + 1);
		else if (err < -2)
			snprintf(errbuf, errlen, "%s: line %zu: %s", path, lineno, strerror(-err));
		else
			snprintf(errbuf, errlen, "%s: line %zu: %s", path, lineno, what[state]);
		stats_free(s);
		return err == -1 || err == -2 ? -EINVAL : err;
	}
	*out = s;
	return 0;
}
