/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "instr-subr.h"

jitperf *instr_open(const char *dir, unsigned outputs, unsigned sample_every,
		    const char *counters)
{
	struct jitperf_options o = {
		.size = sizeof(o), .outputs = outputs, .dir = dir,
		.sample_every = sample_every, .counters = counters,
	};
	jitperf *jp = NULL;
	int err = jitperf_open(&jp, &o);

	ck_assert_msg(err == 0, "jitperf_open: %s", jitperf_strerror(err));
	return jp;
}

jitperf *instr_open_opts(const char *dir, struct jitperf_options *o)
{
	jitperf *jp = NULL;
	int err;

	o->size = sizeof(*o);
	o->dir = dir;
	err = jitperf_open(&jp, o);
	ck_assert_msg(err == 0, "jitperf_open: %s", jitperf_strerror(err));
	return jp;
}

char *instr_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	if (buf) {
		len = fread(buf, 1, (1 << 20) - 1, f);
		buf[len] = 0;
	}
	fclose(f);
	return buf;
}

int instr_stats_row(const char *dir, pid_t pid, const char *name, struct instr_row *row)
{
	char path[4200];
	char *text, *line, *save = NULL;
	int found = -1;

	snprintf(path, sizeof(path), "%s/jitperf-%d.stats", dir, (int)pid);
	text = instr_slurp(path);
	ck_assert_msg(text != NULL, "no %s", path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[20], *s2 = NULL, *tok;
		int n = 0;

		if (line[0] == '#' || !strncmp(line, "function\t", 9))
			continue;
		for (tok = strtok_r(line, "\t", &s2); tok && n < 20; tok = strtok_r(NULL, "\t", &s2))
			f[n++] = tok;
		ck_assert_msg(n >= 9, "short stats row in %s", path);
		if (strcmp(f[0], name))
			continue;
		memset(row, 0, sizeof(*row));
		snprintf(row->name, sizeof(row->name), "%s", f[0]);
		row->calls = strtoull(f[1], NULL, 10);
		row->timed = strtoull(f[2], NULL, 10);
		row->timing = strcmp(f[3], "-") != 0;
		row->total = strtoull(f[3], NULL, 10);
		row->self = strtoull(f[4], NULL, 10);
		row->min = strtoull(f[5], NULL, 10);
		row->mean = strtoull(f[6], NULL, 10);
		row->max = strtoull(f[7], NULL, 10);
		row->unbalanced = strtoull(f[8], NULL, 10);
		for (int i = 9; i < n && i - 9 < 8; i++)
			snprintf(row->ctr[row->nctr++], sizeof(row->ctr[0]), "%s", f[i]);
		found = 0;
		break;
	}
	free(text);
	return found;
}

struct jpt_reader *instr_trace_open(const char *dir, pid_t pid)
{
	char path[4200], err[512] = "";
	struct jpt_reader *r = NULL;
	int ret;

	snprintf(path, sizeof(path), "%s/jitperf-%d.trace", dir, (int)pid);
	ret = jpt_open(&r, path, err, sizeof(err));
	ck_assert_msg(ret == 0, "jpt_open: %s", err);
	return r;
}

struct count_arg { struct jpt_reader *r; const char *name; long n; };

static int count_cb(const struct jpt_call *c, void *arg)
{
	struct count_arg *a = arg;

	if (!strcmp(jpt_fn(a->r, c->fn)->name, a->name))
		a->n++;
	return 0;
}

long instr_trace_calls(const char *dir, pid_t pid, const char *name)
{
	struct count_arg a = { instr_trace_open(dir, pid), name, 0 };
	char err[512];

	if (jpt_for_each_call(a.r, count_cb, &a, err, sizeof(err)))
		a.n = -1;
	jpt_close(a.r);
	return a.n;
}
