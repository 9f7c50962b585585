/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SVG flame graph writer, in the look of flamegraph.pl: one rectangle per
 * frame, width by weight, root at the bottom, a <title> per frame for the
 * hover text "name (N UNIT, P%)", colours from a hash of the name (so the
 * output is deterministic), and a few lines of inline script for click to
 * zoom.  Self-contained: no fonts, images or scripts from elsewhere.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/convert/convert.h"
#include "tools/convert/foldkey.h"
#include "tools/convert/stacks.h"
#include "tools/convert/textesc.h"

#define IMAGE_WIDTH  1200.0
#define FRAME_HEIGHT 16
#define FONT_SIZE    12
#define FONT_WIDTH   0.59
#define XPAD         10.0
#define YPAD1        (FONT_SIZE * 4)   /* title and what the width measures */
#define YPAD2        (FONT_SIZE * 2 + 10)
#define MIN_WIDTH    0.1

struct node {
	const char *name;
	size_t      len;
	size_t      depth;
	uint64_t    start, end;
};

struct svg {
	struct foldagg        a;        /* first: the stacks, by foldagg_* */
	char                  event[64];  /* of the samples (the first event only is kept) */
	int                   periods;  /* a sample weighs more than 1: its period counts */
	struct node          *nodes;
	size_t                nnodes, cap_nodes;
	char                 *esc;
	size_t                esc_cap;
};

static void *svg_begin(struct outfile *out, const struct cv_opts *o)
{
	struct svg *s = calloc(1, sizeof(*s));

	if (s && foldagg_init(&s->a, out, o)) {
		foldagg_fini(&s->a);
		free(s);
		return NULL;
	}
	return s;
}

static int add_node(struct svg *s, const char *name, size_t len, size_t depth,
		    uint64_t start, uint64_t end)
{
	if (s->nnodes == s->cap_nodes) {
		size_t cap = s->cap_nodes ? s->cap_nodes * 2 : 1024;
		struct node *n = realloc(s->nodes, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->nodes = n;
		s->cap_nodes = cap;
	}
	s->nodes[s->nnodes++] = (struct node){ name, len, depth, start, end };
	return 0;
}

struct open {
	const char *name;
	size_t      len;
	uint64_t    start;
};

/* flamegraph.pl's flow(): sorted stacks side by side, merging equal prefixes */
static int layout(struct svg *s, const struct stack_ent *const *v, size_t n, size_t *maxdepth)
{
	struct open *open = NULL;
	size_t nopen = 0, cap = 0, i;
	uint64_t x = 0;
	int ret = 0;

	*maxdepth = 0;
	for (i = 0; i <= n && !ret; i++) {
		const char *p = i < n ? v[i]->key : "", *e = p + (i < n ? v[i]->len : 0);
		size_t d = 0;

		/* walk the new stack's frames against the open ones */
		while (i < n && p <= e) {
			const char *semi = memchr(p, ';', e - p);
			size_t len = (semi ? semi : e) - p;

			if (d < nopen && open[d].len == len && !memcmp(open[d].name, p, len)) {
				d++;
				p += len + 1;
				continue;
			}
			break;
		}
		while (nopen > d && !ret) {
			nopen--;
			ret = add_node(s, open[nopen].name, open[nopen].len, nopen + 1, open[nopen].start, x);
		}
		while (i < n && p <= e && !ret) {
			const char *semi = memchr(p, ';', e - p);
			size_t len = (semi ? semi : e) - p;

			if (nopen == cap) {
				struct open *o;

				cap = cap ? cap * 2 : 64;
				o = realloc(open, cap * sizeof(*o));
				if (!o) {
					ret = -ENOMEM;
					break;
				}
				open = o;
			}
			open[nopen++] = (struct open){ p, len, x };
			if (nopen > *maxdepth)
				*maxdepth = nopen;
			p += len + 1;
		}
		if (i < n)
			x += v[i]->count;
	}
	free(open);
	return ret;
}

static const char *escape(struct svg *s, const char *str, size_t n)
{
	if (TEXTESC_MAX(n) > s->esc_cap) {
		char *b = realloc(s->esc, TEXTESC_MAX(n) * 2);

		if (!b)
			return NULL;
		s->esc = b;
		s->esc_cap = TEXTESC_MAX(n) * 2;
	}
	*textesc_xml(s->esc, str, n) = 0;
	return s->esc;
}

/* 1234567 -> "1,234,567" as flamegraph.pl prints counts */
static void commas(char *buf, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), i, o = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
}

