/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Chrome Trace Event JSON writer (object form), for Perfetto,
 * chrome://tracing and speedscope:
 *  - every instrumented call is a complete ("X") event on its thread;
 *  - perf samples become a per-thread flame chart of nested X events: a
 *    frame stays open while consecutive samples share the stack up to it,
 *    and a sample lasts until the thread's next sample or one period
 *    (cpu-clock/task-clock periods are ns; other events: at most 10 ms);
 *  - JIT code loads are thread-scoped instant ("i") events;
 *  - process and thread names are metadata ("M") events;
 *  - compiles of the tiers files are spans with flows (chrome_tiers.c).
 * Timestamps are CLOCK_MONOTONIC, in µs with three decimals (ns exact).
 * Viewers load the whole file into memory and give up on large ones, so
 * the file is bounded: calls shorter than cv_opts.chrome_min_call_ns are
 * left out (their parents, always longer, stay, so the rest still nests),
 * and no event is written past cv_opts.chrome_max_bytes; one line says
 * what was left out.
 * When the input also has instrumented calls or compiles, a thread's
 * samples go to a companion track (tid + 2^30, "<name> [perf]"): samples
 * do not nest into calls or compiles, and viewers drop events that do not
 * nest.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_tiers.h"
#include "tools/convert/convert.h"
#include "tools/convert/textesc.h"
#include "tools/cmds.h"

#define SAMPLE_TRACK   (1u << 30)
#define MAX_GAP_NS     10000000ull

struct open_frame {
	size_t   off, len;        /* name in the thread's arena */
	uint64_t start;
};

struct pend {              /* a closed sample slice not written yet */
	uint64_t ts, dur;
	size_t   depth, off, len;
};

struct thr {
	uint64_t           key;   /* pid << 32 | tid */
	uint32_t           pid, tid;
	char              *name;
	int                from_sample;
	/* sample flame chart */
	struct open_frame *open;
	size_t             nopen, cap_open;
	char              *arena;
	size_t             alen, acap;
	uint64_t           last_t, last_p;
	int                started;
	struct pend       *pend;
	size_t             npend, cap_pend;
	char              *pnames;  /* their escaped names */
	size_t             plen, pcap;
};

struct chrome {
	struct outfile       *out;
	FILE                 *fp;
	const struct cv_opts *o;
	int                   first;
	struct thr           *thr;
	size_t                nthr, cap_thr;
	uint32_t             *index;    /* thread number + 1 */
	size_t                mask;
	char                 *esc;      /* escape buffer */
	size_t                esc_cap;
	uint64_t              untimed;  /* samples without a timestamp */
	uint64_t              bytes;    /* written so far */
	uint64_t              calls, short_calls, over_cap;   /* written, left out */
	struct cv_chrome_tiers *tiers;  /* compiles, and the first calls of their code */
	uint32_t              sample_track;  /* 0, or what a sample's tid is or'ed with */
};

static void *chrome_begin(struct outfile *out, const struct cv_opts *o)
{
	struct chrome *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->out = out;
	c->fp = out->fp;
	c->o = o;
	c->first = 1;
	c->mask = 255;
	c->index = calloc(c->mask + 1, sizeof(*c->index));
	c->tiers = cv_chrome_tiers_new(o->tiers);
	if (!c->index || !c->tiers) {
		cv_chrome_tiers_free(c->tiers);
		free(c->index);
		free(c);
		return NULL;
	}
	if (o->has_calls || (o->tiers && o->tiers->ncompiles))
		c->sample_track = SAMPLE_TRACK;
	fputs("{\"traceEvents\":[", c->fp);
	return c;
}

