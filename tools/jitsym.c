/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JIT code among perf's frames, and its names (tools/jitsym.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitsym.h"
#include "read/jitdump_read.h"
#include "read/perfmap_read.h"

struct load {
	uint64_t index;
	size_t   seq;                  /* order in the file */
	char    *name;
};

/* What the record directory holds of one process, read on first use. */
struct proc {
	uint32_t       pid;
	int            map_read, dump_read;
	struct pm_map *map;            /* DIR/perf-<pid>.map */
	struct load   *loads;          /* DIR/jit-<pid>.dump, by code index */
	size_t         nloads;
};

struct jitsym {
	char        *dir;
	struct proc *procs;
	size_t       nprocs;
	size_t       last;             /* frames come in runs of one process */
};

enum obj { OBJ_NONE, OBJ_MAP, OBJ_JITTED };

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* digits, at least one, up to a value that fits 32 bits; *end after them */
static int number(const char *s, uint64_t max, uint64_t *v, const char **end)
{
	uint64_t n = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > max)
			return 0;
	}
	*v = n;
	*end = p;
	return p > s;
}

static enum obj classify(const char *dso, uint32_t *pid, uint64_t *index)
{
	const char *b = base(dso), *p;
	uint64_t v;

	if (!strncmp(dso, "[JIT] tid ", 10)) {
		if (number(dso + 10, UINT32_MAX, &v, &p) && !*p) {
			*pid = (uint32_t)v;
			return OBJ_MAP;
		}
		return OBJ_NONE;
	}
	if (!strncmp(b, "perf-", 5) && number(b + 5, UINT32_MAX, &v, &p) && !strcmp(p, ".map")) {
		*pid = (uint32_t)v;
		return OBJ_MAP;
	}
	if (!strncmp(b, "jitted-", 7) && number(b + 7, UINT32_MAX, &v, &p) && *p == '-') {
		*pid = (uint32_t)v;
		if (number(p + 1, UINT64_MAX / 10, index, &p) && !strcmp(p, ".so"))
			return OBJ_JITTED;
	}
	return OBJ_NONE;
}

uint32_t jitsym_dso_pid(const char *dso)
{
	uint32_t pid = 0;
	uint64_t index;

	return classify(dso, &pid, &index) == OBJ_NONE ? 0 : pid;
}

/* perf's word for a symbol it does not know: "[unknown]", or the bare address */
static int unnamed(const char *sym)
{
	if (!sym || !*sym || !strcmp(sym, "[unknown]"))
		return 1;
	if (sym[0] != '0' || sym[1] != 'x' || !sym[2])
		return 0;
	for (sym += 2; *sym; sym++)
		if (!((*sym >= '0' && *sym <= '9') || (*sym >= 'a' && *sym <= 'f')))
			return 0;
	return 1;
}

int jitsym_new(struct jitsym **out, const char *dir)
{
	struct jitsym *js = calloc(1, sizeof(*js));

	*out = NULL;
	if (!js || (dir && !(js->dir = strdup(dir)))) {
		free(js);
		return -ENOMEM;
	}
	*out = js;
	return 0;
}

static void proc_free(struct proc *p)
{
	pm_free(p->map);
	for (size_t i = 0; i < p->nloads; i++)
		free(p->loads[i].name);
	free(p->loads);
}

void jitsym_free(struct jitsym *js)
{
	if (!js)
		return;
	for (size_t i = 0; i < js->nprocs; i++)
		proc_free(&js->procs[i]);
	free(js->procs);
	free(js->dir);
	free(js);
}

static struct proc *proc(struct jitsym *js, uint32_t pid)
{
	struct proc *p;

