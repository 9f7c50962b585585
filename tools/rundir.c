/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a `jitperf record` directory holds (tools/rundir.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "read/jitdump_read.h"
#include "read/perfdata.h"
#include "rundir.h"

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* name is PREFIX<digits>SUFFIX */
static int matches(const char *name, const char *prefix, const char *suffix)
{
	size_t lp = strlen(prefix), ls = strlen(suffix), ln = strlen(name);

	if (ln <= lp + ls || strncmp(name, prefix, lp) || strcmp(name + ln - ls, suffix))
		return 0;
	for (size_t i = lp; i < ln - ls; i++)
		if (name[i] < '0' || name[i] > '9')
			return 0;
	return 1;
}

static int add(char ***list, size_t *n, const char *dir, const char *name)
{
	char **l = realloc(*list, (*n + 1) * sizeof(char *));

	if (!l)
		return -ENOMEM;
	*list = l;
	if (asprintf(&l[*n], "%s/%s", dir, name) < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/*
 * A perf.jit.data that cannot be read, beside a perf.data: perf.data is
 * read instead (jitperf inject cut short, or the file damaged since),
 * said in one line.
 */
static void check_jit_data(const char *dir, struct rundir *rd)
{
	char path[PATH_MAX], err[512];

	if (!rd->has_jit_data || !rd->has_perf_data)
		return;
	snprintf(path, sizeof(path), "%s/perf.jit.data", dir);
	if (pd_check_header(path, err, sizeof(err)) == 0)
		return;
	rd->has_jit_data = 0;
	cmd_err("%s; reading %s/perf.data instead", err, dir);
}

int rundir_scan(const char *dir, struct rundir *rd)
{
	struct dirent *de;
	DIR *d;
	int err = 0;

	memset(rd, 0, sizeof(*rd));
	d = opendir(dir);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		const char *n = de->d_name;

		if (matches(n, "jit-", ".dump"))
			err = add(&rd->dumps, &rd->ndumps, dir, n);
		else if (matches(n, "jitperf-", ".stats"))
			err = add(&rd->stats, &rd->nstats, dir, n);
		else if (matches(n, "jitperf-", ".trace"))
			err = add(&rd->traces, &rd->ntraces, dir, n);
		else if (matches(n, "perf-", ".map"))
			err = add(&rd->maps, &rd->nmaps, dir, n);
		else if (!strcmp(n, "perf.data"))
			rd->has_perf_data = 1;
		else if (!strcmp(n, "perf.jit.data"))
			rd->has_jit_data = 1;
	}
	closedir(d);
	if (err) {
		rundir_free(rd);
		return err;
	}
	if (rd->ndumps)
		qsort(rd->dumps, rd->ndumps, sizeof(char *), cmpstr);
	if (rd->nstats)
		qsort(rd->stats, rd->nstats, sizeof(char *), cmpstr);
	if (rd->ntraces)
		qsort(rd->traces, rd->ntraces, sizeof(char *), cmpstr);
	if (rd->nmaps)
		qsort(rd->maps, rd->nmaps, sizeof(char *), cmpstr);
	check_jit_data(dir, rd);
	return 0;
}

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

void rundir_free(struct rundir *rd)
{
	free_list(rd->dumps, rd->ndumps);
	free_list(rd->stats, rd->nstats);
	free_list(rd->traces, rd->ntraces);
	free_list(rd->maps, rd->nmaps);
	memset(rd, 0, sizeof(*rd));
}

uint64_t rundir_code_loads(const struct rundir *rd)
{
	uint64_t n = 0;
	char err[512];

	for (size_t i = 0; i < rd->ndumps; i++) {
		struct jd_file *f;
		struct jd_record rec;
		int r;

		if (jd_open(&f, rd->dumps[i], err, sizeof(err)))
			continue;
		while ((r = jd_next(f, &rec, err, sizeof(err))) != 0 && r != -EBADMSG)
			n += r == 1 && rec.id == JIT_CODE_LOAD;
		jd_close(f);
	}
	return n;
}