static struct thr *get_thr(struct chrome *c, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	size_t j = (key * 0x9e3779b97f4a7c15ull >> 32) & c->mask;
	uint32_t k;

	while ((k = c->index[j])) {
		if (c->thr[k - 1].key == key)
			return &c->thr[k - 1];
		j = (j + 1) & c->mask;
	}
	if (c->nthr == c->cap_thr) {
		size_t cap = c->cap_thr ? c->cap_thr * 2 : 64;
		struct thr *t = realloc(c->thr, cap * sizeof(*t));

		if (!t)
			return NULL;
		c->thr = t;
		c->cap_thr = cap;
	}
	memset(&c->thr[c->nthr], 0, sizeof(c->thr[0]));
	c->thr[c->nthr].key = key;
	c->thr[c->nthr].pid = pid;
	c->thr[c->nthr].tid = tid;
	c->index[j] = ++c->nthr;
	if (c->nthr * 2 > c->mask) {
		size_t mask = c->mask * 2 + 1;
		uint32_t *index = calloc(mask + 1, sizeof(*index));

		if (!index)
			return NULL;
		for (size_t i = 0; i < c->nthr; i++) {
			uint64_t kk = c->thr[i].key;
			size_t jj = (kk * 0x9e3779b97f4a7c15ull >> 32) & mask;

			while (index[jj])
				jj = (jj + 1) & mask;
			index[jj] = i + 1;
		}
		free(c->index);
		c->index = index;
		c->mask = mask;
	}
	return &c->thr[c->nthr - 1];
}

static int set_name(struct thr *t, const char *s, size_t n)
{
	char *name = malloc(n + 1);

	if (!name)
		return -ENOMEM;
	memcpy(name, s, n);
	name[n] = 0;
	free(t->name);
	t->name = name;
	return 0;
}

static char *esc(struct chrome *c, const char *s, size_t n, size_t *len)
{
	if (TEXTESC_MAX(n) > c->esc_cap) {
		size_t cap = TEXTESC_MAX(n) * 2;
		char *b = realloc(c->esc, cap);

		if (!b)
			return NULL;
		c->esc = b;
		c->esc_cap = cap;
	}
	*len = textesc_json(c->esc, s, n) - c->esc;
	return c->esc;
}

