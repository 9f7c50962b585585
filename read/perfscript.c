/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Streaming parser of `perf script` text, folding stacks by the rules of
 * stackcollapse-perf.pl (FlameGraph): the same lines are samples, the same
 * frames are dropped, split, tidied and annotated.  The rules are written
 * out as small scanners instead of regular expressions; each function says
 * which pattern of that tool it reproduces, including how Perl's
 * backtracking resolves ambiguous lines.
 *
 * Speed: lines are found with memchr in the caller's buffer and parsed in
 * place; only frame names are copied (into one arena reused per sample).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfscript.h"
#include "stackframe.h"
#include "util.h"

#define MAX_LINE    (64u << 20)   /* longer lines are rejected, not buffered */
#define MAX_FRAMES  (1u << 20)    /* frames of one sample */
#define READ_CHUNK  (1u << 20)    /* read at once: the copy stays in the cache */

struct frame {
	size_t off, len;
};

struct buf {
	char  *s;
	size_t len, cap;
};

struct ps_parser {
	unsigned      flags;
	char         *name;
	ps_sample_fn  fn;
	void         *arg;
	uint64_t      lineno;
	uint64_t      nsamples;
	struct buf    carry;        /* a line split across ps_feed calls */

	/* the sample being read (stackcollapse's $pname and @stack) */
	int           have_pname;
	struct buf    pname, comm, event;
	struct ps_sample cur;
	struct buf    arena;        /* frame names */
	struct frame *frames;       /* in the order the lines came (leaf first) */
	size_t        nframes, cap_frames;
	size_t       *groups;       /* index of the first frame of each line */
	size_t        ngroups, cap_groups;
	struct ps_str *out;         /* root-first view handed to the callback */
	size_t        cap_out;

	struct buf    filter;       /* the event samples are kept for */
	int           have_filter;
	int           filtered;
	char          err[512];

	/* PS_SRCLINE: the next sl_left lines are the source lines of the
	 * frames from sl_frame on */
	size_t        sl_frame, sl_left;

	ps_resolve_fn resolve;      /* names frames anew, or NULL */
	void         *resolve_arg;
};

/* Perl's \s, \d and \w on byte strings (no locale, no UTF-8 flag) */
static inline int is_ws(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}
static inline int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}
static inline int is_word(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

__attribute__((format(printf, 3, 4)))
static int fail(struct ps_parser *p, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(p->err, sizeof(p->err), "%s:%llu: ", p->name,
		     (unsigned long long)p->lineno);
	if (n < 0 || (size_t)n >= sizeof(p->err))
		return err;
	va_start(ap, fmt);
	vsnprintf(p->err + n, sizeof(p->err) - n, fmt, ap);
	va_end(ap);
	return err;
}

static int buf_reserve(struct buf *b, size_t more)
{
	size_t cap;
	char *s;

	if (b->cap - b->len >= more)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < more)
		cap *= 2;
	s = realloc(b->s, cap);
	if (!s)
		return -ENOMEM;
	b->s = s;
	b->cap = cap;
	return 0;
}

static int buf_set(struct buf *b, const char *s, size_t n)
{
	b->len = 0;
	if (buf_reserve(b, n + 1))
		return -ENOMEM;
	memcpy(b->s, s, n);
	b->len = n;
	b->s[n] = 0;
	return 0;
}

struct ps_parser *ps_new(unsigned flags, const char *name, ps_sample_fn fn, void *arg)
{
	struct ps_parser *p = calloc(1, sizeof(*p));

	if (!p)
		return errno = ENOMEM, NULL;
	p->flags = flags;
	p->fn = fn;
	p->arg = arg;
	p->name = strdup(name ? name : "-");
	if (!p->name) {
		free(p);
		return errno = ENOMEM, NULL;
	}
	return p;
}

void ps_set_resolver(struct ps_parser *p, ps_resolve_fn fn, void *arg)
{
	p->resolve = fn;
	p->resolve_arg = arg;
}

