/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writes a hostile perf.data: the file of tests/progs/pdbuild.h with
 * NATTRS more copies of its event attribute.
 *
 *   pd-hostile NATTRS BYTES FILE          every copy names the same id
 *                                         section of BYTES bytes, appended
 *   pd-hostile --pipe NATTRS BYTES FILE   pipe mode: NATTRS attribute
 *                                         records of BYTES / NATTRS bytes
 *                                         of ids each, all ids distinct
 */
#include "config.h"

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdbuild.h"

#define ASZ sizeof(struct perf_event_attr)

static int put(FILE *f, const void *p, size_t n)
{
	return fwrite(p, 1, n, f) == n ? 0 : -1;
}

static int put64(FILE *f, uint64_t v)
{
	return put(f, &v, 8);
}

static int file_mode(FILE *f, const unsigned char *b, size_t n, uint64_t nattrs, uint64_t bytes)
{
	uint64_t idoff = n, aoff = n + bytes / 8 * 8, asz = ASZ + 16;
	unsigned char h[48];
	int err = 0;

	memcpy(h, b, 48);
	memcpy(h + 24, &aoff, 8);                  /* the attribute section, appended */
	asz *= nattrs;
	memcpy(h + 32, &asz, 8);
	err = put(f, h, 48) ?: put(f, b + 48, n - 48);
	for (uint64_t i = 0; i < bytes / 8 && !err; i++)
		err = put64(f, i < 2 ? 7 + i : 1000 + i);
	for (uint64_t i = 0; i < nattrs && !err; i++)
		err = put(f, b + 104, ASZ) ?: put64(f, idoff) ?: put64(f, bytes / 8 * 8);
	return err;
}

static int pipe_mode(FILE *f, const unsigned char *b, size_t n, uint64_t nattrs, uint64_t bytes)
{
	size_t first = 16 + 8 + ASZ + 16;          /* the pipe header, the fixture's attribute */
	uint64_t k = bytes / nattrs / 8, id = 1000;
	int err;

	if (k > (65535 - 8 - ASZ) / 8)
		k = (65535 - 8 - ASZ) / 8;
	err = put(f, b, first);
	for (uint64_t i = 0; i < nattrs && !err; i++) {
		struct perf_event_header hd = { 64, 0, (uint16_t)(8 + ASZ + 8 * k) };

		err = put(f, &hd, 8) ?: put(f, b + 16 + 8, ASZ);
		for (uint64_t j = 0; j < k && !err; j++)
			err = put64(f, id++);
	}
	return err ?: put(f, b + first, n - first);
}

int main(int argc, char **argv)
{
	int pipe = argc == 5 && !strcmp(argv[1], "--pipe");
	unsigned char *b;
	uint64_t nattrs, bytes;
	size_t n;
	FILE *f;

	if (argc != 4 + pipe)
		return fprintf(stderr, "usage: pd-hostile [--pipe] NATTRS BYTES FILE\n"), 2;
	nattrs = strtoull(argv[1 + pipe], NULL, 0);
	bytes = strtoull(argv[2 + pipe], NULL, 0);
	if (!nattrs)
		return fprintf(stderr, "pd-hostile: NATTRS must be at least 1\n"), 2;
	b = pdb_build(pipe, &n);
	f = b ? fopen(argv[3 + pipe], "wb") : NULL;
	if (!f || (pipe ? pipe_mode : file_mode)(f, b, n, nattrs, bytes) || fclose(f)) {
		perror(argv[3 + pipe]);
		return 1;
	}
	free(b);
	return 0;
}
