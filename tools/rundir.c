/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a `jitperf record` directory holds (tools/rundir.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/jitdump_read.h"
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

size_t rundir_trim_dumps(const struct rundir *rd)
{
	size_t cut = 0;
	char err[512];

	for (size_t i = 0; i < rd->ndumps; i++) {
		struct jd_file *f;
		struct jd_record rec;
		uint64_t end = sizeof(struct jitdump_file_header);
		pid_t pid;
		int r;

		if (jd_open(&f, rd->dumps[i], err, sizeof(err)))
			continue;
		while ((r = jd_next(f, &rec, err, sizeof(err))) != 0 && r != -EBADMSG)
			end = rec.offset + rec.total_size;
		pid = (pid_t)jd_header(f)->pid;
		if (r == 0 && jd_zero_tail(f) && kill(pid, 0) < 0 && errno == ESRCH &&
		    truncate(rd->dumps[i], (off_t)end) == 0)
			cut++;
		jd_close(f);
	}
	return cut;
}

/*
 * perf.data (tools/perf/Documentation/perf.data-file-format.txt): a
 * 104-byte header whose data section {offset, size} sits at byte 40, then
 * records that each start with {u32 type, u16 misc, u16 size}.
 */
#define PERF_MAGIC2       0x32454c4946524550ULL   /* "PERFILE2" */
#define PERF_RECORD_SAMPLE 9

int perfdata_samples(const char *path, uint64_t *n)
{
	unsigned char hdr[104], *buf;
	uint64_t magic, off, size, p = 0, win = 0;
	size_t have = 0;
	const size_t cap = 1 << 20;
	int fd, err = 0;

	*n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf || pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		free(buf);
		close(fd);
		return buf ? -EINVAL : -ENOMEM;
	}
	memcpy(&magic, hdr, 8);
	memcpy(&off, hdr + 40, 8);
	memcpy(&size, hdr + 48, 8);
	if (magic != PERF_MAGIC2)
		err = -EINVAL;
	/* only each record's 8-byte header is read, through a 1 MiB window */
	while (!err && p + 8 <= size) {
		uint32_t type;
		uint16_t rsize;

		if (p < win || p + 8 > win + have) {
			ssize_t r = pread(fd, buf, cap, (off_t)(off + p));

			if (r < 8) {
				err = r < 0 ? -errno : -EINVAL;
				break;
			}
			win = p;
			have = (size_t)r;
		}
		memcpy(&type, buf + (p - win), 4);
		memcpy(&rsize, buf + (p - win) + 6, 2);
		if (rsize < 8) {
			err = -EINVAL;
			break;
		}
		*n += type == PERF_RECORD_SAMPLE;
		p += rsize;
	}
	free(buf);
	close(fd);
	return err;
}
