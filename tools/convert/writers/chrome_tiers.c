/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Compiles in the Chrome trace:
 *  - each compile is a complete event "compile func[tag]", category
 *    "compile", on the thread it began on, from its begin to its end (a
 *    compile never ended ends when its session closed: "unfinished"); args
 *    say func, tier, tag, status, the compile's id and its parent's;
 *  - a request is a zero-length event "request func[tag]", category
 *    "tier", on the thread that asked;
 *  - a flow ("s", "t", "f" with one id, category "tier", name "tier-up")
 *    links the request, the compile and the first call of the code it
 *    installed: the first instrumented call span, else the first perf
 *    sample in it.  A flow's start and step bind to the slice they are
 *    written after (same thread and time), its end ("bp":"e") to the slice
 *    it falls in, as Perfetto and chrome://tracing read v1 flows.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_tiers.h"
#include "tools/convert/textesc.h"

struct use {              /* the first slice of a compile's code */
	int      seen;
	uint32_t tid;
	uint64_t ts;
};

/* where events go, and the bound of the file */
struct sink {
	FILE     *fp;
	int      *first;
	uint64_t *bytes, max, *left_out;
};

struct cv_chrome_tiers {
	const struct cv_tiers *t;
	struct use            *call, *sample;   /* by compile number */
	char                  *buf;             /* one event's names */
	size_t                 cap, len;
};

struct cv_chrome_tiers *cv_chrome_tiers_new(const struct cv_tiers *t)
{
	struct cv_chrome_tiers *ct = calloc(1, sizeof(*ct));
	size_t n = t && t->ncompiles ? t->ncompiles : 1;

	if (!ct)
		return NULL;
	ct->t = t;
	ct->call = calloc(n, sizeof(*ct->call));
	ct->sample = calloc(n, sizeof(*ct->sample));
	if (!ct->call || !ct->sample) {
		cv_chrome_tiers_free(ct);
		return NULL;
	}
	return ct;
}

void cv_chrome_tiers_free(struct cv_chrome_tiers *ct)
{
	if (!ct)
		return;
	free(ct->call);
	free(ct->sample);
	free(ct->buf);
	free(ct);
}

/* the earliest slice of the code of each compile installed before ts */
static void note(struct cv_chrome_tiers *ct, struct use *uses, uint32_t pid, uint32_t tid,
		 const char *name, size_t len, uint64_t ts)
{
	size_t first, n = cv_tiers_code_of(ct->t, pid, name, len, &first);

	for (size_t i = first; i < first + n; i++) {
		size_t k = ct->t->by_func[i];
		struct use *u = &uses[k];

		if (ct->t->compiles[k].install_ns > ts)
			break;          /* installed later: so are the rest */
		if (!u->seen || ts < u->ts)
			*u = (struct use){ 1, tid, ts };
	}
}

void cv_chrome_tiers_call(struct cv_chrome_tiers *ct, uint32_t pid, uint32_t tid,
			  const char *name, size_t len, uint64_t ts)
{
	note(ct, ct->call, pid, tid, name, len, ts);
}

void cv_chrome_tiers_sample(struct cv_chrome_tiers *ct, uint32_t pid, uint32_t tid,
			    const char *name, size_t len, uint64_t ts)
{
	note(ct, ct->sample, pid, tid, name, len, ts);
}

/* ns as µs with three decimals, as the rest of the file */
#define US(ns) (ns) / 1000, (unsigned)((ns) % 1000)

/* one flow event: phase, binding, then id, pid, tid, ts */
#define FLOW(ph, bp) "{\"ph\":\"" ph "\"" bp ",\"cat\":\"tier\",\"name\":\"tier-up\",\"id\":%" \
	PRIu64 ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":%" PRIu64 ".%03u}"

/* one event of at most 400 bytes and the names, unless it would pass the bound */
__attribute__((format(printf, 3, 4)))
static void put(const struct sink *o, size_t names, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->max && *o->bytes + 400 + names > o->max) {
		++*o->left_out;
		return;
	}
	fputs(*o->first ? "\n" : ",\n", o->fp);
	*o->first = 0;
	va_start(ap, fmt);
	n = vfprintf(o->fp, fmt, ap);
	va_end(ap);
	*o->bytes += n > 0 ? (uint64_t)n + 2 : 0;
}

