/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report --tiers: one row per logical function and tier, joining
 * three sources on the function and the tier.
 *
 *  - The tiers files (jit-<pid>.tiers, read/tiers_model.h): compiles,
 *    queue, install.  Only libjitperf writes them.
 *  - perf's samples, by the tier mark in the symbol's name: jitperf's
 *    func[tag], V8's "JS:*fib file.js:2:13", .NET's "[OptimizedTier1]".  A
 *    sample in native user code (an interpreter's loop, a runtime helper)
 *    is the tier's whose code is the nearest JIT frame on its stack: that
 *    is how a trampoline makes interpreted code count.  A sample in the
 *    kernel is the kernel's, as perf report counts it.
 *  - The statistics files: a function registered under the name of tier
 *    code (func[tag]), or at an address inside tier code as the trace's
 *    tables tell (report_tiers_addr.c), counts that tier's calls.
 *
 * Break-even compares each tier with the tier below it of the same
 * function: the compile cost of the upper tier over what a call saves.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "read/jitdump_read.h"
#include "tools/cmds.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int rehash(struct tiers *tt)
{
	size_t nslot = tt->nslot ? tt->nslot * 2 : 256, i;
	size_t *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t r = 0; r < tt->n; r++) {
		for (i = hash(tt->rows[r].key) & (nslot - 1); slot[i]; i = (i + 1) & (nslot - 1))
			;
		slot[i] = r + 1;
	}
	free(tt->slot);
	tt->slot = slot;
	tt->nslot = nslot;
	return 0;
}

/* The row of func (flen bytes) at loc in tier with tag; NULL = ENOMEM. */
static struct tier_row *row_of(struct tiers *tt, const char *func, size_t flen, const char *loc,
			       size_t llen, int tier, const char *tag, size_t tlen)
{
	struct tier_row *r;
	char *key;
	size_t i;

	if (asprintf(&key, "%.*s%c%.*s%c%d%c%.*s", (int)flen, func, 1, (int)llen, loc, 1, tier, 1,
		     (int)tlen, tag) < 0)
		return NULL;
	if (tt->n * 2 >= tt->nslot && rehash(tt))
		goto nomem;
	for (i = hash(key) & (tt->nslot - 1); tt->slot[i]; i = (i + 1) & (tt->nslot - 1))
		if (!strcmp(tt->rows[tt->slot[i] - 1].key, key)) {
			free(key);
			return &tt->rows[tt->slot[i] - 1];
		}
	if (tt->n == tt->cap) {
		size_t cap = tt->cap ? tt->cap * 2 : 64;
		struct tier_row *rows = realloc(tt->rows, cap * sizeof(*rows));

		if (!rows)
			goto nomem;
		tt->rows = rows;
		tt->cap = cap;
	}
	r = &tt->rows[tt->n];
	*r = (struct tier_row){ .key = key, .tier = tier, .install_ms = -1,
				.c = { .queue_ns = TM_NO_TIME, .request = TM_NO_TIME,
				       .install = TM_NO_TIME } };
	r->func = strndup(func, flen);
	r->location = strndup(loc, llen);
	r->tag = strndup(tag, tlen);
	if (!r->func || !r->location || !r->tag) {
		free(r->func);
		free(r->location);
		free(r->tag);
		return NULL;
	}
	tt->slot[i] = ++tt->n;
	return r;
nomem:
	free(key);
	return NULL;
}

/* When its process started: its jitdump's header, else the tiers file's. */
static uint64_t process_start(const struct tm_model *m, const struct rundir *rd)
{
	char name[64], err[512];
	uint64_t start = m->start;

	snprintf(name, sizeof(name), "/jit-%u.dump", m->pid);
	for (size_t i = 0; i < rd->ndumps; i++) {
		size_t len = strlen(rd->dumps[i]), nlen = strlen(name);
		struct jd_file *f;

		if (len < nlen || strcmp(rd->dumps[i] + len - nlen, name) ||
		    jd_open(&f, rd->dumps[i], err, sizeof(err)))
			continue;
		if (jd_header(f)->timestamp && jd_header(f)->timestamp <= start)
			start = jd_header(f)->timestamp;
		jd_close(f);
	}
	return start;
}

