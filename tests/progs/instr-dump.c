/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * instr-dump FILE.trace [calls|counts|check]: print a trace through the
 * reader, for the instr-*.test scripts.
 *   (default) header, limits, what was dropped, functions, threads
 *   calls     one line per call: tid depth fn-name stack self>=0 counters
 *   counts    "<thread serial> <fn name> <calls>" per thread and function
 *   check     verify every call: start <= end, self <= end - start,
 *             stack[depth] == fn; prints "ok <calls>"
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/trace_read.h"

static struct jpt_reader *r;

static int print_call(const struct jpt_call *c, void *arg)
{
	(void)arg;
	printf("%u %u %s", c->tid, c->depth, jpt_fn(r, c->fn)->name);
	for (uint32_t i = 0; i <= c->depth; i++)
		printf("%s%s", i ? ">" : " ", jpt_fn(r, c->stack[i])->name);
	if (getenv("INSTR_DUMP_TIMES"))
		printf(" dur=%" PRIu64 " self=%" PRIu64, c->end_ns - c->start_ns, c->self_ns);
	for (size_t i = 0; i < jpt_info(r)->ncounters; i++)
		printf(" %s=%" PRIu64, jpt_info(r)->counter_names[i], c->counters[i]);
	putchar('\n');
	return 0;
}

struct count { uint32_t tid, fn; unsigned long n; };
static struct count *counts;
static size_t ncounts;

static int count_call(const struct jpt_call *c, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < ncounts; i++)
		if (counts[i].tid == c->tid && counts[i].fn == c->fn)
			return counts[i].n++, 0;
	counts = realloc(counts, (ncounts + 1) * sizeof(*counts));
	if (!counts)
		return -1;
	counts[ncounts++] = (struct count){ c->tid, c->fn, 1 };
	return 0;
}

static int check_call(const struct jpt_call *c, void *arg)
{
	if (c->end_ns < c->start_ns || c->self_ns > c->end_ns - c->start_ns ||
	    c->stack[c->depth] != c->fn || c->start_ns < jpt_info(r)->start_ns) {
		fprintf(stderr, "bad call: fn %u depth %u start %" PRIu64 " end %" PRIu64 "\n",
			c->fn, c->depth, c->start_ns, c->end_ns);
		return 1;
	}
	++*(unsigned long *)arg;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "info";
	char err[512];
	unsigned long n = 0;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: instr-dump FILE.trace [calls|counts|check]\n");
		return 2;
	}
	if ((ret = jpt_open(&r, argv[1], err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (!strcmp(mode, "calls")) {
		ret = jpt_for_each_call(r, print_call, NULL, err, sizeof(err));
	} else if (!strcmp(mode, "counts")) {
		ret = jpt_for_each_call(r, count_call, NULL, err, sizeof(err));
		for (size_t i = 0; !ret && i < ncounts; i++)
			printf("%u %s %lu\n", counts[i].tid, jpt_fn(r, counts[i].fn)->name, counts[i].n);
	} else if (!strcmp(mode, "check")) {
		ret = jpt_for_each_call(r, check_call, &n, err, sizeof(err));
		if (!ret)
			printf("ok %lu\n", n);
	} else {
		const struct jpt_info *in = jpt_info(r);

		printf("version %u pid %u clock %s sample_every %u truncated %d counters",
		       in->version, in->pid, in->clock, in->sample_every, in->truncated);
		for (size_t i = 0; i < in->ncounters; i++)
			printf(" %s", in->counter_names[i]);
		putchar('\n');
		printf("limits max %llu ring %llu min_ns %llu\n", (unsigned long long)in->max_bytes,
		       (unsigned long long)in->ring_bytes, (unsigned long long)in->min_ns);
		printf("closed %d calls %llu timed %llu dropped_full %llu dropped_short %llu "
		       "dropped_ring %llu ring_blocks %llu\n", in->closed,
		       (unsigned long long)in->calls, (unsigned long long)in->timed,
		       (unsigned long long)in->dropped_full, (unsigned long long)in->dropped_short,
		       (unsigned long long)in->dropped_ring, (unsigned long long)in->ring_blocks);
		for (uint32_t id = 1; id <= jpt_nfns(r); id++)
			if (jpt_fn(r, id))
				printf("fn %u %s\n", id, jpt_fn(r, id)->name);
		for (size_t i = 0; i < jpt_nthreads(r); i++)
			printf("thread %zu %u %s\n", i, jpt_thread(r, i)->tid, jpt_thread(r, i)->name);
	}
	if (ret < 0)
		fprintf(stderr, "%s\n", err);
	jpt_close(r);
	free(counts);
	return ret ? 1 : 0;
}