/* "func[tag]" escaped for JSON, and func and tag alone */
static int names(struct cv_chrome_tiers *ct, const struct cv_compile *c, char **name,
		 char **func, char **tag)
{
	size_t fl = strlen(c->func), tl = strlen(c->tag), need = 3 * TEXTESC_MAX(fl + tl + 2);
	char *d;

	if (need > ct->cap) {
		char *b = realloc(ct->buf, need);

		if (!b)
			return -ENOMEM;
		ct->buf = b;
		ct->cap = need;
	}
	*name = d = ct->buf;
	d = textesc_json(d, c->func, fl);
	*d++ = '[';
	d = textesc_json(d, c->tag, tl);
	*d++ = ']';
	*d++ = 0;
	*func = d;
	d = textesc_json(d, c->func, fl);
	*d++ = 0;
	*tag = d;
	d = textesc_json(d, c->tag, tl);
	*d = 0;
	ct->len = d - ct->buf;
	return 0;
}

static int put_compile(struct cv_chrome_tiers *ct, const struct sink *o, size_t k)
{
	const struct cv_compile *c = &ct->t->compiles[k];
	const struct use *u = ct->call[k].seen ? &ct->call[k] : &ct->sample[k];
	uint64_t flow = k + 1;
	char *name, *func, *tag;

	if (names(ct, c, &name, &func, &tag))
		return -ENOMEM;
	if (c->requested) {
		put(o, ct->len, "{\"ph\":\"X\",\"cat\":\"tier\",\"pid\":%" PRIu32
		    ",\"tid\":%" PRIu32 ",\"ts\":%" PRIu64 ".%03u,\"dur\":0,\"name\":\"request %s\","
		    "\"args\":{\"func\":\"%s\",\"tier\":%u,\"tag\":\"%s\",\"compile\":%" PRIu64 "}}",
		    c->pid, c->request_tid, US(c->request_ns), name, func, c->tier, tag, c->id);
		put(o, 0, FLOW("s", ""), flow, c->pid, c->request_tid,
		    US(c->request_ns));
	}
	put(o, ct->len, "{\"ph\":\"X\",\"cat\":\"compile\",\"pid\":%" PRIu32
	    ",\"tid\":%" PRIu32 ",\"ts\":%" PRIu64 ".%03u,\"dur\":%" PRIu64 ".%03u,"
	    "\"name\":\"compile %s\",%s\"args\":{\"func\":\"%s\",\"tier\":%u,\"tag\":\"%s\","
	    "\"status\":%" PRId32 ",\"compile\":%" PRIu64 ",\"parent\":%" PRIu64 "%s%s}}",
	    c->pid, c->tid, US(c->begin_ns), US(c->end_ns - c->begin_ns), name,
	    c->status < 0 ? "\"cname\":\"terrible\"," : "", func, c->tier, tag, c->status,
	    c->id, c->parent, c->status < 0 ? ",\"failed\":true" : "",
	    c->unfinished ? ",\"unfinished\":true" : "");
	/* a flow needs two ends: the request, the code's first use, or both */
	if (!c->requested && !u->seen)
		return 0;
	if (c->requested && !u->seen) {
		put(o, 0, FLOW("f", ",\"bp\":\"e\""), flow, c->pid, c->tid,
		    US(c->begin_ns));
		return 0;
	}
	put(o, 0, FLOW("%s", ""), c->requested ? "t" : "s", flow, c->pid, c->tid,
	    US(c->begin_ns));
	put(o, 0, FLOW("f", ",\"bp\":\"e\""), flow, c->pid, u->tid, US(u->ts));
	return 0;
}

int cv_chrome_tiers_write(struct cv_chrome_tiers *ct, FILE *fp, int *first, uint64_t *bytes,
			  uint64_t max_bytes, uint64_t *left_out)
{
	struct sink o = { fp, first, bytes, max_bytes, left_out };
	int ret = 0;

	for (size_t k = 0; ct->t && k < ct->t->ncompiles && !ret; k++)
		ret = put_compile(ct, &o, k);
	return ret;
}