void ps_free(struct ps_parser *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->carry.s);
	free(p->pname.s);
	free(p->comm.s);
	free(p->event.s);
	free(p->arena.s);
	free(p->frames);
	free(p->groups);
	free(p->out);
	free(p->filter.s);
	free(p);
}

const char *ps_error(const struct ps_parser *p) { return p->err; }
uint64_t ps_samples(const struct ps_parser *p) { return p->nsamples; }
const char *ps_event(const struct ps_parser *p) { return p->have_filter ? p->filter.s : ""; }
int ps_filtered(const struct ps_parser *p) { return p->filtered; }

static void reset_sample(struct ps_parser *p)
{
	p->have_pname = 0;
	p->arena.len = 0;
	p->nframes = 0;
	p->ngroups = 0;
}

/* Blank line: hand over pname;frames (stackcollapse's remember_stack). */
static int emit(struct ps_parser *p)
{
	size_t i, n = 0, g;
	int ret;

	if (!p->have_pname)
		return 0;
	if (rd_grow((void **)&p->out, &p->cap_out, p->nframes + 1, sizeof(*p->out)))
		return fail(p, -ENOMEM, "out of memory");
	/* each line's frames were prepended as a group: walk groups backwards */
	for (g = p->ngroups; g-- > 0;) {
		size_t end = g + 1 < p->ngroups ? p->groups[g + 1] : p->nframes;

		for (i = p->groups[g]; i < end; i++) {
			p->out[n].s = p->arena.s + p->frames[i].off;
			p->out[n].len = p->frames[i].len;
			n++;
		}
	}
	p->cur.pname = (struct ps_str){ p->pname.s, p->pname.len };
	p->cur.comm = (struct ps_str){ p->comm.s, p->comm.len };
	p->cur.event = (struct ps_str){ p->event.s ? p->event.s : "", p->event.len };
	p->cur.frames = p->out;
	p->cur.nframes = n;
	p->nsamples++;
	ret = p->fn(&p->cur, p->arg);
	reset_sample(p);
	return ret;
}

