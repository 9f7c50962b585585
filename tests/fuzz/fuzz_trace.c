/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness: arbitrary bytes as a jitperf trace, through the trace
 * reader as jitperf convert walks it (calls, then code events).  The reader
 * takes a path, so the bytes go to a memfd named through /proc.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "read/trace_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_call(const struct jpt_call *c, void *arg)
{
	uint64_t *sum = arg;

	/* touch what convert touches: the stack and the counters */
	for (uint32_t i = 0; i <= c->depth; i++)
		*sum += c->stack[i];
	*sum += c->self_ns + (c->counters ? c->counters[0] : 0);
	return 0;
}

static int on_code(const struct jpt_code *c, void *arg)
{
	uint64_t *sum = arg;

	*sum += strlen(c->name) + c->addr;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct jpt_reader *r;
	char err[512];
	uint64_t sum = 0;

	if (fd < 0) {
		fd = memfd_create("fuzz.trace", 0);
		if (fd < 0)
			return 0;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	err[0] = 0;
	if (jpt_open(&r, path, err, sizeof(err)) == 0) {
		const struct jpt_info *info = jpt_info(r);

		for (size_t i = 0; i < info->ncounters; i++)
			sum += strlen(info->counter_names[i]);
		for (size_t i = 0; i < jpt_nthreads(r); i++)
			sum += strlen(jpt_thread(r, i)->name);
		if (jpt_for_each_call(r, on_call, &sum, err, sizeof(err)) == 0)
			jpt_for_each_code(r, on_code, &sum, err, sizeof(err));
		jpt_close(r);
	} else if (!err[0] || strchr(err, '\n')) {
		abort();               /* an error is one line */
	}
	return sum == 42 ? 0 : 0;
}
