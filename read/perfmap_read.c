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
#include "pdsymtree.h"
#include "util.h"

/*
 * perf 6.1 (dso__load_perf_map): a number, one separator, a number, one
 * separator, the name; a line whose rest after either number is two bytes
 * or less is skipped.  len counts every byte of the line, NULs too; the
 * numbers and the name end at a NUL.
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

struct by_line {
	size_t   line;
	uint32_t node;      /* its index in the sorted syms */
};

static int line_cmp(const void *a, const void *b)
{
	const struct by_line *x = a, *y = b;

	return x->line < y->line ? -1 : x->line > y->line;
}

/* perf's lookup compares with START + SIZE as a u64, wrapped as it may be */
static void node_range(const void *ctx, uint32_t node, uint64_t *start, uint64_t *end)
{
	const struct pm_sym *s = &((const struct pm_map *)ctx)->syms[node];

	*start = s->start;
	*end = s->start + s->size;
}

/*
 * perf's tree: the entries inserted in the order of their lines, each
 * rebalanced as it comes.  The nodes are the indices of the sorted syms;
 * -ENOMEM, or -EFBIG beyond what a node number holds.
 */
static int build_tree(struct pm_map *m)
{
	struct by_line *order;

	if (!m->nsyms)
		return 0;
	if (m->nsyms >= PD_SYMTREE_NONE)
		return -EFBIG;
	if (!(m->tree = pd_symtree_new((uint32_t)m->nsyms)))
		return -ENOMEM;
	if (!(order = malloc(m->nsyms * sizeof(*order))))
		return -ENOMEM;
	for (size_t i = 0; i < m->nsyms; i++)
		order[i] = (struct by_line){ m->syms[i].line, (uint32_t)i };
	qsort(order, m->nsyms, sizeof(*order), line_cmp);
	for (size_t i = 0; i < m->nsyms; i++)
		pd_symtree_insert(m->tree, order[i].node, m->syms[order[i].node].start);
	free(order);
	return 0;
}

/* path, if it is a regular file: a FIFO or a terminal would block the reader */
static int slurp_regular(const char *path, char **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else
		err = rd_slurp(fd, NULL, 0, 0, (unsigned char **)buf, len);
	close(fd);
	return err;
}

int pm_read(const char *path, struct pm_map **out, char *errbuf, size_t errlen)
{
	struct pm_map *m;
	size_t len = 0, cap = 0, line = 0;
	char *buf = NULL, *l, *end;
	int err;

	*out = NULL;
	err = slurp_regular(path, &buf, &len);
	if (err) {
		snprintf(errbuf, errlen, "%s: %s", path,
			 err == -EINVAL ? "not a regular file" : strerror(-err));
		return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		free(buf);
		err = -ENOMEM;
		goto fail;
	}
	m->names = buf;
	for (l = buf, end = buf + len; l < end;) {
		char *nl = memchr(l, '\n', (size_t)(end - l)), *name;
		/* getline's line, less its last byte (the newline, or the last
		 * byte of a last line without one); bytes past it start the next */
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l) - 1;
		char *next = nl ? nl + 1 : end;
		uint64_t start, size;

		l[n] = '\0';
		line++;
		if (!parse_line(l, n, &start, &size, &name)) {
			m->skipped++;
			l = next;
			continue;
		}
		if (m->nsyms == cap) {
			struct pm_sym *s;

			cap = cap ? cap * 2 : 256;
			s = realloc(m->syms, cap * sizeof(*s));
			if (!s) {
				err = -ENOMEM;
				goto fail;
			}
			m->syms = s;
		}
		m->syms[m->nsyms++] = (struct pm_sym){ start, size, name, line };
		l = next;
	}
	if (m->nsyms)
		qsort(m->syms, m->nsyms, sizeof(m->syms[0]), by_start);
	err = build_tree(m);
	if (err)
		goto fail;
	*out = m;
	return 0;
fail:
	pm_free(m);
	snprintf(errbuf, errlen, "%s: %s", path,
		 err == -EFBIG ? "more entries than a perf map reader holds" : strerror(-err));
	return err;
}

void pm_free(struct pm_map *m)
{
	if (!m)
		return;
	pd_symtree_free(m->tree);
	free(m->syms);
	free(m->names);
	free(m);
}

const struct pm_sym *pm_find(const struct pm_map *m, uint64_t addr)
{
	uint32_t node;

	if (!m->nsyms)
		return NULL;
	node = pd_symtree_find(m->tree, addr, node_range, m);
	return node == PD_SYMTREE_NONE ? NULL : &m->syms[node];
}

struct collect {
	const struct pm_map *m;
	struct pm_piece     *p;
	size_t               n;
};

static void add_piece(void *ctx, uint32_t node, uint64_t first, uint64_t last)
{
	struct collect *c = ctx;

	if (last == UINT64_MAX) {       /* its end would be 2^64 */
		if (first == last)
			return;
		last--;
	}
	c->p[c->n++] = (struct pm_piece){ first, last + 1, &c->m->syms[node] };
}

int pm_pieces(const struct pm_map *m, struct pm_piece **pieces, size_t *n)
{
	struct collect c = { m, NULL, 0 };

	*pieces = NULL;
	*n = 0;
	if (!m->nsyms)
		return 0;
	/* a node has one range of addresses at most: no more pieces than entries */
	if (!(c.p = malloc(m->nsyms * sizeof(*c.p))))
		return -ENOMEM;
	pd_symtree_spans(m->tree, node_range, m, add_piece, &c);
	*pieces = c.p;
	*n = c.n;
	return 0;
}