static uint32_t to_u32(const char *s, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n && v <= UINT32_MAX; i++)
		v = v * 10 + (s[i] - '0');
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Perl's numeric value of a digit string, as used for $m_period */
static uint64_t to_period(const char *s, size_t n)
{
	uint64_t v = 0;

	if (n == 0 || (n == 1 && s[0] == '0'))
		return 1;   /* `if (not $period) { $period = 1 }` */
	for (size_t i = 0; i < n; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return UINT64_MAX;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* "SEC.FRAC:" with up to 9 fraction digits -> ns */
static int parse_time(const char *s, const char *e, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	int nd = 0;

	if (s >= e || !is_digit(*s))
		return 0;
	while (s < e && is_digit(*s)) {
		if (sec > UINT64_MAX / 10 / 1000000000u)
			return 0;
		sec = sec * 10 + (*s++ - '0');
	}
	if (s < e && *s == '.') {
		s++;
		while (s < e && is_digit(*s)) {
			if (nd < 9) {
				frac = frac * 10 + (*s - '0');
				nd++;
			}
			s++;
		}
	}
	if (s >= e || *s != ':')
		return 0;
	while (nd++ < 9)
		frac *= 10;
	*ns = sec * 1000000000u + frac;
	return 1;
}

/*
 * stackcollapse: /^(\S.+?)\s+(\d+)\/ *(\d+)*\s+/ (no blank after the
 * slash in the original) -- comm is the shortest
 * prefix of at least two bytes followed by blanks, digits, optional
 * "/digits" and a blank.  Only the first position of each run of blanks can
 * be that shortest prefix's end, which keeps the scan linear.
 */
int ps_match_header(const char *l, size_t n, struct ps_header *h)
{
	size_t p = 1, j, k, m, r;

	if (n == 0 || is_ws(l[0]))
		return 0;
	while (p < n) {
		if (!is_ws(l[p]) || p < 2) {
			p++;
			continue;
		}
		for (j = p; j < n && is_ws(l[j]); j++)
			;
		for (k = j; k < n && is_digit(l[k]); k++)
			;
		if (k > j) {
			for (m = k; m < n && l[m] == '/'; m++)
				;
			for (r = m; r < n && is_digit(l[r]); r++)
				;
			if (r < n && is_ws(l[r])) {
				h->comm = l;
				h->comm_len = p;
				h->pid = l + j;
				h->pid_len = k - j;
				h->tid = l + m;
				h->tid_len = r - m;
				h->rest = l + r;
				return 1;
			}
		}
		p = j;   /* the next run of blanks starts after this token */
	}
	return 0;
}

/*
 * stackcollapse: /:\s*(\d+)*\s+(\S+):\s*$/ -- the line ends with "EVENT:"
 * (and blanks); between it and the last colon before it there are only
 * blanks and an optional period.
 */
static int match_event(const char *l, size_t n, struct ps_str *ev, struct ps_str *period)
{
	size_t t = n, b, c, i, d0, d1;

	while (t > 0 && is_ws(l[t - 1]))
		t--;
	if (t < 2 || l[t - 1] != ':')
		return 0;
	for (b = t - 1; b > 0 && !is_ws(l[b - 1]); b--)
		;
	if (b == 0 || t - 1 - b < 1)
		return 0;
	c = b;
	while (c > 0 && l[c - 1] != ':')
		c--;
	if (c == 0)
		return 0;
	/* l[c .. b) must be \s* \d* \s+ */
	for (i = c; i < b && is_ws(l[i]); i++)
		;
	for (d0 = i; i < b && is_digit(l[i]); i++)
		;
	d1 = i;
	if (d1 == d0) {
		/* blanks only: \s* and \s+ share them, $1 is undef */
		if (i != b || b == c)
			return 0;
	} else {
		if (i == b || !is_ws(l[i]))
			return 0;
		for (; i < b && is_ws(l[i]); i++)
			;
		if (i != b)
			return 0;
	}
	ev->s = l + b;
	ev->len = t - 1 - b;
	period->s = l + d0;
	period->len = d1 - d0;
	return 1;
}

static int buf_add(struct buf *b, const char *s, size_t n)
{
	if (buf_reserve(b, n + 1))
		return -ENOMEM;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
	return 0;
}

/* $pname: "comm", "comm-PID" or "comm-PID/TID" (PID "?" when unknown) */
static int set_pname(struct ps_parser *p, const struct ps_header *h)
{
	struct buf *b = &p->pname;
	int has = p->cur.has_pid, err = 0;
	size_t i;

	if (buf_set(&p->comm, h->comm, h->comm_len) || buf_set(b, h->comm, h->comm_len))
		return -ENOMEM;
	if (p->flags & (PS_TID | PS_PID)) {
		err |= buf_add(b, "-", 1);
		err |= has ? buf_add(b, h->pid, h->pid_len) : buf_add(b, "?", 1);
	}
	if (p->flags & PS_TID) {
		err |= buf_add(b, "/", 1);
		err |= has ? buf_add(b, h->tid, h->tid_len) : buf_add(b, h->pid, h->pid_len);
	}
	if (err)
		return -ENOMEM;
	for (i = 0; i < b->len; i++)     /* $pname =~ tr/ /_/ */
		if (b->s[i] == ' ')
			b->s[i] = '_';
	return 0;
}

static int header_line(struct ps_parser *p, const char *l, size_t n, const struct ps_header *h)
{
	struct ps_str ev = { "", 0 }, period = { "", 0 };
	const char *s, *e = l + n;
	int has_event;

	has_event = match_event(l, n, &ev, &period);
	if (has_event) {
		if (!p->have_filter) {
			if (buf_set(&p->filter, ev.s, ev.len))
				return fail(p, -ENOMEM, "out of memory");
			p->have_filter = 1;
		} else if (ev.len != p->filter.len || memcmp(ev.s, p->filter.s, ev.len)) {
			p->filtered = 1;
			return 0;          /* `next`: $pname keeps its old value */
		}
	}
	/* `if (not $tid) { $tid = $pid; $pid = "?" }` -- "0" is false too */
	if (h->tid_len == 0 || (h->tid_len == 1 && h->tid[0] == '0')) {
		p->cur.has_pid = 0;
		p->cur.pid = 0;
		p->cur.tid = to_u32(h->pid, h->pid_len);
	} else {
		p->cur.has_pid = 1;
		p->cur.pid = to_u32(h->pid, h->pid_len);
		p->cur.tid = to_u32(h->tid, h->tid_len);
	}
	p->cur.period = to_period(period.s, period.len);
	if (set_pname(p, h) || buf_set(&p->event, ev.s, ev.len))
		return fail(p, -ENOMEM, "out of memory");
	/* `next if not $pname`: the name "0" counts as no name */
	p->have_pname = !(p->pname.len == 1 && p->pname.s[0] == '0');
	p->cur.line = p->lineno;

	/* timestamp: after pid/tid, an optional [cpu], then SEC.FRAC: */
	s = h->rest;
	while (s < e && is_ws(*s))
		s++;
	if (s < e && *s == '[') {
		const char *c = memchr(s, ']', e - s);

		s = c ? c + 1 : e;
		while (s < e && is_ws(*s))
			s++;
	}
	p->cur.has_time = parse_time(s, e, &p->cur.time_ns);
	if (!p->cur.has_time)
		p->cur.time_ns = 0;
	return 0;
}

int ps_set_event(struct ps_parser *p, const char *ev, size_t len)
{
	if (buf_set(&p->filter, ev, len))
		return -ENOMEM;
	p->have_filter = 1;
	return 0;
}

size_t ps_first_event(const char *buf, size_t len, const char **ev)
{
	const char *l = buf, *e = buf + len, *nl;
	struct ps_header h;
	struct ps_str event, period;

	for (; l < e; l = nl + 1) {
		nl = memchr(l, '\n', e - l);
		if (!nl)
			nl = e;
		if (nl > l && l[0] != '#' && ps_match_header(l, nl - l, &h) &&
		    match_event(l, nl - l, &event, &period)) {
			*ev = event.s;
			return event.len;
		}
	}
	return 0;
}

static int add_frame(struct ps_parser *p, size_t off)
{
	if (p->nframes >= MAX_FRAMES)
		return fail(p, -EINVAL, "sample has more than %u frames", MAX_FRAMES);
	if (rd_grow((void **)&p->frames, &p->cap_frames, p->nframes + 1, sizeof(*p->frames)))
		return fail(p, -ENOMEM, "out of memory");
	p->frames[p->nframes].off = off;
	p->frames[p->nframes].len = p->arena.len - off;
	p->nframes++;
	return 0;
}

/* one "->"-separated piece of a frame, tidied and annotated into the arena */
static int put_func(struct ps_parser *p, const char *f, size_t fn, const struct sf_ctx *ctx,
		    int inlined)
{
	struct buf *a = &p->arena;
	size_t off = a->len;

	if (buf_reserve(a, SF_MAX(fn, ctx)))
		return fail(p, -ENOMEM, "out of memory");
	a->len += sf_tidy(a->s + off, f, fn, ctx, inlined);
	return add_frame(p, off);
}

/*
 * stackcollapse: /^\s*(\w+)\s*(.+) \((.*)\)/.  Greedy (.+) ends at the last
 * " (" that has a ')' after it; (.*) runs to the last ')'.  When the blanks
 * after the address leave no byte for (.+), Perl backtracks into them and
 * then into the address: rawfunc starts at min(end of blanks, " (" - 1).
 */
int ps_match_stack(const char *l, size_t n, struct ps_stackline *s)
{
	size_t a = 0, w, q, I, P;
	const char *rp;

	while (a < n && is_ws(l[a]))
		a++;
	for (w = a; w < n && is_word(l[w]); w++)
		;
	if (w == a)
		return 0;
	rp = memrchr(l, ')', n);
	if (!rp)
		return 0;
	P = rp - l;
	if (P < 2)
		return 0;
	/* the last '(' at 1..P-1 with a blank before it */
	for (rp = l + P;;) {
		rp = memrchr(l + 1, '(', rp - (l + 1));
		if (!rp)
			return 0;
		if (rp[-1] == ' ')
			break;
	}
	I = rp - 1 - l;
	if (I < a + 2)
		return 0;
	q = w;
	while (q < n && is_ws(l[q]))
		q++;
	if (q > I - 1)
		q = I - 1;
	s->pc = l + a;
	s->pcn = (q < w ? q : w) - a;
	s->func = l + q;
	s->funcn = I - q;
	s->mod = l + I + 2;
	s->modn = P - (I + 2);
	return 1;
}

static const char *find_arrow(const char *s, size_t n)
{
	const char *e = s + n;

	while ((s = memchr(s, '-', e - s)) && s + 1 < e) {
		if (s[1] == '>')
			return s;
		s++;
	}
	return NULL;
}

static int stack_frames(struct ps_parser *p, const struct ps_stackline *s)
{
	const char *f = s->func, *e;
	size_t n = s->funcn, first;
	int ret, inl = 0, unknown = 0;
	/* tidy_java: FlameGraph's published test results shorten Java names
	 * only for a process named exactly "java" (not "java-PID" under
	 * --pid/--tid), so this does too */
	struct sf_ctx ctx = {
		.flags = p->flags, .pc = s->pc, .pcn = s->pcn, .mod = s->mod, .modn = s->modn,
		.java = p->pname.len == 4 && !memcmp(p->pname.s, "java", 4),
	};

	if (p->resolve) {
		const char *name = p->resolve(p->resolve_arg, s->mod, s->modn, s->pc, s->pcn,
					      f, n);

		if (name) {
			f = name;
			n = strlen(name);
		}
	}
	/* s/\+0x[\da-f]+$// : perf >= 4.8 prints symbol offsets */
	for (e = f + n; e > f && ((*(e - 1) >= '0' && *(e - 1) <= '9') ||
				  (*(e - 1) >= 'a' && *(e - 1) <= 'f')); e--)
		;
	if (e < f + n && e - f >= 3 && !memcmp(e - 3, "+0x", 3))
		n = e - 3 - f;
	if (n > 0 && f[0] == '(')        /* process names such as "(/usr/bin/foo)" */
		return 0;
	if (rd_grow((void **)&p->groups, &p->cap_groups, p->ngroups + 1, sizeof(*p->groups)))
		return fail(p, -ENOMEM, "out of memory");
	first = p->nframes;
	/* split /->/: empty trailing pieces are dropped, inner ones kept */
	while (n > 0) {
		const char *arrow = find_arrow(f, n);
		size_t len = arrow ? (size_t)(arrow - f) : n;
		size_t rest = arrow ? n - len - 2 : 0;

		if (arrow) {
			/* are all remaining pieces empty? */
			const char *r = arrow + 2;
			size_t rn = rest;

			while (rn >= 2 && r[0] == '-' && r[1] == '>')
				r += 2, rn -= 2;
			if (rn == 0)
				rest = 0;
		}
		if (len == 0 && (!arrow || rest == 0))
			break;   /* trailing empty pieces */
		/* --srcline reads a line for each piece until one is
		 * "[unknown] ([unknown])" (stackcollapse's sticky $is_unknown) */
		if (len == 9 && !memcmp(f, "[unknown]", 9) && s->modn == 9 &&
		    !memcmp(s->mod, "[unknown]", 9))
			unknown = 1;
		if ((p->flags & PS_SRCLINE) && !unknown) {
			if (!p->sl_left)
				p->sl_frame = p->nframes;
			p->sl_left++;
		}
		ret = put_func(p, f, len, &ctx, inl);
		if (ret)
			return ret;
		inl = 1;
		if (!arrow || rest == 0)
			break;
		f = arrow + 2;
		n = rest;
	}
	if (p->nframes > first)
		p->groups[p->ngroups++] = first;
	return 0;
}

/*
 * PS_PERFDATA header, from our own -F list:
 * "[blanks]comm pid/tid time: period event:[ ip sym (dso)]".  Without a call
 * graph, perf prints the one frame on this line and no blank line follows.
 */
static int perfdata_header(struct ps_parser *p, const char *l, size_t n)
{
	const char *e, *s, *c;
	struct ps_header h;
	struct ps_stackline st;
	uint64_t t;
	int ret;

	while (n > 0 && *l == ' ')
		l++, n--;
	e = l + n;
	if (!ps_match_header(l, n, &h))
		return fail(p, -EINVAL, "not perf script output (expected a sample header)");
	s = h.rest;
	while (s < e && is_ws(*s))
		s++;
	c = memchr(s, ':', e - s);
	if (!c || !parse_time(s, e, &t))
		return fail(p, -EINVAL, "sample header without a timestamp");
	s = c + 1;
	while (s < e && is_ws(*s))
		s++;
	while (s < e && is_digit(*s))
		s++;
	while (s < e && is_ws(*s))
		s++;
	/* the event name ends at the first ':' followed by a blank or the end */
	for (c = s; c < e; c++)
		if (*c == ':' && (c + 1 == e || is_ws(c[1])))
			break;
	if (c >= e || c == s)
		return fail(p, -EINVAL, "sample header without an event name");
	reset_sample(p);
	ret = header_line(p, l, c + 1 - l, &h);
	if (ret)
		return ret;
	for (s = c + 1; s < e && is_ws(*s); s++)
		;
	if (s == e || !p->have_pname)
		return 0;        /* a call graph follows, or the event is filtered */
	if (!ps_match_stack(s, e - s, &st))
		return fail(p, -EINVAL, "cannot parse the sample's ip, symbol and dso");
	ret = stack_frames(p, &st);
	return ret ? ret : emit(p);
}

/* the start of a bad line, printable whatever it holds */
static const char *excerpt(const char *l, size_t n, char *buf)
{
	size_t i, k = n > 40 ? 40 : n;

	for (i = 0; i < k; i++)
		buf[i] = l[i] >= 0x20 && l[i] < 0x7f ? l[i] : '?';
	strcpy(buf + k, n > k ? "..." : "");
	return buf;
}

/*
 * --srcline: the line perf script -F+srcline printed under a frame, with
 * every [...] taken out and blanks trimmed ("file.c:12"; "libc.so.6" from
 * "libc.so.6[27b25]"; nothing from "[kernel.kallsyms][ffff...]"), goes
 * after the frame's name and a ':'.
 */
static int srcline_line(struct ps_parser *p, const char *l, size_t n)
{
	struct buf *a = &p->arena;
	struct frame *fr;
	size_t off, i, b, e;

	fr = &p->frames[p->sl_frame++];
	p->sl_left--;
	if (buf_reserve(a, fr->len + 1 + n))
		return fail(p, -ENOMEM, "out of memory");
	off = a->len;
	memcpy(a->s + off, a->s + fr->off, fr->len);
	a->s[off + fr->len] = ':';
	b = off + fr->len + 1;
	e = b;
	for (i = 0; i < n; i++) {
		const char *close;

		if (l[i] == '[' && (close = memchr(l + i + 1, ']', n - i - 1))) {
			i = close - l;
			continue;
		}
		a->s[e++] = l[i];
	}
	while (e > b && is_ws(a->s[e - 1]))
		e--;
	for (i = b; i < e && is_ws(a->s[i]); i++)
		;
	if (i == e)
		return 0;          /* `unless $_ eq ""` */
	memmove(a->s + b, a->s + i, e - i);
	a->len = b + (e - i);
	fr->off = off;
	fr->len = a->len - off;
	return 0;
}

static int line(struct ps_parser *p, const char *l, size_t n)
{
	char ex[48];
	struct ps_header h;
	struct ps_stackline st;

	p->lineno++;
	if (p->sl_left)            /* whatever it holds, as `$_ = <>` takes it */
		return srcline_line(p, l, n);
	if (n > 0 && l[0] == '#')         /* comments, perf script --header */
		return 0;
	if (n == 0)
		return emit(p);
	if (p->flags & PS_PERFDATA) {
		const char *t = l;

		if (l[0] == '\t') {
			/* with srcline, perf prints inlined frames without a dso:
			 * stackcollapse-perf.pl passes them by */
			if (!ps_match_stack(l, n, &st))
				return p->flags & PS_SRCLINE ? 0 :
				       fail(p, -EINVAL, "cannot parse call graph line");
			return p->have_pname ? stack_frames(p, &st) : 0;
		}
		/* and their source lines, indented, are not headers */
		while (t < l + n && *t == ' ')
			t++;
		if ((p->flags & PS_SRCLINE) && t > l && !ps_match_header(t, l + n - t, &h))
			return 0;
		/* a header completes a sample that had no blank line */
		if (p->have_pname) {
			int ret = emit(p);

			if (ret)
				return ret;
		}
		return perfdata_header(p, l, n);
	}
	if (ps_match_header(l, n, &h))
		return header_line(p, l, n, &h);
	if (ps_match_stack(l, n, &st))
		return p->have_pname ? stack_frames(p, &st) : 0;
	/* the source line of a frame that is not kept (a filtered sample, a
	 * process name): stackcollapse-perf.pl warns and goes on */
	if ((p->flags & PS_SRCLINE) && is_ws(l[0]) && !memchr(l, 0, n))
		return 0;
	if (memchr(l, 0, n))
		return fail(p, -EINVAL, "binary data, not perf script output");
	if (l[n - 1] == '\r')
		return fail(p, -EINVAL, "not perf script output (CR LF line ends)");
	return fail(p, -EINVAL, "not perf script output: '%s'", excerpt(l, n, ex));
}

int ps_feed(struct ps_parser *p, const char *buf, size_t len)
{
	const char *s = buf, *e = buf + len, *nl;
	int ret;

	if (p->carry.len) {
		nl = memchr(s, '\n', len);
		if (!nl) {
			if (p->carry.len + len > MAX_LINE) {
				p->lineno++;
				return fail(p, -EINVAL, "line longer than %u MiB", MAX_LINE >> 20);
			}
			if (buf_reserve(&p->carry, len))
				return fail(p, -ENOMEM, "out of memory");
			memcpy(p->carry.s + p->carry.len, s, len);
			p->carry.len += len;
			return 0;
		}
		if (buf_reserve(&p->carry, nl - s))
			return fail(p, -ENOMEM, "out of memory");
		memcpy(p->carry.s + p->carry.len, s, nl - s);
		p->carry.len += nl - s;
		ret = line(p, p->carry.s, p->carry.len);
		p->carry.len = 0;
		if (ret)
			return ret;
		s = nl + 1;
	}
	while (s < e && (nl = memchr(s, '\n', e - s))) {
		ret = line(p, s, nl - s);
		if (ret)
			return ret;
		s = nl + 1;
	}
	if (s < e) {
		if ((size_t)(e - s) > MAX_LINE) {
			p->lineno++;
			return fail(p, -EINVAL, "line longer than %u MiB", MAX_LINE >> 20);
		}
		if (buf_reserve(&p->carry, e - s))
			return fail(p, -ENOMEM, "out of memory");
		memcpy(p->carry.s, s, e - s);
		p->carry.len = e - s;
	}
	return 0;
}

int ps_finish(struct ps_parser *p)
{
	if (p->carry.len) {
		p->lineno++;
		return fail(p, -EINVAL, "truncated: the last line has no newline");
	}
	/* like stackcollapse-perf.pl, a last sample without its blank line is
	 * dropped; with our own perf script output it cannot happen */
	if ((p->flags & PS_PERFDATA) && p->have_pname && p->nframes)
		return emit(p);
	return 0;
}

int ps_parse_fd(struct ps_parser *p, int fd)
{
	char *buf = malloc(READ_CHUNK);
	int ret = 0;

	if (!buf)
		return fail(p, -ENOMEM, "out of memory");
	for (;;) {
		ssize_t n = read(fd, buf, READ_CHUNK);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			snprintf(p->err, sizeof(p->err), "%s: %s", p->name, strerror(errno));
			break;
		}
		if (n == 0) {
			ret = ps_finish(p);
			break;
		}
		ret = ps_feed(p, buf, n);
		if (ret)
			break;
	}
	free(buf);
	return ret;
}
