/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Source lines of a loaded object, read with libdw from its relocated
 * image.  Every row of every line table is kept once per object; each
 * function then takes its rows the way LLVM's own PerfJITEventListener
 * does (DWARFContext::getLineInfoForAddressRange): from the last row at or
 * before its first byte, through the row holding its last byte, continuing
 * into later sequences that start inside it.  So a JIT switching listeners
 * gets the same lines in perf, at the same addresses, clipped to the code,
 * and one more row: the last one again at the last byte of the code, which
 * perf needs to give the code of the last row a line at all.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <gelf.h>

#include "llvm/llvm.h"

struct row {
	uint64_t    addr;
	const char *file;
	uint32_t    line;
	uint32_t    discrim;
};

struct seq {                    /* rows [first, end]; row end is the end_sequence */
	size_t   first, end;
	uint64_t lo, hi;
};

struct jpl_lines {
	unsigned char *img;
	Elf           *elf;
	Dwarf         *dw;
	struct row    *rows;
	size_t         nrows, cap;
	struct seq    *seqs;
	size_t         nseqs, seq_cap;
};

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	void *n;
	size_t c = *cap ? *cap : 64;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(n = realloc(*v, c * size)))
		return -ENOMEM;
	*v = n;
	*cap = c;
	return 0;
}

/* The rows of one line table, split into sequences at end_sequence rows. */
static int add_table(struct jpl_lines *l, Dwarf_Lines *lines, size_t n)
{
	size_t start = l->nrows;
	int open = 0;

	if (grow((void **)&l->rows, &l->cap, l->nrows + n, sizeof(*l->rows)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *dl = dwarf_onesrcline(lines, i);
		struct row *r = &l->rows[l->nrows];
		Dwarf_Addr addr;
		unsigned disc = 0;
		int lineno = 0;
		bool end = false;

		if (!dl || dwarf_lineaddr(dl, &addr) || dwarf_lineno(dl, &lineno))
			continue;
		dwarf_lineendsequence(dl, &end);
		dwarf_linediscriminator(dl, &disc);
		r->addr = addr;
		r->line = lineno > 0 ? (uint32_t)lineno : 0;
		r->discrim = disc;
		r->file = dwarf_linesrc(dl, NULL, NULL);
		if (!r->file)
			r->file = "";
		if (!open) {
			start = l->nrows;
			open = 1;
		}
		l->nrows++;
		if (end) {
			struct seq *s;

			open = 0;
			if (l->nrows - start < 2)
				continue;       /* an empty sequence covers nothing */
			if (grow((void **)&l->seqs, &l->seq_cap, l->nseqs + 1, sizeof(*l->seqs)))
				return -ENOMEM;
			s = &l->seqs[l->nseqs++];
			s->first = start;
			s->end = l->nrows - 1;
			s->lo = l->rows[start].addr;
			s->hi = r->addr;
		}
	}
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;

	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

int jpl_lines_open(struct jpl_lines **out, unsigned char *img, size_t size)
{
	struct jpl_lines *l;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t type;
	int err = -ENODATA;

	*out = NULL;
	if (!(l = calloc(1, sizeof(*l)))) {
		free(img);
		return -ENOMEM;
	}
	l->img = img;
	elf_version(EV_CURRENT);
	if (!(l->elf = elf_memory((char *)img, size)) ||
	    !(l->dw = dwarf_begin_elf(l->elf, DWARF_C_READ, NULL)))
		goto fail;
	while (dwarf_get_units(l->dw, cu, &cu, &version, &type, &cudie, NULL) == 0) {
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_getsrclines(&cudie, &lines, &n) == 0 && n &&
		    add_table(l, lines, n)) {
			err = -ENOMEM;
			goto fail;
		}
	}
	if (!l->nseqs)
		goto fail;
	/* in the order LLVM looks sequences up in */
	qsort(l->seqs, l->nseqs, sizeof(*l->seqs), cmp_seq);
	*out = l;
	return 0;
fail:
	jpl_lines_close(l);
	return err;
}

/* The last row of s at or before a (s holds a): LLVM's findRowInSeq. */
static size_t row_at(const struct jpl_lines *l, const struct seq *s, uint64_t a)
{
	size_t lo = s->first + 1, hi = s->end;   /* upper_bound in [first + 1, end) */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->rows[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

static int holds(const struct seq *s, uint64_t a)
{
	return s->lo <= a && a < s->hi;
}

int jpl_lines_of(struct jpl_lines *l, uint64_t lo, uint64_t hi,
		 struct jitperf_line **rows, size_t *n)
{
	size_t a = 0, b = l->nseqs, cap = 0, k;
	struct jitperf_line *out = NULL;

	*rows = NULL;
	*n = 0;
	if (hi <= lo)
		return 0;
	/* the first sequence ending after lo (upper_bound by end address) */
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (l->seqs[mid].hi <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == l->nseqs || !holds(&l->seqs[a], lo))
		return 0;
	for (k = a; k < l->nseqs && l->seqs[k].lo < hi; k++) {
		const struct seq *s = &l->seqs[k];
		size_t first = k == a ? row_at(l, s, lo) : s->first;
		size_t last = holds(s, hi - 1) ? row_at(l, s, hi - 1) : s->end;

		if (grow((void **)&out, &cap, *n + (last - first + 1), sizeof(*out))) {
			free(out);
			*n = 0;
			return -ENOMEM;
		}
		for (size_t i = first; i <= last; i++) {
			const struct row *r = &l->rows[i];
			struct jitperf_line *o = &out[*n];

			if (r->addr >= hi)
				continue;
			/* a row that starts before the code still describes its first bytes */
			o->addr = r->addr < lo ? lo : r->addr;
			o->line = r->line;
			o->discrim = r->discrim;
			o->file = r->file;
			(*n)++;
		}
	}
	/*
	 * perf inject --jit ends its line table at the last row's address, so
	 * the code of the last row would have no line; a closing copy of that
	 * row at the last byte of the code gives it one.
	 */
	if (*n && out[*n - 1].addr < hi - 1) {
		if (grow((void **)&out, &cap, *n + 1, sizeof(*out))) {
			free(out);
			*n = 0;
			return -ENOMEM;
		}
		out[*n] = out[*n - 1];
		out[*n].addr = hi - 1;
		(*n)++;
	}
	*rows = out;
	return 0;
}

void jpl_lines_close(struct jpl_lines *l)
{
	if (!l)
		return;
	if (l->dw)
		dwarf_end(l->dw);
	if (l->elf)
		elf_end(l->elf);
	free(l->rows);
	free(l->seqs);
	free(l->img);
	free(l);
}