static int ndigits(uint64_t v)
{
	int n = 1;

	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* digits of v, written from the end two at a time; no locale */
static char *put_u64(char *d, uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	int n = ndigits(v);
	char *p = d + n;

	while (v >= 100) {
		p -= 2;
		p[0] = pairs[(v % 100) * 2];
		p[1] = pairs[(v % 100) * 2 + 1];
		v /= 100;
	}
	if (v >= 10) {
		p[-2] = pairs[v * 2];
		p[-1] = pairs[v * 2 + 1];
	} else {
		p[-1] = '0' + v;
	}
	return d + n;
}

/* ns as µs with three decimals */
static char *put_us(char *d, uint64_t ns)
{
	uint64_t r = ns % 1000;

	d = put_u64(d, ns / 1000);
	*d++ = '.';
	*d++ = '0' + r / 100;
	*d++ = '0' + r / 10 % 10;
	*d++ = '0' + r % 10;
	return d;
}

static void sep(struct chrome *c)
{
	if (c->first)
		c->first = 0;
	else
		putc_unlocked(',', c->fp);
	putc_unlocked('\n', c->fp);
}

/* one complete event, written with one fwrite; name already escaped */
static int put_x(struct chrome *c, const char *cat, const char *name, size_t nlen,
		 uint32_t pid, uint32_t tid, uint64_t ts, uint64_t dur, const char *args, size_t alen)
{
	char small[512], *buf = small, *d;
	size_t need = 160 + nlen + alen;

	if (c->o->chrome_max_bytes && c->bytes + need > c->o->chrome_max_bytes) {
		c->over_cap++;
		return 0;
	}
	if (need > sizeof(small) && !(buf = malloc(need)))
		return -ENOMEM;
	d = buf;
	if (c->first) {
		c->first = 0;
		*d++ = '\n';
	} else {
		*d++ = ',';
		*d++ = '\n';
	}
	memcpy(d, "{\"ph\":\"X\",\"cat\":\"", 17);
	d += 17;
	d = stpcpy(d, cat);
	memcpy(d, "\",\"pid\":", 8);
	d = put_u64(d + 8, pid);
	memcpy(d, ",\"tid\":", 7);
	d = put_u64(d + 7, tid);
	memcpy(d, ",\"ts\":", 6);
	d = put_us(d + 6, ts);
	memcpy(d, ",\"dur\":", 7);
	d = put_us(d + 7, dur);
	memcpy(d, ",\"name\":\"", 9);
	d += 9;
	memcpy(d, name, nlen);
	d += nlen;
	if (alen) {
		memcpy(d, "\",\"args\":{", 10);
		memcpy(d + 10, args, alen);
		d += 10 + alen;
		*d++ = '}';
		*d++ = '}';
	} else {
		*d++ = '"';
		*d++ = '}';
	}
	fwrite_unlocked(buf, 1, d - buf, c->fp);
	c->bytes += (uint64_t)(d - buf);
	if (buf != small)
		free(buf);
	return 0;
}

/* parents first among slices that start together, as viewers read them */
static int by_start(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* write a thread's closed slices once its flame chart is empty again */
static int flush_pending(struct chrome *c, struct thr *t)
{
	if (t->npend > 1)
		qsort(t->pend, t->npend, sizeof(*t->pend), by_start);
	for (size_t i = 0; i < t->npend; i++) {
		const struct pend *p = &t->pend[i];

		if (put_x(c, "perf", t->pnames + p->off, p->len, t->pid, t->tid, p->ts, p->dur, NULL, 0))
			return -ENOMEM;
	}
	t->npend = 0;
	t->plen = 0;
	return 0;
}

/*
 * Close the frames above keep at time end.  A child closes before its
 * parent but may start at the same time, so slices are held back and
 * written sorted by start and depth when the thread's stack empties.
 * Sample slices carry no args: speedscope makes args part of the frame's
 * name, which would split one function into many.
 */
static int close_frames(struct chrome *c, struct thr *t, size_t keep, uint64_t end)
{
	while (t->nopen > keep) {
		struct open_frame *f = &t->open[--t->nopen];
		size_t n;
		char *e = esc(c, t->arena + f->off, f->len, &n);

		if (!e)
			return -ENOMEM;
		if (t->npend == t->cap_pend) {
			size_t cap = t->cap_pend ? t->cap_pend * 2 : 256;
			struct pend *v = realloc(t->pend, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			t->pend = v;
			t->cap_pend = cap;
		}
		if (t->plen + n > t->pcap) {
			size_t cap = t->pcap ? t->pcap : 4096;
			char *a;

			while (cap < t->plen + n)
				cap *= 2;
			a = realloc(t->pnames, cap);
			if (!a)
				return -ENOMEM;
			t->pnames = a;
			t->pcap = cap;
		}
		if (n)
			memcpy(t->pnames + t->plen, e, n);
		t->pend[t->npend++] = (struct pend){
			.ts = f->start, .dur = end > f->start ? end - f->start : 0,
			.depth = t->nopen, .off = t->plen, .len = n,
		};
		t->plen += n;
		t->alen = f->off;
	}
	return t->nopen ? 0 : flush_pending(c, t);
}

static int chrome_sample(void *w, const struct ps_sample *s)
{
	struct chrome *c = w;
	uint32_t pid = s->has_pid ? s->pid : s->tid;
	uint32_t tid = s->tid | c->sample_track;
	uint64_t t = s->time_ns, p, end;
	struct thr *th;
	size_t k = 0, i;
	int ret;

	if (!s->has_time) {
		c->untimed++;                 /* nothing to place on a timeline */
		return 0;
	}
	th = get_thr(c, pid, tid);
	if (!th)
		return -ENOMEM;
	if (!th->name || th->from_sample) {
		th->from_sample = 1;
		if (!th->name || strlen(th->name) != s->comm.len ||
		    memcmp(th->name, s->comm.s, s->comm.len))
			if (set_name(th, s->comm.s, s->comm.len))
				return -ENOMEM;
	}
	p = MAX_GAP_NS;
	if (s->event.len >= 5 && !memcmp(s->event.s + s->event.len - 5, "clock", 5) && s->period > 1)
		p = s->period;
	if (th->started) {
		end = th->last_t + th->last_p;
		if (t < th->last_t)
			t = th->last_t;           /* out of order: keep the nesting valid */
		if (end < t) {
			ret = close_frames(c, th, 0, end);
		} else {
			while (k < th->nopen && k < s->nframes && th->open[k].len == s->frames[k].len &&
			       (!s->frames[k].len ||
				!memcmp(th->arena + th->open[k].off, s->frames[k].s, s->frames[k].len)))
				k++;
			ret = close_frames(c, th, k, t);
		}
		if (ret)
			return ret;
	}
	for (i = th->nopen; i < s->nframes; i++) {
		const struct ps_str *f = &s->frames[i];

		if (th->nopen == th->cap_open) {
			size_t cap = th->cap_open ? th->cap_open * 2 : 64;
			struct open_frame *o = realloc(th->open, cap * sizeof(*o));

			if (!o)
				return -ENOMEM;
			th->open = o;
			th->cap_open = cap;
		}
		if (th->alen + f->len > th->acap) {
			size_t cap = th->acap ? th->acap : 4096;
			char *a;

			while (cap < th->alen + f->len)
				cap *= 2;
			a = realloc(th->arena, cap);
			if (!a)
				return -ENOMEM;
			th->arena = a;
			th->acap = cap;
		}
		if (f->len)             /* empty names exist; the arena may be NULL */
			memcpy(th->arena + th->alen, f->s, f->len);
		th->open[th->nopen++] = (struct open_frame){ th->alen, f->len, t };
		th->alen += f->len;
	}
	th->started = 1;
	th->last_t = t;
	th->last_p = p;
	if (s->nframes)            /* the leaf's slice: the first in a compile's code ends its flow */
		cv_chrome_tiers_sample(c->tiers, pid, tid, s->frames[s->nframes - 1].s,
				       s->frames[s->nframes - 1].len, th->open[s->nframes - 1].start);
	return 0;
}

static int chrome_call(void *w, const struct cv_call *call)
{
	struct chrome *c = w;
	const char *name = call->stack[call->depth];
	char args[1024], *d = args;
	uint64_t dur = call->end_ns > call->start_ns ? call->end_ns - call->start_ns : 0;
	size_t n, i;
	char *e;

	if (call->correction)
		return 0;               /* a share of a stack's time, not a call */
	if (dur < c->o->chrome_min_call_ns) {
		c->short_calls++;
		return 0;
	}
	c->calls++;
	for (i = 0; i < call->ncounters; i++) {
		size_t cn = strlen(call->counter_names[i]);

		if (cn > 64 || (size_t)(d - args) + cn + 32 > sizeof(args))
			break;
		if (i)
			*d++ = ',';
		*d++ = '"';
		d = textesc_json(d, call->counter_names[i], cn);
		*d++ = '"';
		*d++ = ':';
		d = put_u64(d, call->counters[i]);
	}
	cv_chrome_tiers_call(c->tiers, call->pid, call->tid, name, strlen(name), call->start_ns);
	e = esc(c, name, strlen(name), &n);
	if (!e)
		return -ENOMEM;
	return put_x(c, "call", e, n, call->pid, call->tid, call->start_ns, dur, args, d - args);
}

static int chrome_code(void *w, const struct cv_code *code)
{
	static const char *const cats[] = {
		[JPT_CODE_LOAD] = "jit-load", [JPT_CODE_MOVE] = "jit-move",
		[JPT_CODE_UNLOAD] = "jit-unload",
	};
	struct chrome *c = w;
	size_t n;
	char *e = esc(c, code->name ? code->name : "", code->name ? strlen(code->name) : 0, &n);
	int len;

	if (!e)
		return -ENOMEM;
	if (c->o->chrome_max_bytes && c->bytes + 200 + n > c->o->chrome_max_bytes) {
		c->over_cap++;
		return 0;
	}
	sep(c);
	len = fprintf(c->fp, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"ts\":%" PRIu64 ".%03u,\"name\":\"%.*s\",\"args\":{\"addr\":\"0x%" PRIx64
		"\",\"size\":%" PRIu64 ",\"code_index\":%" PRIu64 "}}",
		cats[code->kind <= JPT_CODE_UNLOAD ? code->kind : JPT_CODE_LOAD], code->pid, code->tid,
		code->ts_ns / 1000, (unsigned)(code->ts_ns % 1000), (int)n, e, code->addr, code->len,
		code->index);
	c->bytes += len > 0 ? (uint64_t)len + 2 : 0;
	return 0;
}

static int chrome_thread(void *w, const struct cv_thread *t)
{
	struct chrome *c = w;
	struct thr *th = get_thr(c, t->pid, t->tid);

	if (!th)
		return -ENOMEM;
	if (t->name && *t->name) {
		th->from_sample = 0;
		return set_name(th, t->name, strlen(t->name));
	}
	return 0;
}

static void put_meta(struct chrome *c, const char *what, uint32_t pid, uint32_t tid,
		     const char *name, const char *suffix)
{
	size_t n;
	char *e = esc(c, name, strlen(name), &n);

	if (!e)
		return;
	sep(c);
	fprintf(c->fp, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"args\":{\"name\":\"%.*s%s\"}}", what, pid, tid, (int)n, e, suffix);
}

/* One line: what the size bound left out, and how to get it all. */
static void say_left_out(const struct chrome *c)
{
	char shorter[96] = "", over[96] = "";
	uint64_t ns = c->o->chrome_min_call_ns;

	if (c->short_calls)
		snprintf(shorter, sizeof(shorter), "%" PRIu64 " of %" PRIu64 " calls shorter "
			 "than %" PRIu64 ".%03" PRIu64 " us", c->short_calls,
			 c->short_calls + c->calls, ns / 1000, ns % 1000);
	if (c->over_cap)
		snprintf(over, sizeof(over), "%" PRIu64 " events past the end", c->over_cap);
	cmd_err("%s: left out %s%s%s to stay under %" PRIu64 " MiB, which viewers open; "
		"--chrome-max 0 writes everything", c->out->path, shorter,
		c->short_calls && c->over_cap ? " and " : "", over,
		c->o->chrome_max_bytes >> 20);
}

static int chrome_end(void *w)
{
	struct chrome *c = w;
	size_t i, j;
	int ret;

	for (i = 0; i < c->nthr; i++) {
		struct thr *t = &c->thr[i];

		if (t->started && (ret = close_frames(c, t, 0, t->last_t + t->last_p)))
			return ret;
	}
	/* after every slice: a flow binds to the slice written before it */
	if ((ret = cv_chrome_tiers_write(c->tiers, c->fp, &c->first, &c->bytes,
					 c->o->chrome_max_bytes, &c->over_cap)))
		return ret;
	/* a process is named after its main thread, else its first thread */
	for (i = 0; i < c->nthr; i++) {
		struct thr *t = &c->thr[i], *name = NULL;
		int seen = 0;

		for (j = 0; j < i && !seen; j++)
			seen = c->thr[j].pid == t->pid;
		if (seen)
			continue;
		for (j = i; j < c->nthr; j++)
			if (c->thr[j].pid == t->pid && c->thr[j].name &&
			    (!name || (c->thr[j].tid & ~SAMPLE_TRACK) == t->pid))
				name = &c->thr[j];
		if (name)
			put_meta(c, "process_name", t->pid, t->pid, name->name, "");
	}
	for (i = 0; i < c->nthr; i++)
		if (c->thr[i].name)
			put_meta(c, "thread_name", c->thr[i].pid, c->thr[i].tid, c->thr[i].name,
				 c->thr[i].tid & SAMPLE_TRACK ? " [perf]" : "");
	fputs("\n],\"displayTimeUnit\":\"ns\"}\n", c->fp);
	if (c->untimed)
		cmd_err("%s: %" PRIu64 " samples without a timestamp left out "
			"(perf script -F needs 'time')", c->out->path, c->untimed);
	if (c->short_calls || c->over_cap)
		say_left_out(c);
	return ferror(c->fp) ? -EIO : 0;
}

static void chrome_free(void *w)
{
	struct chrome *c = w;

	if (!c)
		return;
	for (size_t i = 0; i < c->nthr; i++) {
		free(c->thr[i].name);
		free(c->thr[i].open);
		free(c->thr[i].arena);
		free(c->thr[i].pend);
		free(c->thr[i].pnames);
	}
	free(c->thr);
	free(c->index);
	free(c->esc);
	cv_chrome_tiers_free(c->tiers);
	free(c);
}

const struct cv_ops cv_chrome_ops = {
	.what   = "chrome",
	.flags  = CV_CALL_BOUND,
	.begin  = chrome_begin,
	.sample = chrome_sample,
	.call   = chrome_call,
	.code   = chrome_code,
	.thread = chrome_thread,
	.end    = chrome_end,
	.free   = chrome_free,
};
