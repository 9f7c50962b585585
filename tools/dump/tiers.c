/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf dump of a tiers file (jit-<pid>.tiers, jitperf-tiers(5)): the
 * header, then per record its offset, type, timestamp and fields, as the
 * jitdump's records are printed.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "tools/cmds.h"
#include "dump.h"
#include "read/tiers_read.h"
#include "read/util.h"
#include "read/util.h"

int jd_is_tiers(const char *path)
{
	unsigned char head[4];
	int fd = rd_open_regular(path, 0, NULL);     /* never blocks on a FIFO */
	ssize_t n;

	if (fd < 0)
		return 0;    /* jd_open names what is wrong with it */
	n = pread(fd, head, sizeof(head), 0);
	close(fd);
	return n > 0 && tr_is_tiers(head, (size_t)n);
}

static void print_record(const struct tr_record *r)
{
	const char *type = tr_type_name(r->type);

	if (!type) {
		printf("%8" PRIu64 " unknown type %" PRIu32 " ts %" PRIu64 " size %" PRIu32 "\n",
		       r->offset, r->type, r->timestamp, r->size);
		return;
	}
	printf("%8" PRIu64 " %-14s ts %" PRIu64, r->offset, type, r->timestamp);
	switch (r->type) {
	case JPTIERS_TIER_NAME:
		printf(" tier %" PRIu32 " tag ", r->tier);
		jd_print_name(stdout, r->text);
		break;
	case JPTIERS_TIER_REQUEST:
		printf(" tid %" PRIu32 " tier %" PRIu32 " func ", r->tid, r->tier);
		jd_print_name(stdout, r->text);
		break;
	case JPTIERS_COMPILE_BEGIN:
		printf(" tid %" PRIu32 " id %" PRIu64 " parent %" PRIu64 " tier %" PRIu32 " func ",
		       r->tid, r->id, r->parent, r->tier);
		jd_print_name(stdout, r->text);
		break;
	case JPTIERS_COMPILE_END:
		printf(" tid %" PRIu32 " id %" PRIu64 " status %" PRId32 "%s", r->tid, r->id,
		       r->status, r->status ? " (failed)" : "");
		break;
	case JPTIERS_INSTALL:
		printf(" tid %" PRIu32 " compile %" PRIu64 " index %" PRIu64 " code_addr 0x%" PRIx64
		       " size %" PRIu64, r->tid, r->compile, r->code_index, r->code_addr,
		       r->code_size);
		break;
	default:
		break;
	}
	putchar('\n');
}

int jd_dump_tiers(const char *path)
{
	const struct jptiers_file_header *h;
	struct tr_file *f;
	struct tr_record r;
	char err[512];
	int ret;

	if (tr_open(&f, path, err, sizeof(err))) {
		cmd_err("%s", err);
		return 1;
	}
	h = tr_header(f);
	printf("%s: tiers version %" PRIu32 ", %s byte order\n", path, h->version,
	       tr_swapped(f) ? "foreign" : "native");
	printf("header: header_size %" PRIu32 " pid %" PRIu32 " timestamp %" PRIu64
	       " clock %" PRIu32 "%s flags 0x%" PRIx32 "\n", h->header_size, h->pid, h->timestamp,
	       h->clock, h->clock == JPTIERS_CLOCK_MONOTONIC ? " (monotonic)" : "", h->flags);
	while ((ret = tr_next(f, &r, err, sizeof(err))) == 1)
		print_record(&r);
	fflush(stdout);
	tr_close(f);
	if (ret < 0) {
		cmd_err("%s", err);
		return 1;
	}
	return 0;
}
