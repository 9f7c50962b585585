/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiers file (format/tiers.h) of known content for tests/cmd/dump-tiers.test:
 *   tiers-fixture [--swapped | --cut] FILE
 * --swapped writes it in the other byte order; --cut leaves its last
 * record half written, as no jitperf writer does.
 */
#include "config.h"

#include <byteswap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/tiers.h"

static unsigned char buf[4096];
static size_t len;
static int swapped;

static void u32(uint32_t v)
{
	v = swapped ? bswap_32(v) : v;
	memcpy(buf + len, &v, 4);
	len += 4;
}

static void u64(uint64_t v)
{
	v = swapped ? bswap_64(v) : v;
	memcpy(buf + len, &v, 8);
	len += 8;
}

/* a record's header, for a record of fixed bytes and the string s */
static void head(uint32_t type, size_t fixed, const char *s, uint64_t ts)
{
	size_t n = fixed + (s ? strlen(s) + 1 : 0);

	u32(type);
	u32((uint32_t)((n + 7) & ~(size_t)7));
	u64(ts);
}

static void text(const char *s, size_t fixed)
{
	size_t n = strlen(s) + 1, total = (fixed + n + 7) & ~(size_t)7;

	memcpy(buf + len, s, n);
	len += n;
	len += total - fixed - n;   /* zeros */
}

int main(int argc, char **argv)
{
	int cut = 0;
	FILE *fp;

	if (argc == 3 && !strcmp(argv[1], "--swapped"))
		swapped = 1;
	else if (argc == 3 && !strcmp(argv[1], "--cut"))
		cut = 1;
	else if (argc != 2)
		return fprintf(stderr, "usage: tiers-fixture [--swapped | --cut] FILE\n"), 2;
	u32(JPTIERS_MAGIC);
	u32(JPTIERS_VERSION);
	u32(sizeof(struct jptiers_file_header));
	u32(4242);
	u64(1000000000);
	u32(JPTIERS_CLOCK_MONOTONIC);
	u32(0);
	u64(0);

	head(JPTIERS_TIER_NAME, 24, "opt", 1000000100);
	u32(1);
	u32(0);
	text("opt", 24);
	head(JPTIERS_TIER_REQUEST, 24, "sum", 1000000200);
	u32(1);
	u32(4243);
	text("sum", 24);
	head(JPTIERS_COMPILE_BEGIN, 40, "sum", 1000000300);
	u64(1);
	u64(0);
	u32(1);
	u32(4244);
	text("sum", 40);
	head(JPTIERS_COMPILE_BEGIN, 40, "in\"l\n", 1000000400);
	u64(2);
	u64(1);
	u32(0);
	u32(4244);
	text("in\"l\n", 40);
	head(JPTIERS_COMPILE_END, 32, NULL, 1000000500);
	u64(2);
	u32((uint32_t)-125);
	u32(4244);
	head(JPTIERS_INSTALL, 56, NULL, 1000000600);
	u64(1);
	u64(3);
	u64(0x7f0000001000);
	u64(64);
	u32(4244);
	u32(0);
	head(JPTIERS_COMPILE_END, 32, NULL, 1000000700);
	u64(1);
	u32(0);
	u32(4244);
	head(99, 24, NULL, 1000000800);    /* a type of a later version */
	u64(0);
	head(JPTIERS_CLOSE, 16, NULL, 1000000900);
	if (cut)
		len -= 8;
	fp = fopen(argv[argc - 1], "wb");
	if (!fp || fwrite(buf, 1, len, fp) != len || fclose(fp))
		return perror(argv[argc - 1]), 1;
	return 0;
}
