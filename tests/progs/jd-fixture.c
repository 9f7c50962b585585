/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jd-fixture [--swapped] OUT: write the jitdump that tests/cmd/dump.test and tests/fuzz/jitdump.test
 * expect, with fixed values, so the tests can name exact offsets:
 *
 *     0 header      version 1, e_machine of this host, pid 4242, ts 1000000000
 *    40 DEBUG_INFO  code_addr 0x7f0000001000, 2 lines of demo.jc   (80 bytes)
 *   120 CODE_LOAD   "fib" at 0x7f0000001000, 8 bytes, index 0      (68 bytes)
 *   188 CODE_LOAD   "sum" at 0x7f0000001040, 4 bytes, index 1      (64 bytes)
 *   252 CODE_MOVE   index 1 to 0x7f0000002000                      (64 bytes)
 *   316 CODE_CLOSE                                                 (16 bytes)
 *   332 end
 *
 * The code is real x86-64 so objdump can disassemble it.  --swapped writes
 * the other byte order; --padded pads each CODE_LOAD between name and code
 * to align the code to 8 bytes, as the Java agent (libperf-jvmti) does, so
 * the offsets after 120 move.
 */
#include "config.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "jdbuild.h"

#if defined(__x86_64__)
#define HOST_EM EM_X86_64
#elif defined(__aarch64__)
#define HOST_EM EM_AARCH64     /* and its code: the fixture is the machine's own */
#elif defined(__i386__)
#define HOST_EM EM_386
#else
#define HOST_EM EM_NONE
#endif

int main(int argc, char **argv)
{
#if defined(__aarch64__)
	/* fib: mov w0, w1; ret (no zero byte: dump.test cuts its name's NUL) */
	static const unsigned char fib[] = { 0xe0, 0x03, 0x01, 0x2a, 0xc0, 0x03, 0x5f, 0xd6 };
	/* sum: add w0, w0, w1 */
	static const unsigned char sum[] = { 0x00, 0x00, 0x01, 0x0b };
#else
	/* fib: push %rbp; mov %rsp,%rbp; mov %edi,%eax; pop %rbp; ret */
	static const unsigned char fib[] = { 0x55, 0x48, 0x89, 0xe5, 0x89, 0xf8, 0x5d, 0xc3 };
	/* sum: lea (%rdi,%rsi,1),%eax; ret */
	static const unsigned char sum[] = { 0x8d, 0x04, 0x37, 0xc3 };
#endif
	static const struct jdb_line lines[] = {
		{ 0x7f0000001000, 1, 0, "demo.jc" },
		{ 0x7f0000001004, 2, 0, "demo.jc" },
	};
	const uint64_t t0 = 1000000000;
	int swapped = argc == 3 && !strcmp(argv[1], "--swapped");
	int padded = argc == 3 && !strcmp(argv[1], "--padded");
	struct jdb b;
	int err;

	if (argc != 2 + swapped + padded) {
		fprintf(stderr, "usage: jd-fixture [--swapped | --padded] OUT\n");
		return 2;
	}
	jdb_init(&b, swapped);
	jdb_header(&b, 1, 40, HOST_EM, 4242, t0, 0);
	jdb_debug(&b, t0 + 100, 0x7f0000001000, lines, 2);
	/* 56-byte fixed part + "fib\0": 4 bytes to the next multiple of 8 */
	jdb_load(&b, t0 + 200, 4242, 4243, 0x7f0000001000, "fib", fib, sizeof(fib), 0,
		 padded ? 4 : 0);
	jdb_load(&b, t0 + 300, 4242, 4243, 0x7f0000001040, "sum", sum, sizeof(sum), 1,
		 padded ? 4 : 0);
	jdb_move(&b, t0 + 400, 4242, 4244, 0x7f0000001040, 0x7f0000002000, sizeof(sum), 1);
	jdb_close(&b, t0 + 500);
	err = jdb_write(&b, argv[argc - 1]);
	jdb_free(&b);
	if (err) {
		fprintf(stderr, "jd-fixture: %s: %s\n", argv[argc - 1], strerror(-err));
		return 1;
	}
	return 0;
}
