/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writes the perf.data of tests/progs/pdbuild.h: pd-fixture [--pipe] FILE
 * (a seed of the perf.data fuzzer).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdbuild.h"

int main(int argc, char **argv)
{
	int pipe = argc > 2 && !strcmp(argv[1], "--pipe");
	const char *path = argv[argc - 1];
	unsigned char *b;
	size_t n;
	FILE *f;

	if (argc < 2)
		return fprintf(stderr, "usage: pd-fixture [--pipe] FILE\n"), 2;
	b = pdb_build(pipe, &n);
	f = b ? fopen(path, "wb") : NULL;
	if (!f || fwrite(b, 1, n, f) != n || fclose(f)) {
		perror(path);
		return 1;
	}
	free(b);
	return 0;
}
