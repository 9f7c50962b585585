/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jdcheck FILE.dump: strict reader of the jitdump files libjitperf writes,
 * for the integration tests.  Prints one line per CODE_LOAD
 * ("load INDEX NAME"), then a summary line; exits 1 naming the offset of the
 * first problem: torn or unknown record, code_index not increasing,
 * timestamps going back, DEBUG_INFO/UNWINDING_INFO not followed by their
 * CODE_LOAD, bytes after CODE_CLOSE.  libjitperf writes whole records, so
 * a file whose writer was killed (or still runs) ends on its last record:
 * anything after it, zeros included, is a torn record header.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/jitdump.h"

static const char *file;

static void bad(long off, const char *what)
{
	fprintf(stderr, "%s: offset %ld: %s\n", file, off, what);
	exit(1);
}

int main(int argc, char **argv)
{
	struct jitdump_file_header h;
	unsigned long loads = 0, moves = 0, debug = 0, unwind = 0, closes = 0;
	uint64_t last_ts = 0, last_index = 0;
	int pending = 0, quiet = argc > 2 && !strcmp(argv[2], "-q");
	unsigned char *buf = NULL;
	size_t cap = 0;
	long off;
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: jdcheck FILE.dump [-q]\n");
		return 2;
	}
	file = argv[1];
	f = fopen(file, "rb");
	if (!f) {
		perror(file);
		return 1;
	}
	if (fread(&h, sizeof(h), 1, f) != 1)
		bad(0, "short header");
	if (h.magic != JITDUMP_MAGIC || h.version != 1 || h.total_size != sizeof(h) || h.flags)
		bad(0, "bad header");
	last_ts = h.timestamp;
	for (off = sizeof(h);; ) {
		struct jitdump_record_header r;
		size_t got = fread(&r, 1, sizeof(r), f);

		if (got == 0)
			break;
		if (got != sizeof(r) || r.total_size < sizeof(r))
			bad(off, "torn record header");
		if (closes)
			bad(off, "record after CODE_CLOSE");
		if (r.total_size > cap) {
			cap = r.total_size;
			buf = realloc(buf, cap);
		}
		memcpy(buf, &r, sizeof(r));
		if (fread(buf + sizeof(r), 1, r.total_size - sizeof(r), f) != r.total_size - sizeof(r))
			bad(off, "torn record");
		if (r.timestamp < last_ts)
			bad(off, "timestamp goes back");
		last_ts = r.timestamp;
		switch (r.id) {
		case JIT_CODE_LOAD: {
			struct jitdump_code_load cl;
			const char *name = (const char *)buf + sizeof(cl);

			memcpy(&cl, buf, sizeof(cl));
			if (sizeof(cl) + strnlen(name, r.total_size - sizeof(cl)) + 1 + cl.code_size != r.total_size)
				bad(off, "CODE_LOAD size does not match name and code");
			if (cl.code_index <= last_index)
				bad(off, "code_index not increasing");
			if (cl.pid != h.pid || cl.vma != cl.code_addr)
				bad(off, "CODE_LOAD pid/vma");
			last_index = cl.code_index;
			if (!quiet)
				printf("load %llu %s\n", (unsigned long long)cl.code_index, name);
			loads++;
			pending = 0;
			break;
		}
		case JIT_CODE_MOVE:
			if (pending)
				bad(off, "CODE_MOVE between DEBUG/UNWINDING_INFO and their CODE_LOAD");
			moves++;
			break;
		case JIT_CODE_DEBUG_INFO:
			debug++;
			pending = 1;
			break;
		case JIT_CODE_UNWINDING_INFO:
			unwind++;
			pending = 1;
			break;
		case JIT_CODE_CLOSE:
			closes++;
			break;
		default:
			bad(off, "unknown record type");
		}
		off += (long)r.total_size;
	}
	if (pending)
		bad(off, "DEBUG/UNWINDING_INFO without CODE_LOAD at end of file");
	printf("pid %u loads %lu moves %lu debug %lu unwind %lu close %lu\n",
	       h.pid, loads, moves, debug, unwind, closes);
	free(buf);
	fclose(f);
	return 0;
}