	if (js->last < js->nprocs && js->procs[js->last].pid == pid)
		return &js->procs[js->last];
	for (size_t i = 0; i < js->nprocs; i++) {
		if (js->procs[i].pid == pid) {
			js->last = i;
			return &js->procs[i];
		}
	}
	p = realloc(js->procs, (js->nprocs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	js->procs = p;
	js->last = js->nprocs++;
	p = &js->procs[js->last];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static int by_index(const void *a, const void *b)
{
	const struct load *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int index_cmp(const void *key, const void *elem)
{
	const struct load *x = key, *y = elem;

	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The CODE_LOAD names of DIR/jit-<pid>.dump by code index; a repeated
 * index names what perf inject kept, its last image.  A damaged file
 * gives what it holds up to the damage (jitperf dump --check says more).
 */
static int read_loads(struct proc *p, const char *path)
{
	struct jd_file *f;
	struct jd_record rec;
	char err[512];
	size_t cap = 0, n = 0;
	int r, ret = 0;

	if (jd_open(&f, path, err, sizeof(err)))
		return 0;
	while ((r = jd_next(f, &rec, err, sizeof(err))) != 0 && r != -EBADMSG) {
		struct load *l;

		if (r != 1 || rec.id != JIT_CODE_LOAD)
			continue;
		if (p->nloads == cap) {
			cap = cap ? cap * 2 : 64;
			l = realloc(p->loads, cap * sizeof(*l));
			if (!l) {
				ret = -ENOMEM;
				break;
			}
			p->loads = l;
		}
		l = &p->loads[p->nloads];
		l->index = rec.code_index;
		l->seq = p->nloads;
		if (!(l->name = strdup(rec.name))) {
			ret = -ENOMEM;
			break;
		}
		p->nloads++;
	}
	jd_close(f);
	if (ret || !p->nloads)
		return ret;
	/* by index; of a repeated index the last load is kept */
	qsort(p->loads, p->nloads, sizeof(*p->loads), by_index);
	for (size_t i = 0; i < p->nloads; i++) {
		if (n && p->loads[n - 1].index == p->loads[i].index) {
			free(p->loads[n - 1].name);
			p->loads[n - 1] = p->loads[i];
		} else {
			p->loads[n++] = p->loads[i];
		}
	}
	p->nloads = n;
	return 0;
}

static int map_name(struct jitsym *js, uint32_t pid, uint64_t ip, const char **name)
{
	const struct pm_sym *s;
	struct proc *p = proc(js, pid);
	char path[4096], err[512];

	if (!p)
		return -ENOMEM;
	if (!p->map_read && js->dir) {
		p->map_read = 1;
		snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map", js->dir, pid);
		if (pm_read(path, &p->map, err, sizeof(err)) == -ENOMEM)
			return -ENOMEM;
	}
	s = p->map ? pm_find(p->map, ip) : NULL;
	*name = s ? s->name : NULL;
	return 0;
}

static int load_name(struct jitsym *js, uint32_t pid, uint64_t index, const char **name)
{
	struct proc *p = proc(js, pid);
	struct load key = { index, 0, NULL }, *l;
	char path[4096];
	int err;

	if (!p)
		return -ENOMEM;
	if (!p->dump_read && js->dir) {
		p->dump_read = 1;
		snprintf(path, sizeof(path), "%s/jit-%" PRIu32 ".dump", js->dir, pid);
		err = read_loads(p, path);
		if (err)
			return err;
	}
	l = p->nloads ? bsearch(&key, p->loads, p->nloads, sizeof(*l), index_cmp) : NULL;
	*name = l ? l->name : NULL;
	return 0;
}

int jitsym_frame(struct jitsym *js, const char *dso, const char *sym, uint64_t ip,
		 const char **name)
{
	uint32_t pid = 0;
	uint64_t index = 0;
	int err;

	*name = NULL;
	switch (classify(dso, &pid, &index)) {
	case OBJ_MAP:
		err = map_name(js, pid, ip, name);
		if (err)
			return err;
		if (!*name && !unnamed(sym))
			*name = sym;
		return 1;
	case OBJ_JITTED:
		if (!unnamed(sym)) {
			*name = sym;
			return 1;
		}
		err = load_name(js, pid, index, name);
		return err ? err : 1;
	default:
		return 0;
	}
}
