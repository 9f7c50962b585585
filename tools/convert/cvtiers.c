/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tiers files of a conversion, read record by record (read/tiers_read.h)
 * into the few facts the outputs show: compiles (thread, begin, end,
 * status, nesting), the request each answers, the install of its code, and
 * the tags that name tier code func[tag].
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvtiers.h"
#include "read/tiers_read.h"
#include "read/util.h"

struct request {
	const char *func;     /* in the tiers file's buffer, valid while it is open */
	unsigned    tier;
	uint32_t    tid;
	uint64_t    ts;
};

/* One file's reading: the tags in force and where its compiles start. */
struct one {
	struct tr_file *f;
	uint32_t        pid;
	char            cur[JPTIERS_TIERS][64];
	size_t          first;          /* its first compile in t->compiles */
	struct request *req;
	size_t          nreq, cap_req;
	uint64_t        close_ns, last_ns;
	size_t          cap_compiles, cap_tags;
};

static int add_tag(struct cv_tiers *t, struct one *o, unsigned tier, const char *tag)
{
	for (size_t i = 0; i < t->ntags; i++)
		if (t->tags[i].pid == o->pid && t->tags[i].tier == tier &&
		    !strcmp(t->tags[i].tag, tag))
			return 0;
	if (rd_grow((void **)&t->tags, &o->cap_tags, t->ntags + 1, sizeof(*t->tags)))
		return -ENOMEM;
	t->tags[t->ntags].pid = o->pid;
	t->tags[t->ntags].tier = tier;
	snprintf(t->tags[t->ntags].tag, sizeof(t->tags[0].tag), "%s", tag);
	t->ntags++;
	return 0;
}

/* a compile of this file by its id; the latest begun first */
static struct cv_compile *find(struct cv_tiers *t, const struct one *o, uint64_t id)
{
	for (size_t i = t->ncompiles; i > o->first; i--)
		if (t->compiles[i - 1].id == id)
			return &t->compiles[i - 1];
	return NULL;
}

static int on_record(struct cv_tiers *t, struct one *o, const struct tr_record *r)
{
	struct cv_compile *c;

	if (r->type != JPTIERS_TIER_NAME && r->type < JPTIERS_TYPE_MAX && r->timestamp > o->last_ns)
		o->last_ns = r->timestamp;
	switch (r->type) {
	case JPTIERS_TIER_NAME:
		if (r->tier >= JPTIERS_TIERS)
			return 0;
		snprintf(o->cur[r->tier], sizeof(o->cur[0]), "%s", r->text);
		return add_tag(t, o, r->tier, r->text);
	case JPTIERS_TIER_REQUEST:
		if (rd_grow((void **)&o->req, &o->cap_req, o->nreq + 1, sizeof(*o->req)))
			return -ENOMEM;
		o->req[o->nreq++] = (struct request){ r->text, r->tier, r->tid, r->timestamp };
		return 0;
	case JPTIERS_COMPILE_BEGIN:
		if (r->tier >= JPTIERS_TIERS)
			return 0;
		if (rd_grow((void **)&t->compiles, &o->cap_compiles, t->ncompiles + 1,
			    sizeof(*t->compiles)))
			return -ENOMEM;
		c = &t->compiles[t->ncompiles];
		*c = (struct cv_compile){
			.pid = o->pid, .tid = r->tid, .id = r->id, .parent = r->parent,
			.tier = r->tier, .func = strdup(r->text), .begin_ns = r->timestamp,
			.unfinished = 1,
		};
		if (!c->func)
			return -ENOMEM;
		memcpy(c->tag, o->cur[r->tier], sizeof(c->tag));
		t->ncompiles++;
		return 0;
	case JPTIERS_COMPILE_END:
		if ((c = find(t, o, r->id)) && c->unfinished) {
			c->unfinished = 0;
			/* a clock that went back must not make a span of 584 years */
			c->end_ns = r->timestamp > c->begin_ns ? r->timestamp : c->begin_ns;
			c->status = r->status;
		}
		return 0;
	case JPTIERS_INSTALL:
		if ((c = find(t, o, r->compile)) && !c->installed) {
			c->installed = 1;
			c->install_ns = r->timestamp;
			memcpy(c->tag, o->cur[c->tier], sizeof(c->tag));
		}
		return 0;
	case JPTIERS_CLOSE:
		o->close_ns = r->timestamp;
		return 0;
	default:                        /* a later version's record: skipped */
		return 0;
	}
}

