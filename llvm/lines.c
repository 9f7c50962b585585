/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Source lines of a loaded object, from the line tables of its relocated
 * debug sections (llvm/debugline.c).  Every row of every line table is
 * kept once per object, with its own copy of the file names (the sections
 * are not needed after jpl_lines_open); each function then takes its rows
 * the way LLVM's own PerfJITEventListener does (DWARFContext::getLineInfoForAddressRange):
 * from the last row at or before its first byte, through the row holding
 * its last byte, continuing into later sequences that start inside it.
 * So a JIT switching listeners gets the same lines in perf, at the same
 * addresses, clipped to the code, and one more row: the last one again at
 * the last byte of the code, which perf needs to give the code of the
 * last row a line at all.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llvm/llvm.h"

struct seq {                    /* rows [first, end]; row end is the end_sequence */
	size_t   first, end;
	uint64_t lo, hi;
};

struct jpl_lines {
	struct jpl_line_rows rows;      /* rows.arena: where everything is */
	struct seq          *seqs;
	size_t               nseqs, seq_cap;
};

/* The rows split into sequences at end_sequence rows. */
static int split(struct jpl_lines *l)
{
	const struct jpl_line_row *r = l->rows.v;
	size_t start = 0;

	for (size_t i = 0; i < l->rows.n; i++) {
		struct seq *s;

		if (!r[i].end_sequence)
			continue;
		if (i - start >= 1) {   /* an empty sequence covers nothing */
			if (l->nseqs == l->seq_cap) {
				size_t cap = l->seq_cap ? 2 * l->seq_cap : 8;

				s = jpl_realloc(l->rows.arena, l->seqs, l->seq_cap * sizeof(*s),
						cap * sizeof(*s));
				if (!s)
					return -ENOMEM;
				l->seqs = s;
				l->seq_cap = cap;
			}
			s = &l->seqs[l->nseqs++];
			s->first = start;
			s->end = i;
			s->lo = r[start].addr;
			s->hi = r[i].addr;
		}
		start = i + 1;
	}
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;

	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

int jpl_lines_open(struct jpl_lines **out, const struct jpl_dwarf_sections *s,
		   struct jpl_arena *a)
{
	struct jpl_lines *l;
	int err;

	*out = NULL;
	if (!(l = jpl_alloc(a, sizeof(*l))))
		return -ENOMEM;
	memset(l, 0, sizeof(*l));
	err = jpl_debugline_read(&l->rows, s, a);
	if (err)
		jpl_debug("DWARF line tables: %s%s", jitperf_strerror(err),
			  l->rows.n ? " (the readable ones are used)" : "");
	if (err == -ENOMEM || (err = split(l)))
		return err;
	if (!l->nseqs)
		return -ENODATA;
	/* in the order LLVM looks sequences up in */
	if (l->nseqs > 1)
		qsort(l->seqs, l->nseqs, sizeof(*l->seqs), cmp_seq);
	*out = l;
	return 0;
}

/* The last row of s at or before a (s holds a): LLVM's findRowInSeq. */
static size_t row_at(const struct jpl_lines *l, const struct seq *s, uint64_t a)
{
	size_t lo = s->first + 1, hi = s->end;   /* upper_bound in [first + 1, end) */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->rows.v[mid].addr <= a)
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

/* The first sequence holding lo, or l->nseqs. */
static size_t first_seq(const struct jpl_lines *l, uint64_t lo)
{
	size_t a = 0, b = l->nseqs;

	/* the first sequence ending after lo (upper_bound by end address) */
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (l->seqs[mid].hi <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < l->nseqs && holds(&l->seqs[a], lo) ? a : l->nseqs;
}

/* Rows first..last of sequence k, the ones that may describe [lo, hi). */
static void span(const struct jpl_lines *l, size_t a, size_t k, uint64_t lo, uint64_t hi,
		 size_t *first, size_t *last)
{
	const struct seq *s = &l->seqs[k];

	*first = k == a ? row_at(l, s, lo) : s->first;
	*last = holds(s, hi - 1) ? row_at(l, s, hi - 1) : s->end;
}

/*
 * How many rows take may give: the rows of the spans, found by binary
 * search alone.  At most the span's last row (at or past hi) is too many.
 */
static size_t bound(const struct jpl_lines *l, size_t a, uint64_t lo, uint64_t hi)
{
	size_t n = 0, first, last;

	for (size_t k = a; k < l->nseqs && l->seqs[k].lo < hi; k++) {
		span(l, a, k, lo, hi, &first, &last);
		n += last - first + 1;
	}
	return n;
}

/* The rows of [lo, hi) into out; returns how many. */
static size_t take(const struct jpl_lines *l, size_t a, uint64_t lo, uint64_t hi,
		   struct jitperf_line *out)
{
	size_t n = 0, first, last;

	for (size_t k = a; k < l->nseqs && l->seqs[k].lo < hi; k++) {
		span(l, a, k, lo, hi, &first, &last);
		for (size_t i = first; i <= last; i++) {
			const struct jpl_line_row *r = &l->rows.v[i];

			if (r->addr >= hi)
				continue;
			/* a row that starts before the code still describes its first bytes */
			out[n].addr = r->addr < lo ? lo : r->addr;
			out[n].line = r->line;
			out[n].discrim = r->discrim;
			out[n].file = r->file;
			n++;
		}
	}
	return n;
}

int jpl_lines_of(struct jpl_lines *l, uint64_t lo, uint64_t hi,
		 struct jitperf_line **rows, size_t *n)
{
	struct jitperf_line *out;
	size_t a, count;

	*rows = NULL;
	*n = 0;
	if (hi <= lo || (a = first_seq(l, lo)) == l->nseqs || !(count = bound(l, a, lo, hi)))
		return 0;
	/* one more for the closing row; one pass over the rows, which are cache-cold */
	if (!(out = jpl_alloc(l->rows.arena, (count + 1) * sizeof(*out))))
		return -ENOMEM;
	if (!(count = take(l, a, lo, hi, out)))
		return 0;
	/*
	 * perf inject --jit ends its line table at the last row's address, so
	 * the code of the last row would have no line; a closing copy of that
	 * row at the last byte of the code gives it one.
	 */
	if (out[count - 1].addr < hi - 1) {
		out[count] = out[count - 1];
		out[count].addr = hi - 1;
		count++;
	}
	*rows = out;
	*n = count;
	return 0;
}
