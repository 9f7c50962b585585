/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reader of perf maps (read/perfmap_read.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmap_read.h"
#include "util.h"

/*
 * perf 6.1 (dso__load_perf_map): a number, one separator, a number, one
 * separator, the name; a line whose rest after either number is two bytes
 * or less is skipped.
 */
static int parse_line(char *l, size_t len, uint64_t *start, uint64_t *size, char **name)
{
	char *p;
	size_t n;

	*start = strtoull(l, &p, 16);
	n = (size_t)(p - l) + 1;
	if (n + 2 >= len)
		return 0;
	*size = strtoull(l + n, &p, 16);
	n = (size_t)(p - l) + 1;
	if (n + 2 >= len)
		return 0;
	*name = l + n;
	return 1;
}

static int by_start(const void *a, const void *b)
{
	const struct pm_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

int pm_read(const char *path, struct pm_map **out, char *errbuf, size_t errlen)
{
	struct pm_map *m;
	size_t len = 0, cap = 0, line = 0;
	char *buf = NULL, *l, *end;
	int err;

	*out = NULL;
	err = rd_slurp_path(path, 0, (unsigned char **)&buf, &len);
	if (err) {
		snprintf(errbuf, errlen, "%s: %s", path, strerror(-err));
		return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		free(buf);
		goto nomem;
	}
	m->names = buf;
	for (l = buf, end = buf + len; l < end; l += strlen(l) + 1) {
		char *nl = memchr(l, '\n', (size_t)(end - l)), *name;
		uint64_t start, size;

		/* a NUL where a line begins: the zero-filled tail of a map whose
		 * writer did not close it (libjitperf grows it ahead); its last
		 * line ended at the first NUL */
		if (!*l && line)
			break;
		if (nl)
			*nl = '\0';
		line++;
		if (!parse_line(l, strlen(l), &start, &size, &name)) {
			m->skipped++;
			continue;
		}
		if (m->nsyms == cap) {
			struct pm_sym *s;

			cap = cap ? cap * 2 : 256;
			s = realloc(m->syms, cap * sizeof(*s));
			if (!s) {
				pm_free(m);
				goto nomem;
			}
			m->syms = s;
		}
		m->syms[m->nsyms++] = (struct pm_sym){ start, size, name, line };
	}
	if (m->nsyms)
		qsort(m->syms, m->nsyms, sizeof(m->syms[0]), by_start);
	*out = m;
	return 0;
nomem:
	snprintf(errbuf, errlen, "%s: %s", path, strerror(ENOMEM));
	return -ENOMEM;
}

void pm_free(struct pm_map *m)
{
	if (!m)
		return;
	free(m->syms);
	free(m->names);
	free(m);
}

const struct pm_sym *pm_find(const struct pm_map *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsyms;
	const struct pm_sym *s;

	/* the first symbol starting above addr; the one before it is the candidate */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &m->syms[lo - 1];
	/* perf: a symbol covers [start, start + size), one of size 0 its start alone */
	if (addr == s->start || addr - s->start < s->size)
		return s;
	return NULL;
}
