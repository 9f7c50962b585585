/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness: arbitrary bytes as perf script text (both as a user's
 * text and as our own perf script output), split at an arbitrary point, with
 * the option flags taken from the first byte, through the folded, SVG and
 * Chrome writers (output to /dev/null).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/convert/convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	void *w[3];
	const struct cv_ops *ops[3];
};

static int on_sample(const struct ps_sample *s, void *arg)
{
	struct run *r = arg;

	for (int i = 0; i < 3; i++)
		if (r->w[i] && r->ops[i]->sample(r->w[i], s))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct outfile of = { .path = "/dev/null" };
	struct cv_opts o = { .title = "fuzz" };
	struct run r = { .ops = { &cv_folded_ops, &cv_svg_ops, &cv_chrome_ops } };
	struct ps_parser *p;
	unsigned flags;
	size_t cut;
	int ret;

	if (!null && !(null = fopen("/dev/null", "w")))
		return 0;
	if (size < 2)
		return 0;
	flags = data[0] & (PS_PID | PS_TID | PS_KERNEL | PS_JIT | PS_ADDRS | PS_PERFDATA);
	cut = data[1] % (size - 1);
	data += 2;
	size -= 2;
	of.fp = null;
	o.ps_flags = flags;
	for (int i = 0; i < 3; i++)
		r.w[i] = r.ops[i]->begin(&of, &o);
	p = ps_new(flags, "fuzz", on_sample, &r);
	if (p) {
		ret = ps_feed(p, (const char *)data, cut);
		if (!ret)
			ret = ps_feed(p, (const char *)data + cut, size - cut);
		if (!ret)
			ret = ps_finish(p);
		/* an error is one line naming the input */
		if (ret && (strncmp(ps_error(p), "fuzz:", 5) || strchr(ps_error(p), '\n')))
			abort();
		if (!ret)
			for (int i = 0; i < 3; i++)
				if (r.w[i])
					r.ops[i]->end(r.w[i]);
		ps_free(p);
	}
	for (int i = 0; i < 3; i++)
		if (r.w[i])
			r.ops[i]->free(r.w[i]);
	return 0;
}
