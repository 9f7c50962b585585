/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test helper for the libjitperf-cyg tests, reading what a user's tools
 * read:
 *   cyg_read TRACE         "<calls>\t<name>" per function (names as the
 *                          trace reader shows them), then "threads\t<n>"
 *   cyg_read -s NAME...    each name as the symbolizer turns it
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/symbolize.h"
#include "read/trace_read.h"

static unsigned long *counts;

static int count_call(const struct jpt_call *c, void *arg)
{
	(void)arg;
	counts[c->fn]++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	struct jpt_reader *r;
	char err[512], **lines;
	size_t i, n, nl = 0;

	if (argc > 1 && strcmp(argv[1], "-s") == 0) {
		for (int a = 2; a < argc; a++) {
			sym_native_name(argv[a], err, sizeof(err));
			puts(err);
		}
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: cyg_read TRACE | cyg_read -s NAME...\n");
		return 2;
	}
	if (jpt_open(&r, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "cyg_read: %s\n", err);
		return 1;
	}
	n = jpt_nfns(r);
	counts = calloc(n + 1, sizeof(*counts));
	lines = calloc(n + 1, sizeof(*lines));
	if (!counts || !lines || jpt_for_each_call(r, count_call, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "cyg_read: %s\n", counts && lines ? err : "out of memory");
		return 1;
	}
	for (i = 1; i <= n; i++) {
		const struct jpt_fn *f = jpt_fn(r, (uint32_t)i);

		if (f && counts[i] && asprintf(&lines[nl], "%lu\t%s", counts[i], f->name) > 0)
			nl++;
	}
	qsort(lines, nl, sizeof(*lines), by_name);
	for (i = 0; i < nl; i++) {
		puts(lines[i]);
		free(lines[i]);
	}
	printf("threads\t%zu\n", jpt_nthreads(r));
	free(lines);
	free(counts);
	jpt_close(r);
	return 0;
}
