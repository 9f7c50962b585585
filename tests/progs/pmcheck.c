/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck: perf's names for samples against the perf map reader's, for
 * tests/cmd/perfmap-overlap.test.
 *
 *   perf script -F ip,sym | pmcheck MAP START END
 *
 * For each sample whose ip lies in [START, END) (hex), the name perf
 * printed must be the one pm_find() gives ("[unknown]" for none), and the
 * one of the pm_pieces() piece holding the ip.  Prints
 *   samples N misnamed M pieces P
 * with N the samples in the range, M how many of them a lookup by the
 * nearest start (the rule pm_find had before it followed perf's tree)
 * would name otherwise than perf, and P the pieces; then "NAME COUNT" per
 * name perf gave.  Exits 1, naming the first few, if any sample differs.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/perfmap_read.h"

/* the latest line among the entries starting nearest below addr, if it holds addr */
static const struct pm_sym *nearest(const struct pm_map *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr == m->syms[lo - 1].start || addr - m->syms[lo - 1].start < m->syms[lo - 1].size)
		return &m->syms[lo - 1];
	return NULL;
}

static const struct pm_sym *in_pieces(const struct pm_piece *p, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && p[lo].start <= addr ? p[lo].sym : NULL;
}

struct count {
	char     name[128];
	unsigned n;
};

int main(int argc, char **argv)
{
	struct pm_map *m;
	struct pm_piece *p;
	struct count counts[256];
	size_t np, ncounts = 0;
	unsigned long samples = 0, misnamed = 0, bad = 0;
	uint64_t lo, hi;
	char line[1024], err[512];

	if (argc != 4) {
		fputs("usage: pmcheck MAP START END < perf-script-output\n", stderr);
		return 2;
	}
	lo = strtoull(argv[2], NULL, 16);
	hi = strtoull(argv[3], NULL, 16);
	if (pm_read(argv[1], &m, err, sizeof(err)) || pm_pieces(m, &p, &np)) {
		fprintf(stderr, "pmcheck: %s\n", err);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *s = line, *e;
		uint64_t ip = strtoull(s, &e, 16);
		const struct pm_sym *want, *old;
		const char *name;
		size_t i;

		if (e == s || ip < lo || ip >= hi)
			continue;
		while (*e == ' ')
			e++;
		e[strcspn(e, "\n")] = '\0';
		want = pm_find(m, ip);
		name = want ? want->name : "[unknown]";
		samples++;
		if (strcmp(e, name) || in_pieces(p, np, ip) != want) {
			if (bad++ < 10)
				fprintf(stderr, "pmcheck: %#" PRIx64 ": perf names %s, pm_find %s, "
					"pm_pieces %s\n", ip, e, name,
					in_pieces(p, np, ip) ? in_pieces(p, np, ip)->name : "[unknown]");
			continue;
		}
		old = nearest(m, ip);
		misnamed += old != want && (!old || !want || strcmp(old->name, want->name));
		for (i = 0; i < ncounts && strcmp(counts[i].name, e); i++)
			;
		if (i == ncounts && ncounts < sizeof(counts) / sizeof(counts[0])) {
			snprintf(counts[i].name, sizeof(counts[i].name), "%s", e);
			counts[i].n = 0;
			ncounts++;
		}
		if (i < ncounts)
			counts[i].n++;
	}
	printf("samples %lu misnamed %lu pieces %zu\n", samples, misnamed, np);
	for (size_t i = 0; i < ncounts; i++)
		printf("%s %u\n", counts[i].name, counts[i].n);
	free(p);
	pm_free(m);
	if (bad) {
		fprintf(stderr, "pmcheck: %lu of %lu samples named otherwise than perf\n", bad,
			samples);
		return 1;
	}
	return 0;
}
