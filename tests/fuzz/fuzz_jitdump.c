/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness of the jitdump reader and of `jitperf dump --check`:
 * any bytes must give records or a clean error, never a crash, a read out
 * of bounds or a hang.  Run briefly in make check through tests/fuzz/fuzz-main.c
 * (tests/fuzz/jitdump.test); with --enable-fuzzers CC=clang as tests/fuzz/fuzz_jitdump.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/dump/dump.h"
#include "read/jitdump_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the user sees of a bad file: one line that names it. */
static void check_message(const char *err)
{
	if (strncmp(err, "fuzz.dump: ", 11) || strchr(err, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct jd_file *f;
	struct jd_record rec;
	char err[512];
	int r;

	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		return 0;
	err[0] = 0;
	if (jd_open_mem(&f, data, size, "fuzz.dump", err, sizeof(err))) {
		check_message(err);
		return 0;
	}
	while (err[0] = 0, (r = jd_next(f, &rec, err, sizeof(err))) != 0) {
		if (r < 0)
			check_message(err);
		if (r == -EBADMSG)
			break;
		if (r != 1)
			continue;
		if (rec.id == JIT_CODE_DEBUG_INFO) {
			struct jd_debug_iter it;
			struct jd_debug_entry e;
			uint64_t addr, nr;

			if (jd_debug_info(f, &rec, &addr, &nr, &it) == 0)
				while (jd_debug_next(&it, &e, err, sizeof(err)) == 1)
					fputs(e.file, devnull);
		} else if (rec.id == JIT_CODE_UNWINDING_INFO) {
			struct jd_unwinding u;

			if (jd_unwinding_info(f, &rec, &u, err, sizeof(err)) == 0 && u.unwinding_size)
				fputc(((const unsigned char *)u.data)[u.unwinding_size - 1], devnull);
		} else if (rec.id == JIT_CODE_LOAD) {
			jd_print_name(devnull, rec.name);
			if (rec.code_size)
				fputc(((const unsigned char *)rec.code)[rec.code_size - 1], devnull);
		}
	}
	jd_close(f);
	/* the checker walks the same bytes with its own bookkeeping */
	if (jd_open_mem(&f, data, size, "fuzz.dump", err, sizeof(err)) == 0) {
		jd_check(f, devnull);
		jd_close(f);
	}
	return 0;
}
