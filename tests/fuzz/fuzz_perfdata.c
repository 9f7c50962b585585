/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness: arbitrary bytes as perf.data, through the reader, the
 * session (threads, maps, symbols) and the folded, SVG and Chrome writers,
 * with the option flags taken from the first byte.  Every error must be
 * one line naming the file.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/pdscript.h"
#include "read/perfdata.h"
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

static void check_err(const char *err)
{
	if (strncmp(err, "fuzz.data: ", 11) || strchr(err, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct outfile of = { .path = "/dev/null" };
	struct cv_opts o = { .title = "fuzz" };
	struct run r = { .ops = { &cv_folded_ops, &cv_svg_ops, &cv_chrome_ops } };
	struct pd_script_info info;
	struct pd_file *f;
	char err[512];
	unsigned flags;
	int ret;

	if (!null && !(null = fopen("/dev/null", "w")))
		return 0;
	if (size < 1)
		return 0;
	flags = data[0] & (PS_PID | PS_TID | PS_KERNEL | PS_JIT | PS_ADDRS);
	data++;
	size--;
	of.fp = null;
	o.ps_flags = flags;
	ret = pd_open_mem(&f, data, size, "fuzz.data", err, sizeof(err));
	if (ret) {
		check_err(err);
		return 0;
	}
	for (int i = 0; i < 3; i++)
		r.w[i] = r.ops[i]->begin(&of, &o);
	ret = pd_script_read_file(f, flags, NULL, on_sample, &r, &info, err, sizeof(err));
	if (ret < 0 && ret != -EOPNOTSUPP)
		check_err(err);
	for (int i = 0; i < 3; i++) {
		if (r.w[i] && !ret)
			r.ops[i]->end(r.w[i]);
		if (r.w[i])
			r.ops[i]->free(r.w[i]);
	}
	pd_close(f);
	return 0;
}