/*
 * The joins: a request answers the first compile of its function and tier
 * that begins at or after it; a compile never ended ends with the session.
 */
static void join(struct cv_tiers *t, struct one *o)
{
	uint64_t close = o->close_ns ? o->close_ns : o->last_ns;

	for (size_t i = o->first; i < t->ncompiles; i++) {
		struct cv_compile *c = &t->compiles[i];

		if (c->unfinished)
			c->end_ns = close > c->begin_ns ? close : c->begin_ns;
	}
	for (size_t k = 0; k < o->nreq; k++) {
		const struct request *q = &o->req[k];
		struct cv_compile *best = NULL;

		for (size_t i = o->first; i < t->ncompiles; i++) {
			struct cv_compile *c = &t->compiles[i];

			if (!c->requested && c->tier == q->tier && c->begin_ns >= q->ts &&
			    !strcmp(c->func, q->func) && (!best || c->begin_ns < best->begin_ns))
				best = c;
		}
		if (best) {
			best->requested = 1;
			best->request_tid = q->tid;
			best->request_ns = q->ts;
		}
	}
}

static int read_one(struct cv_tiers *t, const char *path, size_t *cap_compiles,
		    size_t *cap_tags, char *err, size_t errlen)
{
	struct one o = { .first = t->ncompiles, .cap_compiles = *cap_compiles,
			 .cap_tags = *cap_tags };
	struct tr_record r;
	int ret;

	ret = tr_open(&o.f, path, err, errlen);
	if (ret)
		return ret;
	o.pid = tr_header(o.f)->pid;
	for (unsigned i = 0; i < JPTIERS_TIERS && !ret; i++) {
		snprintf(o.cur[i], sizeof(o.cur[0]), "tier%u", i);
		ret = add_tag(t, &o, i, o.cur[i]);
	}
	while (!ret && (ret = tr_next(o.f, &r, err, errlen)) == 1)
		ret = on_record(t, &o, &r);
	if (!ret)
		join(t, &o);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	*cap_compiles = o.cap_compiles;
	*cap_tags = o.cap_tags;
	free(o.req);
	tr_close(o.f);
	t->nfiles++;
	return ret;
}

static const struct cv_tiers *sort_t;

static int by_code(const void *a, const void *b)
{
	const struct cv_compile *x = &sort_t->compiles[*(const size_t *)a];
	const struct cv_compile *y = &sort_t->compiles[*(const size_t *)b];
	int r;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if ((r = strcmp(x->func, y->func)) || (r = strcmp(x->tag, y->tag)))
		return r;
	return x->install_ns < y->install_ns ? -1 : x->install_ns > y->install_ns;
}

