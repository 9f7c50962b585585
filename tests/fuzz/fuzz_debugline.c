/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness: arbitrary bytes as a relocatable ELF object, through
 * libjitperf-llvm's line tables as the listener reads them (llvm/lines.c
 * over llvm/debugline.c): every row, then the rows of a few address
 * ranges.  The bytes go to a block of their own size, so that a read past
 * them is caught by the sanitizers.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llvm/llvm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *img = malloc(size ? size : 1);
	volatile size_t sink = 0;
	struct jpl_dwarf_sections s;
	struct jpl_arena a;
	struct jpl_lines *l;
	int err;

	if (!img)
		return 0;
	memcpy(img, data, size);
	jpl_dwarf_sections_of(img, size, &s);
	jpl_arena_init(&a, NULL, 0);
	err = jpl_lines_open(&l, &s, &a);
	free(img);              /* the rows keep nothing of the sections */
	if (err)
		goto out;
	/*
	 * Function-sized ranges over the first KiB, where an object's code is
	 * before relocation; every row's file name is read.
	 */
	for (uint64_t lo = 0; lo < 1024; lo += 16) {
		struct jitperf_line *rows;
		size_t n;

		if (jpl_lines_of(l, lo, lo + 48, &rows, &n))
			continue;
		for (size_t k = 0; k < n; k++)
			sink += rows[k].line + strlen(rows[k].file);
	}
out:
	jpl_arena_free(&a);
	(void)sink;
	return 0;
}
