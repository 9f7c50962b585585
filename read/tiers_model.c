/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A tiers file joined per function and tier; tier marks in names (read/tiers_model.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiers_model.h"
#include "tiers_read.h"

/* Arrays grow at 16, 32, 64, ... elements: room for element n. */
static int grow(void **v, size_t n, size_t size)
{
	void *p;

	if (n && (n < 16 || (n & (n - 1))))
		return 0;
	p = realloc(*v, (n ? 2 * n : 16) * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	return 0;
}

static struct tm_compile *find_compile(struct tm_model *m, uint64_t id)
{
	/* ids are 1, 2, ... in the order of begins, which the file mostly keeps */
	if (id && id <= m->ncompiles && m->compiles[id - 1].id == id)
		return &m->compiles[id - 1];
	for (size_t i = 0; i < m->ncompiles; i++)
		if (m->compiles[i].id == id)
			return &m->compiles[i];
	return NULL;
}

static int add_compile(struct tm_model *m, const struct tr_record *r)
{
	struct tm_compile *c;

	if (grow((void **)&m->compiles, m->ncompiles, sizeof(*c)))
		return -ENOMEM;
	c = &m->compiles[m->ncompiles];
	*c = (struct tm_compile){ .tier = r->tier, .tid = r->tid, .id = r->id, .parent = r->parent,
				  .begin = r->timestamp, .end = TM_NO_TIME,
				  .request = TM_NO_TIME, .install = TM_NO_TIME };
	if (!(c->func = strdup(r->text)))
		return -ENOMEM;
	m->ncompiles++;
	return 0;
}

static int add_request(struct tm_model *m, const struct tr_record *r)
{
	struct tm_request *q;

	if (grow((void **)&m->requests, m->nrequests, sizeof(*q)))
		return -ENOMEM;
	q = &m->requests[m->nrequests];
	*q = (struct tm_request){ .tier = r->tier, .tid = r->tid, .ts = r->timestamp };
	if (!(q->func = strdup(r->text)))
		return -ENOMEM;
	m->nrequests++;
	return 0;
}

/* A request or a compile's begin, for matching them (match_requests). */
struct event {
	const char *func;
	unsigned    tier;
	uint64_t    ts;
	int         compile;        /* 0 a request, 1 a compile's begin */
	size_t      i;
};

/* by function and tier, then time; at one time a request first, as a
 * request made at a compile's begin is answered by it */
static int by_event(const void *x, const void *y)
{
	const struct event *a = x, *b = y;
	int c = a->tier != b->tier ? (a->tier < b->tier ? -1 : 1) : strcmp(a->func, b->func);

	if (c)
		return c;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->compile - b->compile;
}

/*
 * Each compile, in the order they began, answers the latest unanswered
 * request of its function and tier made before it began: in time order
 * per function and tier, requests are stacked and each begin takes the
 * top.  0 or -ENOMEM.
 */
static int match_requests(struct tm_model *m)
{
	size_t n = m->ncompiles + m->nrequests, top = 0, k;
	struct event *ev;
	size_t *stack;

	if (!m->ncompiles || !m->nrequests)
		return 0;
	ev = calloc(n, sizeof(*ev));
	stack = calloc(m->nrequests, sizeof(*stack));
	if (!ev || !stack) {
		free(ev);
		free(stack);
		return -ENOMEM;
	}
	for (k = 0; k < m->nrequests; k++)
		ev[k] = (struct event){ m->requests[k].func, m->requests[k].tier, m->requests[k].ts, 0, k };
	for (k = 0; k < m->ncompiles; k++)
		ev[m->nrequests + k] = (struct event){ m->compiles[k].func, m->compiles[k].tier,
						       m->compiles[k].begin, 1, k };
	qsort(ev, n, sizeof(*ev), by_event);
	for (k = 0; k < n; k++) {
		if (k && (ev[k].tier != ev[k - 1].tier || strcmp(ev[k].func, ev[k - 1].func)))
			top = 0;                /* another function or tier */
		if (!ev[k].compile) {
			stack[top++] = ev[k].i;
		} else if (top) {
			struct tm_request *q = &m->requests[stack[--top]];

			q->used = 1;
			m->compiles[ev[k].i].request = q->ts;
		}
	}
	free(ev);
	free(stack);
	return 0;
}

static int record(struct tm_model *m, const struct tr_record *r, char *errbuf, size_t errlen)
{
	struct tm_compile *c;

	switch (r->type) {
	case JPTIERS_TIER_NAME:
		if (r->tier < JPTIERS_TIERS)
			snprintf(m->tags[r->tier], sizeof(m->tags[0]), "%s", r->text);
		return 0;
	case JPTIERS_TIER_REQUEST:
		return add_request(m, r);
	case JPTIERS_COMPILE_BEGIN:
		return add_compile(m, r);
	case JPTIERS_COMPILE_END:
	case JPTIERS_INSTALL:
		c = find_compile(m, r->type == JPTIERS_INSTALL ? r->compile : r->id);
		if (!c) {               /* begun before a fork, in the parent's file */
			m->elsewhere++;
			return 0;
		}
		if (r->type == JPTIERS_INSTALL) {
			m->ninstalls++;
			if (c->install == TM_NO_TIME)
				c->install = r->timestamp;
		} else {
			c->end = r->timestamp;
			c->status = r->status;
		}
		return 0;
	case JPTIERS_CLOSE:
		m->closed = 1;
		return 0;
	default:
		return 0;   /* a later version's record */
	}
}

int tm_load(struct tm_model *m, const char *path, char *errbuf, size_t errlen)
{
	struct tr_file *f;
	struct tr_record r;
	int err;

	memset(m, 0, sizeof(*m));
	m->path = path;
	for (unsigned t = 0; t < JPTIERS_TIERS; t++)
		snprintf(m->tags[t], sizeof(m->tags[0]), "tier%u", t);
	err = tr_open(&f, path, errbuf, errlen);
	if (err)
		return err;
	m->pid = tr_header(f)->pid;
	m->start = tr_header(f)->timestamp;
	while ((err = tr_next(f, &r, errbuf, errlen)) == 1) {
		err = record(m, &r, errbuf, errlen);
		if (err == -ENOMEM)
			snprintf(errbuf, errlen, "%s: %s", path, strerror(ENOMEM));
		if (err)
			break;
	}
	tr_close(f);
	if (err) {
		tm_free(m);
		return err;
	}
	if ((err = match_requests(m))) {
		snprintf(errbuf, errlen, "%s: %s", path, strerror(ENOMEM));
		tm_free(m);
	}
	return err;
}

void tm_free(struct tm_model *m)
{
	for (size_t i = 0; i < m->ncompiles; i++)
		free(m->compiles[i].func);
	for (size_t i = 0; i < m->nrequests; i++)
		free(m->requests[i].func);
	free(m->compiles);
	free(m->requests);
	m->compiles = NULL;
	m->requests = NULL;
	m->ncompiles = m->nrequests = 0;
}

int tm_tier_of_tag(const struct tm_model *m, const char *tag)
{
	for (int t = JPTIERS_TIERS - 1; t >= 0; t--)
		if (!strcmp(m->tags[t], tag))
			return t;
	return -1;
}

static int cmp_row(const void *a, const void *b)
{
	const struct tm_row *x = a, *y = b;
	int c = strcmp(x->func, y->func);

	return c ? c : (x->tier > y->tier) - (x->tier < y->tier);
}

static struct tm_row *row_of(struct tm_row *rows, size_t *n, const char *func, unsigned tier)
{
	for (size_t i = 0; i < *n; i++)
		if (rows[i].tier == tier && !strcmp(rows[i].func, func))
			return &rows[i];
	rows[*n] = (struct tm_row){ .func = func, .tier = tier, .queue_ns = TM_NO_TIME,
				    .request = TM_NO_TIME, .install = TM_NO_TIME };
	return &rows[(*n)++];
}

static uint64_t min_time(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int tm_rows(const struct tm_model *m, struct tm_row **rowsp, size_t *nrows)
{
	struct tm_row *rows = calloc(m->ncompiles + m->nrequests + 1, sizeof(*rows));
	size_t n = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < m->ncompiles; i++) {
		const struct tm_compile *c = &m->compiles[i];
		struct tm_row *r = row_of(rows, &n, c->func, c->tier);

		r->compiles++;
		if (c->end == TM_NO_TIME) {
			r->unfinished++;
		} else {
			uint64_t ns = c->end > c->begin ? c->end - c->begin : 0;

			r->failed += c->status < 0;
			r->compile_ns += ns;
			if (ns >= r->compile_max_ns) {
				r->compile_max_ns = ns;
				r->compile_tid = c->tid;
			}
		}
		if (!r->compile_tid)
			r->compile_tid = c->tid;
		if (c->request != TM_NO_TIME)
			r->queue_ns = (r->queue_ns == TM_NO_TIME ? 0 : r->queue_ns) +
				      (c->begin - c->request);
		r->install = min_time(r->install, c->install);
	}
	for (size_t i = 0; i < m->nrequests; i++) {
		const struct tm_request *q = &m->requests[i];
		struct tm_row *r = row_of(rows, &n, q->func, q->tier);

		r->request = min_time(r->request, q->ts);
	}
	qsort(rows, n, sizeof(*rows), cmp_row);
	*rowsp = rows;
	*nrows = n;
	return 0;
}

/*
 * .NET's suffixes with DOTNET_PerfMapShowOptimizationTiers=1, by the tier
 * .NET's tiered compilation gives them: 0 the code a method starts in,
 * 1 the optimized code it is promoted to (or starts in, with tiering off).
 */
static const struct { const char *tag; int tier; } dotnet_tags[] = {
	{ "QuickJitted", 0 }, { "MinOptJitted", 0 }, { "PreJIT", 0 }, { "InstrumentedTier", 0 },
	{ "OptimizedTier1", 1 }, { "OptimizedTier1OSR", 1 }, { "Optimized", 1 },
	{ "InstrumentedTierOptimized", 1 },
};

/* V8's marks, Ignition to TurboFan. */
static int v8_tier(char c)
{
	const char *marks = "~^+*", *p = c ? strchr(marks, c) : NULL;

	return p ? (int)(p - marks) : -1;
}

/*
 * "JS:*fib file.js:2:13", "LazyCompile:~fib file.js:2:13": a word of
 * letters, a colon, the mark, the name (empty: an anonymous function),
 * then after the first space the location.
 */
static int parse_v8(const char *name, struct tm_mark *mk)
{
	size_t i = 0, sp;

	while ((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z'))
		i++;
	if (!i || name[i] != ':' || v8_tier(name[i + 1]) < 0)
		return 0;
	*mk = (struct tm_mark){ .kind = TM_V8, .tier = v8_tier(name[i + 1]),
				.tag_off = i + 1, .tag_len = 1, .func_off = i + 2 };
	sp = strcspn(name + mk->func_off, " ");
	mk->func_len = sp;
	if (name[mk->func_off + sp]) {
		mk->loc_off = mk->func_off + sp + 1;
		mk->loc_len = strlen(name + mk->loc_off);
	}
	return 1;
}

/* "func[tag]": the tag between the last '[' and the final ']'. */
static int parse_bracket(const char *name, struct tm_mark *mk)
{
	size_t len = strlen(name);
	const char *open;
	size_t tag_off, tag_len;

	if (len < 3 || name[len - 1] != ']')
		return 0;
	open = strrchr(name, '[');
	if (!open || open == name)
		return 0;
	tag_off = (size_t)(open - name) + 1;
	tag_len = len - 1 - tag_off;
	if (!tag_len)
		return 0;
	*mk = (struct tm_mark){ .kind = TM_JITPERF, .tier = -1, .func_len = tag_off - 1,
				.tag_off = tag_off, .tag_len = tag_len };
	for (size_t i = 0; i < sizeof(dotnet_tags) / sizeof(dotnet_tags[0]); i++)
		if (strlen(dotnet_tags[i].tag) == tag_len &&
		    !memcmp(name + tag_off, dotnet_tags[i].tag, tag_len)) {
			mk->kind = TM_DOTNET;
			mk->tier = dotnet_tags[i].tier;
			return 1;
		}
	/* jitperf's default tags name their tier */
	if (tag_len > 4 && tag_len <= 6 && !memcmp(name + tag_off, "tier", 4)) {
		char num[3] = { 0 };
		char *end;
		long t;

		memcpy(num, name + tag_off + 4, tag_len - 4);
		t = strtol(num, &end, 10);
		if (*end == '\0' && num[0] >= '0' && num[0] <= '9' && t < JPTIERS_TIERS &&
		    (num[0] != '0' || !num[1]))
			mk->tier = (int)t;
	}
	return 1;
}

int tm_mark_parse(const char *name, struct tm_mark *mk)
{
	memset(mk, 0, sizeof(*mk));
	/* jitperf_wrap's thunks ("wrap:NAME") time a function; they are not its code */
	if (!name || !strncmp(name, "wrap:", 5))
		return 0;
	return parse_v8(name, mk) || parse_bracket(name, mk);
}