static int is_tiers_name(const char *n)
{
	size_t len = strlen(n);

	return !strncmp(n, "jit-", 4) && len > 10 && !strcmp(n + len - 6, ".tiers") &&
	       strspn(n + 4, "0123456789") == len - 10;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR/jit-<pid>.tiers, sorted; NULL-terminated in *out. */
static int list_files(const char *dir, char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!is_tiers_name(e->d_name))
			continue;
		if (*n + 1 >= cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 8) * sizeof(*v));

			if (!nv)
				goto nomem;
			v = nv;
		}
		if (asprintf(&v[*n], "%s/%s", dir, e->d_name) < 0)
			goto nomem;
		(*n)++;
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), cmp_str);
	*out = v;
	return 0;
nomem:
	closedir(d);
	while (*n)
		free(v[--*n]);
	free(v);
	return -ENOMEM;
}

int report_tiers_load(struct tiers *tt, const char *dir, const struct rundir *rd, int *bad)
{
	char **files = NULL, err[512];
	size_t n;
	int ret = list_files(dir, &files, &n);

	tt->time_period = 1;
	if (ret == -ENOMEM)
		return ret;
	if (ret || !n)
		return 0;
	tt->models = calloc(n, sizeof(*tt->models));
	tt->starts = calloc(n, sizeof(*tt->starts));
	if (!tt->models || !tt->starts)
		ret = -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++) {
		struct tm_model *m = &tt->models[tt->nmodels];
		int e = tm_load(m, files[i], err, sizeof(err));

		if (e == -ENOMEM) {
			ret = e;
		} else if (e) {
			cmd_err("%s", err);
			*bad = 1;
		} else {
			m->path = NULL;         /* files[i] goes */
			tt->starts[tt->nmodels++] = process_start(m, rd);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	return ret ?: report_tiers_spans(tt);
}

static struct tier_row *row_of_name(struct tiers *tt, const char *name, int *err)
{
	struct tm_mark mk;
	struct tier_row *r;
	int tier = report_tier_of_name(tt, name, &mk);

	*err = 0;
	if (tier < 0)
		return NULL;
	r = row_of(tt, name + mk.func_off, mk.func_len, name + mk.loc_off, mk.loc_len, tier,
		   name + mk.tag_off, mk.tag_len);
	if (!r)
		*err = -ENOMEM;
	else
		r->kind = mk.kind;
	if (mk.kind != TM_JITPERF)
		tt->foreign = 1;
	return r;
}

static int add_qtid(struct tiers *tt, uint32_t tid)
{
	uint32_t *v;

	for (size_t i = 0; i < tt->nqtids; i++)
		if (tt->qtids[i] == tid)
			return 0;
	v = realloc(tt->qtids, (tt->nqtids + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	tt->qtids = v;
	tt->qtids[tt->nqtids++] = tid;
	return 0;
}

int report_tiers_sample(struct tiers *tt, const struct pd_raw *s)
{
	int jit = 0, err = 0;

	tt->sampled = 1;
	if (!s->event || (strcmp(s->event, "cpu-clock") && strcmp(s->event, "task-clock")))
		tt->time_period = 0;
	if (tt->nspans && s->sample->time)
		report_tiers_span_sample(tt, s->sample->pid, s->sample->tid, s->sample->time,
					 s->period);
	for (size_t i = 0; i < s->nframes; i++) {
		const struct pd_frame *f = &s->frames[i];
		struct tier_row *r;

		if (!f->loc.map || !f->loc.map->dso->jit) {
			if (!s->sample->has_callchain || f->kernel)
				break;  /* the kernel's time stays the kernel's, as in perf report */
			continue;       /* user native code: the nearest JIT frame's */
		}
		jit = 1;
		r = f->loc.sym ? row_of_name(tt, f->loc.sym->name, &err) : NULL;
		if (r) {
			r->samples++;
			r->period += s->period;
		}
		break;
	}
	/* a thread that runs JIT code anywhere on its stack runs queries */
	for (size_t i = 0; !jit && i < s->nframes; i++)
		jit = s->frames[i].loc.map && s->frames[i].loc.map->dso->jit;
	return err ?: jit ? add_qtid(tt, s->sample->tid) : 0;
}

double report_tier_self_ms(const struct tiers *tt, const struct tier_row *r)
{
	return tt->sampled && tt->time_period ? (double)r->period / 1e6 : -1;
}

double report_tier_ns_per_call(const struct tier_row *r)
{
	return r->has_stats && r->timed && r->calls ? (double)r->total_ns / (double)r->calls : -1;
}

static int add_compiles(struct tiers *tt)
{
	for (size_t k = 0; k < tt->nmodels; k++) {
		const struct tm_model *m = &tt->models[k];
		struct tm_row *rows;
		size_t n;

		if (tm_rows(m, &rows, &n))
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			const struct tm_row *c = &rows[i];
			const char *tag = m->tags[c->tier];
			struct tier_row *r = row_of(tt, c->func, strlen(c->func), "", 0, (int)c->tier,
						    tag, strlen(tag));

			if (!r) {
				free(rows);
				return -ENOMEM;
			}
			r->kind = TM_JITPERF;
			r->has_compiles = 1;
			r->c.compiles += c->compiles;
			r->c.failed += c->failed;
			r->c.unfinished += c->unfinished;
			r->c.compile_ns += c->compile_ns;
			if (c->compile_max_ns >= r->c.compile_max_ns) {
				r->c.compile_max_ns = c->compile_max_ns;
				r->c.compile_tid = c->compile_tid;
			}
			if (c->queue_ns != TM_NO_TIME)
				r->c.queue_ns = (r->c.queue_ns == TM_NO_TIME ? 0 : r->c.queue_ns) +
						c->queue_ns;
			if (c->request < r->c.request)
				r->c.request = c->request;
			if (c->install != TM_NO_TIME) {
				double ms = (double)(c->install - tt->starts[k]) / 1e6;

				if (r->install_ms < 0 || ms < r->install_ms)
					r->install_ms = ms;
				if (c->install < r->c.install)
					r->c.install = c->install;
			}
		}
		free(rows);
	}
	return 0;
}

static int add_calls(struct tiers *tt, const struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct fnrow *f = &t->rows[i];
		struct tier_row *r;
		int err;

		if (!f->has_stats)
			continue;
		r = row_of_name(tt, f->name, &err);
		if (!r && !err && report_tiers_alias(tt, f->name))
			r = row_of_name(tt, report_tiers_alias(tt, f->name), &err);
		if (err)
			return err;
		if (!r)
			continue;
		r->has_stats = 1;
		r->calls += f->calls;
		r->timed += f->timed;
		r->total_ns += f->total_ns;
	}
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct tier_row *x = a, *y = b;
	int c = strcmp(x->func, y->func);

	c = c ?: strcmp(x->location, y->location);
	c = c ?: (x->tier > y->tier) - (x->tier < y->tier);
	return c ?: strcmp(x->tag, y->tag);
}

/* Whether every process whose tiers file names func has closed its session. */
static int all_closed(const struct tiers *tt)
{
	for (size_t k = 0; k < tt->nmodels; k++)
		if (!tt->models[k].closed)
			return 0;
	return 1;
}

/* r against lo, the tier below it of the same function. */
static void judge(const struct tiers *tt, struct tier_row *r, const struct tier_row *lo)
{
	double ns_lo = report_tier_ns_per_call(lo), ns_hi = report_tier_ns_per_call(r);
	double spent = (double)r->c.compile_ns / 1e6, saved, per;

	if (r->has_stats && r->c.install != TM_NO_TIME) {
		r->has_after = 1;
		r->after = r->calls;
	}
	if (!r->has_compiles || ns_lo < 0 || ns_hi < 0)
		return;
	per = ns_lo - ns_hi;
	saved = per * (double)r->calls / 1e6;
	if (per > 0) {
		r->has_break_even = 1;
		r->break_even = ceil((double)r->c.compile_ns / per);
	}
	if (per > 0 && (double)r->calls >= r->break_even)
		snprintf(r->verdict, sizeof(r->verdict), "paid back after %.0f calls",
			 r->break_even);
	else if (per > 0 && !all_closed(tt))
		snprintf(r->verdict, sizeof(r->verdict), "not yet");
	else
		snprintf(r->verdict, sizeof(r->verdict), "never (%.3f ms spent, %.3f ms saved)",
			 spent, saved);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int is_qtid(const struct tiers *tt, uint32_t tid)
{
	for (size_t i = 0; i < tt->nqtids; i++)
		if (tt->qtids[i] == tid)
			return 1;
	return 0;
}

static struct tier_total *total_of(struct tiers *tt, unsigned tier)
{
	for (size_t i = 0; i < tt->ntotals; i++)
		if (tt->totals[i].tier == (int)tier)
			return &tt->totals[i];
	return NULL;
}

/*
 * Per tier: the compile time of the outermost compiles (a nested one is
 * inside its parent's) by the kind of thread, and request to install.
 */
static int add_totals(struct tiers *tt)
{
	double *ups = calloc(tt->n + 1, sizeof(*ups));

	if (!ups)
		return -ENOMEM;
	tt->totals = calloc(JPTIERS_TIERS, sizeof(*tt->totals));
	if (!tt->totals) {
		free(ups);
		return -ENOMEM;
	}
	for (size_t k = 0; k < tt->nmodels; k++) {
		const struct tm_model *m = &tt->models[k];

		for (size_t i = 0; i < m->ncompiles; i++) {
			const struct tm_compile *c = &m->compiles[i];
			struct tier_total *tot = total_of(tt, c->tier);

			if (!tot) {
				tot = &tt->totals[tt->ntotals++];
				tot->tier = (int)c->tier;
				snprintf(tot->tag, sizeof(tot->tag), "%s", m->tags[c->tier]);
			}
			if (c->parent || c->end == TM_NO_TIME)
				continue;
			if (is_qtid(tt, c->tid))
				tot->query_ms += (double)(c->end - c->begin) / 1e6;
			else
				tot->bg_ms += (double)(c->end - c->begin) / 1e6;
		}
	}
	for (size_t t = 0; t < tt->ntotals; t++) {
		struct tier_total *tot = &tt->totals[t];
		size_t n = 0;

		for (size_t i = 0; i < tt->n; i++) {
			const struct tier_row *r = &tt->rows[i];
			uint64_t from = r->c.request;

			if (r->tier != tot->tier || !r->has_compiles || r->c.install == TM_NO_TIME)
				continue;
			if (from == TM_NO_TIME || from > r->c.install)
				continue;
			ups[n++] = (double)(r->c.install - from) / 1e6;
		}
		tot->tierup_median_ms = tot->tierup_max_ms = -1;
		if (!n)
			continue;
		qsort(ups, n, sizeof(*ups), cmp_double);
		tot->tierup_median_ms = n % 2 ? ups[n / 2] : (ups[n / 2 - 1] + ups[n / 2]) / 2;
		tot->tierup_max_ms = ups[n - 1];
	}
	free(ups);
	report_tiers_span_totals(tt, is_qtid);
	return 0;
}

int report_tiers_finish(struct tiers *tt, const struct table *t, const struct rundir *rd)
{
	int err = add_compiles(tt);

	err = err ?: report_tiers_aliases(tt, rd);
	err = err ?: add_calls(tt, t);
	if (err)
		return err;
	if (tt->n)
		qsort(tt->rows, tt->n, sizeof(*tt->rows), cmp_rows);
	free(tt->slot);         /* rows moved */
	tt->slot = NULL;
	tt->nslot = 0;
	for (size_t i = 1; i < tt->n; i++) {
		struct tier_row *lo = &tt->rows[i - 1], *r = &tt->rows[i];

		if (!strcmp(lo->func, r->func) && !strcmp(lo->location, r->location) &&
		    lo->tier < r->tier)
			judge(tt, r, lo);
		else if (r->has_stats && r->c.install != TM_NO_TIME)
			r->has_after = 1, r->after = r->calls;
	}
	if (tt->n && tt->rows[0].has_stats && tt->rows[0].c.install != TM_NO_TIME) {
		tt->rows[0].has_after = 1;
		tt->rows[0].after = tt->rows[0].calls;
	}
	return add_totals(tt);
}

void report_tiers_free(struct tiers *tt)
{
	for (size_t i = 0; i < tt->n; i++) {
		free(tt->rows[i].key);
		free(tt->rows[i].func);
		free(tt->rows[i].location);
		free(tt->rows[i].tag);
	}
	for (size_t i = 0; i < tt->nmodels; i++)
		tm_free(&tt->models[i]);
	free(tt->models);
	free(tt->starts);
	free(tt->rows);
	free(tt->slot);
	free(tt->qtids);
	free(tt->totals);
	for (size_t i = 0; i < tt->naliases; i++) {
		free(tt->aliases[i].name);
		free(tt->aliases[i].code);
	}
	free(tt->aliases);
	report_tiers_spans_free(tt);
}