static int index_installs(struct cv_tiers *t)
{
	t->by_func = malloc((t->ncompiles + 1) * sizeof(*t->by_func));
	if (!t->by_func)
		return -ENOMEM;
	for (size_t i = 0; i < t->ncompiles; i++)
		if (t->compiles[i].installed)
			t->by_func[t->nby_func++] = i;
	sort_t = t;
	qsort(t->by_func, t->nby_func, sizeof(*t->by_func), by_code);
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cv_tiers_read(struct cv_tiers *t, const char *path, int is_dir, char *err, size_t errlen)
{
	size_t cap_compiles = 0, cap_tags = 0, n = 0, cap = 0, i, dn;
	char *dir, **paths = NULL;
	const char *slash;
	struct dirent *de;
	int ret = 0;
	DIR *d;

	memset(t, 0, sizeof(*t));
	slash = strrchr(path, '/');
	dir = is_dir ? strdup(path) : slash ? strndup(path, slash == path ? 1 : slash - path)
					    : strdup(".");
	if (!dir)
		return -ENOMEM;
	d = opendir(dir);
	if (!d) {       /* the input's own reader says what is wrong with it */
		free(dir);
		return 0;
	}
	while (!ret && (de = readdir(d))) {
		dn = strlen(de->d_name);
		if (dn <= 10 || strncmp(de->d_name, "jit-", 4) || strcmp(de->d_name + dn - 6, ".tiers"))
			continue;
		if (rd_grow((void **)&paths, &cap, n + 1, sizeof(*paths)) ||
		    asprintf(&paths[n], "%s/%s", dir, de->d_name) < 0)
			ret = -ENOMEM;
		else
			n++;
	}
	closedir(d);
	free(dir);
	if (n)
		qsort(paths, n, sizeof(*paths), by_path);
	for (i = 0; i < n && !ret; i++)
		ret = read_one(t, paths[i], &cap_compiles, &cap_tags, err, errlen);
	if (!ret)
		ret = index_installs(t);
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (ret == -ENOMEM && !err[0])
		snprintf(err, errlen, "%s: out of memory", path);
	return ret;
}

void cv_tiers_free(struct cv_tiers *t)
{
	for (size_t i = 0; i < t->ncompiles; i++)
		free(t->compiles[i].func);
	free(t->compiles);
	free(t->tags);
	free(t->by_func);
	memset(t, 0, sizeof(*t));
}

/* the tier of a tag any process gave, -1 if none did */
static int tier_of(const struct cv_tiers *t, const char *tag, size_t n)
{
	for (size_t i = 0; i < t->ntags; i++)
		if (strlen(t->tags[i].tag) == n && !memcmp(t->tags[i].tag, tag, n))
			return (int)t->tags[i].tier;
	return -1;
}

int cv_tiers_split(const struct cv_tiers *t, const char *name, size_t len, size_t *func_len,
		   size_t *tag_off, size_t *tag_len, unsigned *tier)
{
	size_t end = len, open;
	const char *colon;
	int k;

	if (!t || !t->ntags || !len)
		return 0;
	/* stackcollapse's annotations (_[j], _[k], _[i], _[w]) follow the name */
	if (end >= 4 && name[end - 4] == '_' && name[end - 3] == '[' && name[end - 1] == ']')
		end -= 4;
	/* --srcline: func[tag]:file:line; a tag has no ':' of its own to confuse */
	colon = memchr(name, ']', end) ? memmem(name, end, "]:", 2) : NULL;
	if (colon)
		end = colon - name + 1;
	if (end < 3 || name[end - 1] != ']')
		return 0;
	for (open = end - 1; open > 0 && name[open - 1] != '['; open--)
		;
	if (open < 2 || open == end - 1)   /* "[x]" alone, or "f[]": no function or no tag */
		return 0;
	k = tier_of(t, name + open, end - 1 - open);
	if (k < 0)
		return 0;
	*func_len = open - 1;
	*tag_off = open;
	*tag_len = end - 1 - open;
	*tier = (unsigned)k;
	return 1;
}

size_t cv_tiers_strip(const struct cv_tiers *t, char *name, size_t len)
{
	size_t func_len, off, n;
	unsigned tier;

	if (!memchr(name, ']', len) || !cv_tiers_split(t, name, len, &func_len, &off, &n, &tier))
		return len;
	/* "[" tag "]" out */
	memmove(name + func_len, name + off + n + 1, len - (off + n + 1));
	return len - (n + 2);
}

/* a compile against (pid, func, tag): <0, 0, >0 */
static int cmp_key(const struct cv_compile *c, uint32_t pid, const char *func, size_t flen,
		   const char *tag, size_t tlen)
{
	int r;

	if (c->pid != pid)
		return c->pid < pid ? -1 : 1;
	if ((r = strncmp(c->func, func, flen)) || (r = (c->func[flen] != 0)))
		return r;
	if ((r = strncmp(c->tag, tag, tlen)))
		return r;
	return c->tag[tlen] != 0;
}

size_t cv_tiers_code_of(const struct cv_tiers *t, uint32_t pid, const char *name, size_t len,
			size_t *first)
{
	size_t func_len, off, n, lo = 0, hi, i;
	unsigned tier;

	*first = 0;
	if (!t || !t->nby_func || !memchr(name, ']', len) ||
	    !cv_tiers_split(t, name, len, &func_len, &off, &n, &tier))
		return 0;
	hi = t->nby_func;
	while (lo < hi) {               /* the first of (pid, func, tag) */
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(&t->compiles[t->by_func[mid]], pid, name, func_len, name + off, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < t->nby_func; i++)
		if (cmp_key(&t->compiles[t->by_func[i]], pid, name, func_len, name + off, n))
			break;
	*first = lo;
	return i - lo;
}
