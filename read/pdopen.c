/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Opening a perf.data (read/perfdata.h): a file mapped whole, a buffer or
 * a stream read whole, then its header parsed (perfdata.c) and its records
 * indexed (pdrecords.c).  Above both: neither calls back into this file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pdfile.h"
#include "util.h"

/*
 * An event without a recorded name is named from its type and config as
 * perf names it (evsel__name), for the common events at least.
 */
static int name_attrs(struct pd_file *f)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branch-instructions", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles",
	};
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
		"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
		"bpf-output", "cgroup-switches",
	};
	size_t i;

	for (i = 0; i < f->nattrs; i++) {
		struct pd_attr *a = &f->attrs[i];
		const char *n = NULL;
		char buf[64];

		if (a->name)
			continue;
		if (a->attr.type == PERF_TYPE_HARDWARE && a->attr.config < 10)
			n = hw[a->attr.config];
		else if (a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config < 12)
			n = sw[a->attr.config];
		if (!n) {
			snprintf(buf, sizeof(buf), "raw-%u-0x%llx", a->attr.type,
				 (unsigned long long)a->attr.config);
			n = buf;
		}
		a->name = strdup(n);
		if (!a->name)
			return -ENOMEM;
	}
	return 0;
}

static int finish_open(struct pd_file *f, struct pd_file **out, int index, char *err,
		       size_t errlen)
{
	int ret = pd_parse_header(f, err, errlen);

	/* pipe mode: the attributes come in the records, taken in as they are indexed */
	if (!ret && f->pipe)
		ret = pd_index_records(f, err, errlen);
	if (!ret)
		ret = name_attrs(f);
	if (!ret && index && !f->indexed)
		ret = pd_index_records(f, err, errlen);

	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", f->path);
	if (ret) {
		pd_close(f);
		return ret;
	}
	if (f->nattrs == 0) {
		ret = pd_file_fail(f->path, err, errlen, f->size, "no event attributes");
		pd_close(f);
		return ret;
	}
	*out = f;
	return 0;
}

int pd_open_mem(struct pd_file **out, const void *data, size_t len, const char *name,
		char *err, size_t errlen)
{
	struct pd_file *f = calloc(1, sizeof(*f));
	void *copy = malloc(len ? len : 1);

	if (!f || !copy || !(f->path = strdup(name))) {
		free(copy);
		free(f);
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	memcpy(copy, data, len);
	f->data = copy;
	f->size = len;
	return finish_open(f, out, 1, err, errlen);
}

int pd_open_stream(struct pd_file **out, int fd, const void *head, size_t headlen,
		   const char *name, char *err, size_t errlen)
{
	struct pd_file *f = calloc(1, sizeof(*f));
	unsigned char *d = NULL;
	int ret;

	if (!f || !(f->path = strdup(name))) {
		free(f);
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	ret = rd_slurp(fd, head, headlen, 0, &d, &f->size);
	if (ret) {
		snprintf(err, errlen, "%s: %s", name, strerror(-ret));
		pd_close(f);
		return ret;
	}
	f->data = d;
	return finish_open(f, out, 1, err, errlen);
}

/* index: the records checked and ordered too; populate: every page read at once */
static int open_path(struct pd_file **out, const char *path, int index, int populate,
		     char *err, size_t errlen)
{
	struct pd_file *f = calloc(1, sizeof(*f));
	struct stat st;
	int fd = -1, ret;

	if (!f || !(f->path = strdup(path))) {
		free(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out_err;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		/* every page is to be read: fault them in at once */
		void *m = mmap(NULL, st.st_size, PROT_READ,
			       MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);

		if (m == MAP_FAILED) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out_err;
		}
		if (populate)
			madvise(m, st.st_size, MADV_WILLNEED);
		f->data = m;
		f->size = st.st_size;
		f->mapped = 1;
	} else {
		unsigned char *d = NULL;

		ret = rd_slurp(fd, NULL, 0, 0, &d, &f->size);
		if (ret) {
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
			goto out_err;
		}
		f->data = d;
	}
	if (fd > 0)
		close(fd);
	return finish_open(f, out, index, err, errlen);
out_err:
	if (fd > 0)
		close(fd);
	pd_close(f);
	return ret;
}

int pd_open(struct pd_file **out, const char *path, char *err, size_t errlen)
{
	return open_path(out, path, 1, 1, err, errlen);
}

int pd_open_unindexed(struct pd_file **out, const char *path, char *err, size_t errlen)
{
	return open_path(out, path, 0, 1, err, errlen);
}

int pd_check_header(const char *path, char *err, size_t errlen)
{
	struct pd_file *f;
	int ret = open_path(&f, path, 0, 0, err, errlen);

	if (!ret)
		pd_close(f);
	return ret;
}