/* FNV-1a of the name: the same name always gets the same colour */
static void colour(const char *name, size_t len, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	*r = 205 + (int)((h & 0xff) * 50 / 255);
	*g = (int)(((h >> 8) & 0xff) * 230 / 255);
	*b = (int)(((h >> 16) & 0xff) * 55 / 255);
	if (len >= 4 && !memcmp(name + len - 4, "_[j]", 4)) {   /* JIT: green */
		*r = 50 + (int)((h & 0xff) * 60 / 255);
		*g = 180 + (int)(((h >> 8) & 0xff) * 55 / 255);
		*b = 50;
	}
}

/* how much of the name fits: whole UTF-8 characters, ".." when cut */
static size_t fit(const char *name, size_t len, double width, int *cut)
{
	size_t chars = (size_t)(width / (FONT_SIZE * FONT_WIDTH)), i = 0, c = 0;

	*cut = 0;
	if (chars < 3)
		return 0;
	while (i < len && c < chars) {
		size_t k = textesc_utf8_seq((const unsigned char *)name + i, len - i);

		i += k ? k : 1;
		c++;
	}
	if (i < len) {
		/* room for ".." */
		size_t j = 0, cc = 0;

		while (j < len && cc < chars - 2) {
			size_t k = textesc_utf8_seq((const unsigned char *)name + j, len - j);

			j += k ? k : 1;
			cc++;
		}
		*cut = 1;
		return j;
	}
	return len;
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"// click a frame to zoom to it; click the background to reset\n"
	"var W=%g, P=%g;\n"
	"function frames(){return document.querySelectorAll('g.f');}\n"
	"function zoom(g){var x=+g.getAttribute('data-x'),w=+g.getAttribute('data-w'),"
	"d=+g.getAttribute('data-d');\n"
	" frames().forEach(function(f){var fx=+f.getAttribute('data-x'),fw=+f.getAttribute('data-w'),"
	"fd=+f.getAttribute('data-d');\n"
	"  var r=f.querySelector('rect'),t=f.querySelector('text');\n"
	"  var show=fd<d?(fx<=x&&fx+fw>=x+w):(fx>=x&&fx+fw<=x+w);\n"
	"  f.style.display=show?'':'none'; if(!show)return;\n"
	"  var nx=fd<d?0:(fx-x)/w, nw=fd<d?1:fw/w;\n"
	"  r.setAttribute('x',P+nx*(W-2*P)); r.setAttribute('width',nw*(W-2*P));\n"
	"  if(t){t.setAttribute('x',P+nx*(W-2*P)+3);}});}\n"
	"function reset(){frames().forEach(function(f){f.style.display='';"
	"var r=f.querySelector('rect'),t=f.querySelector('text');"
	"r.setAttribute('x',r.getAttribute('data-x0'));r.setAttribute('width',r.getAttribute('data-w0'));"
	"if(t)t.setAttribute('x',t.getAttribute('data-x0'));});}\n"
	"document.addEventListener('click',function(e){var g=e.target.closest('g.f');"
	"if(g)zoom(g);else reset();});\n"
	"]]></script>\n";

/*
 * A sample weighs its period, as in stackcollapse-perf.pl: nanoseconds of
 * CPU time for cpu-clock and task-clock, events (cycles, ...) for others,
 * 1 when perf script printed no period.  Noted here for the unit.
 */
static int svg_sample(void *w, const struct ps_sample *smp)
{
	struct svg *s = w;

	if (!s->event[0] && smp->event.len)
		snprintf(s->event, sizeof(s->event), "%.*s", (int)smp->event.len, smp->event.s);
	s->periods |= smp->period != 1;
	return foldagg_sample(w, smp);
}

/* A piece's state for parallel folding: the stacks, and what they weigh. */
static void *svg_fork(void *w)
{
	struct svg *s = w, *f = calloc(1, sizeof(*f));

	if (f && foldagg_init(&f->a, s->a.out, s->a.o)) {
		foldagg_fini(&f->a);
		free(f);
		f = NULL;
	}
	return f;
}

/* Pieces merge in file order: the first event met is the first piece's. */
static int svg_merge(void *w, void *part)
{
	struct svg *s = w, *p = part;

	if (!s->event[0])
		memcpy(s->event, p->event, sizeof(s->event));
	s->periods |= p->periods;
	return foldagg_merge(&s->a, &p->a);    /* frees p */
}

/* What the width of a frame measures: for the hover text and the subtitle. */
static const char *unit_of(const struct svg *s, const char **what)
{
	size_t n = strcspn(s->event, ":");

	if (s->a.o->source == CV_CALLS) {
		*what = "self time of instrumented calls";
		return "ns";
	}
	if (!s->periods) {
		*what = "perf samples";
		return "samples";
	}
	if ((n == 9 && !strncmp(s->event, "cpu-clock", 9)) ||
	    (n == 10 && !strncmp(s->event, "task-clock", 10))) {
		*what = "CPU time sampled (sample periods)";
		return "ns";
	}
	*what = "events sampled (sample periods)";
	return s->event[0] ? s->event : "events";
}

static int svg_end(void *w)
{
	struct svg *s = w;
	FILE *fp = s->a.out->fp;
	const struct stack_ent *const *v;
	size_t n, maxdepth, i;
	uint64_t total;
	const char *what, *unit = unit_of(s, &what);
	double scale, height;
	int ret;

	v = stacks_sorted(s->a.t, &n);
	if (!v)
		return -ENOMEM;
	total = stacks_total(s->a.t);       /* after sorting: sums below zero are 0 */
	ret = layout(s, v, n, &maxdepth);
	if (ret)
		return ret;
	ret = add_node(s, "all", 3, 0, 0, total);
	if (ret)
		return ret;
	height = (maxdepth + 1) * FRAME_HEIGHT + YPAD1 + YPAD2;
	scale = total ? (IMAGE_WIDTH - 2 * XPAD) / (double)total : 0;

	fprintf(fp, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", IMAGE_WIDTH, height, IMAGE_WIDTH, height);
	fprintf(fp, script, IMAGE_WIDTH, XPAD);
	fprintf(fp, "<style>text{font-family:Verdana,sans-serif;font-size:%dpx;fill:#000}"
		"g.f:hover rect{stroke:#000;stroke-width:0.5}</style>\n", FONT_SIZE);
	fprintf(fp, "<rect x=\"0\" y=\"0\" width=\"%g\" height=\"%g\" fill=\"#f8f8f8\"/>\n",
		IMAGE_WIDTH, height);
	fprintf(fp, "<text x=\"%g\" y=\"%d\" text-anchor=\"middle\" style=\"font-size:17px\">%s</text>\n",
		IMAGE_WIDTH / 2, FONT_SIZE * 2, escape(s, s->a.o->title, strlen(s->a.o->title)));
	fprintf(fp, "<text x=\"%g\" y=\"%d\" text-anchor=\"middle\" class=\"unit\">width: %s, in %s</text>\n",
		IMAGE_WIDTH / 2, FONT_SIZE * 3 + 4, what, escape(s, unit, strlen(unit)));
	/* parents before children: the last node is the root, the rest closed
	 * leaf first, so walk backwards */
	for (i = s->nnodes; i-- > 0;) {
		const struct node *nd = &s->nodes[i];
		double x = XPAD + nd->start * scale, wd = (nd->end - nd->start) * scale;
		double y = height - YPAD2 - (nd->depth + 1) * FRAME_HEIGHT + 1;
		char cnt[32];
		int r, g, b, cut;
		size_t k;

		if (wd < MIN_WIDTH)
			continue;
		colour(nd->name, nd->len, &r, &g, &b);
		commas(cnt, nd->end - nd->start);
		fprintf(fp, "<g class=\"f\" data-x=\"%.6f\" data-w=\"%.6f\" data-d=\"%zu\"><title>%s (%s %s, %.2f%%)</title>",
			total ? (double)nd->start / total : 0, total ? (double)(nd->end - nd->start) / total : 0,
			nd->depth, escape(s, nd->name, nd->len), cnt, unit,
			total ? 100.0 * (nd->end - nd->start) / total : 0.0);
		fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" data-x0=\"%.1f\" "
			"data-w0=\"%.1f\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>",
			x, y, wd, FRAME_HEIGHT - 1, x, wd, r, g, b);
		k = fit(nd->name, nd->len, wd, &cut);
		if (k)
			fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" data-x0=\"%.1f\">%s%s</text>",
				x + 3, y + FRAME_HEIGHT - 5, x + 3, escape(s, nd->name, k), cut ? ".." : "");
		fputs("</g>\n", fp);
	}
	fputs("</svg>\n", fp);
	return ferror(fp) ? -EIO : 0;
}

static void svg_free(void *w)
{
	struct svg *s = w;

	if (!s)
		return;
	foldagg_fini(&s->a);
	free(s->nodes);
	free(s->esc);
	free(s);
}

const struct cv_ops cv_svg_ops = {
	.what   = "svg",
	.flags  = CV_CALL_STACKS | CV_STACKS_ONLY,
	.begin  = svg_begin,
	.sample = svg_sample,
	.call   = foldagg_call,
	.fork   = svg_fork,
	.merge  = svg_merge,
	.drop   = foldagg_drop,     /* a struct svg starts with its foldagg */
	.end    = svg_end,
	.free   = svg_free,
};
