/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Call statistics: every thread counts calls in its own counters and
 * keeps its timed calls' figures in its own chunks (no sharing, no
 * atomics); at close every thread's, those of exited threads included,
 * are merged and written to <dir>/jitperf-<pid>.stats (format:
 * jitperf-stats(5)).  Counts are exact; times are estimated from the
 * timed calls (timed.c, timed.h) unless every call was timed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/core.h"
#include "instr.h"

/* mmap, not malloc: probes may run in signal handlers. */
struct jp_fstat *jp_stat_chunk(struct jp_thread *t, uint32_t chunk)
{
	int saved = errno;         /* probes keep the program's errno */
	void *p = mmap(NULL, JP_FN_CHUNK * sizeof(struct jp_fstat), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	errno = saved;
	if (p == MAP_FAILED)
		return NULL;
	t->stats[chunk] = p;
	return p;
}

/* v[0..n) sorted, n <= JP_WINDOW: insertion sort, no call (probes) */
static void sort_window(float *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		float x = v[i];
		uint32_t j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* The mean of the middle half of v (sorted): unmoved by the outliers of
 * a quarter of the calls at either end, and unlike a median it averages
 * durations shorter than the clock's step (0 or one step each) into a
 * figure between them. */
static double middle_mean(const float *v, uint32_t n)
{
	uint32_t lo = n / 4, hi = n - n / 4;
	double sum = 0;

	for (uint32_t i = lo; i < hi; i++)
		sum += v[i];
	return sum / (hi - lo);
}

/*
 * The middle mean of the window stands for its calls.  Its spread (the
 * interquartile range over 1.349, the standard deviation of a normal
 * distribution of that range, unmoved by the outliers it leaves out) and
 * the spread of the windows' means give the error.
 */
void jp_stats_window_close(struct jp_thread *t, struct jp_fstat *st)
{
	uint32_t n = st->nwin;
	double m, s, W = st->win_w;
	float v[JP_WINDOW];

	if (!n)
		return;
	memcpy(v, st->win, n * sizeof(v[0]));
	sort_window(v, n);
	m = middle_mean(v, n);
	s = ((double)v[(3 * n) / 4] - v[n / 4]) / 1.349;
	/* each caller's share of the time in this callee, by the same
	 * estimate: the callers' time in callees adds up to the callee's */
	for (uint32_t i = 0; i < n; i++) {
		struct jp_fstat *cs;

		if (st->win_caller[i] != JP_NO_CALLER && m > 0 && (cs = jp_stat(t, st->win_caller[i])))
			cs->child += m * st->win_wt[i];
	}
	st->w += W;
	st->total += m * W;
	st->ws += W;
	st->wm += W * m;
	st->wm2 += W * m * m;
	st->wsd += W * s;
	st->windows++;
	st->win_timed += n;
	st->nwin = 0;
	st->win_w = 0;
}

uint64_t jp_ticks_to_ns(const struct jp_instr *in, uint64_t ticks)
{
	if (in->ticks_per_sec == 1000000000u)
		return ticks;
	return (uint64_t)((double)ticks * 1e9 / (double)in->ticks_per_sec + 0.5);
}

static double ns_of(const struct jp_instr *in, double ticks)
{
	return ticks * 1e9 / (double)in->ticks_per_sec;
}

/* A live thread's counts are in its TLS; an exited one left them here. */
static void thread_counts(const struct jp_thread *t, uint64_t *lib, uint64_t *inl, uint64_t *frm)
{
	const struct jitperf__tls *T = t->dead ? NULL : t->tls;

	*lib = T ? T->lib_calls : t->lib_calls;
	*inl = T ? T->inline_calls : t->inline_calls;
	*frm = T ? T->framed_calls : t->framed_calls;
}

void jp_totals(struct jp_instr *in, struct jp_totals *tot)
{
	uint32_t nfns = __atomic_load_n(&in->nfns, __ATOMIC_ACQUIRE);

	memset(tot, 0, sizeof(*tot));
	for (struct jp_thread *t = __atomic_load_n(&in->threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		uint64_t lib, inl, frm;

		for (uint32_t fn = 1; fn <= nfns; fn++)
			tot->calls += t->count[fn].calls;
		thread_counts(t, &lib, &inl, &frm);
		tot->lib_calls += lib;
		tot->inline_calls += inl;
		tot->framed_calls += frm;
		tot->timed += t->timed_calls;
		tot->traced += t->traced;
		tot->drop_full += t->drop_full;
		tot->drop_short += t->drop_short;
		tot->drop_ring += t->drop_ring;
	}
}

struct row {
	uint32_t fn;
	uint64_t calls, timed, unbalanced, min, max, framed;
	double   w, total, child, ctr[JPT_MAX_COUNTERS];
	double   err2;              /* variance of total (ticks^2) */
	double   inside;            /* probes' price subtracted from total */
	double   total_ns;          /* estimated, for sorting */
};

/* sqrt without libm, which the library does not link: Newton's steps from
 * above, at close only */
static double root(double x)
{
	double r = x > 1 ? x : 1, next;

	if (!(x > 0))
		return 0;
	for (int i = 0; i < 200; i++, r = next) {
		next = (r + x / r) / 2;
		if (next >= r)
			break;
	}
	return r;
}

/* The variance of the part of s's total its windows estimate (ticks^2):
 * the larger of what the spread of the windows' means and the spread
 * inside them say of their weighted mean, times their weight squared.
 * Calls timed as themselves add none. */
static double window_var(const struct jp_fstat *s)
{
	double mean, between = 0, within, sd;

	if (!s->windows || s->ws <= 0)
		return 0;
	mean = s->wm / s->ws;
	if (s->windows > 1) {
		between = s->wm2 / s->ws - mean * mean;
		between = between > 0 ? between / (double)(s->windows - 1) : 0;
	}
	sd = s->wsd / s->ws;
	within = sd * sd / (double)s->win_timed;
	return s->ws * s->ws * (between > within ? between : within);
}

static int by_total(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static void put_name(FILE *f, const char *name)
{
	for (const char *p = name; *p; p++)
		fputc(*p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p, f);
}

/* Sum every thread's counts and statistics into rows, one per function called. */
static size_t merge(struct jp_instr *in, struct row *rows, uint32_t nfns)
{
	size_t n = 0;

	/* the last, partial windows, with what they credit their callers */
	for (struct jp_thread *t = __atomic_load_n(&in->threads, __ATOMIC_ACQUIRE); t; t = t->next)
		for (uint32_t c = 0; c < JP_FN_CHUNKS; c++)
			for (uint32_t i = 0; t->stats[c] && i < JP_FN_CHUNK; i++)
				jp_stats_window_close(t, &t->stats[c][i]);

	for (uint32_t fn = 1; fn <= nfns; fn++) {
		struct row r;

		memset(&r, 0, sizeof(r));
		r.fn = fn;
		r.min = UINT64_MAX;
		for (struct jp_thread *t = __atomic_load_n(&in->threads, __ATOMIC_ACQUIRE); t; t = t->next) {
			const struct jp_fstat *c = t->stats[fn / JP_FN_CHUNK];
			const struct jp_fstat *s;

			r.calls += t->count[fn].calls;
			if (!c)
				continue;
			s = &c[fn % JP_FN_CHUNK];
			r.err2 += window_var(s);
			r.inside += s->inside;
			r.timed += s->timed;
			r.unbalanced += s->unbalanced;
			r.framed += s->framed;
			r.w += s->w;
			r.total += s->total;
			r.child += s->child;
			if (s->timed && s->min < r.min)
				r.min = s->min;
			if (s->max > r.max)
				r.max = s->max;
			for (unsigned i = 0; i < in->counters.n; i++)
				r.ctr[i] += s->ctr[i];
		}
		if (!r.calls && !r.unbalanced)
			continue;
		/* windows of calls shorter than the clock's step may add up
		 * below 0 */
		if (r.total < 0)
			r.total = 0;
		/* the timed calls stand for r.w calls; scale to the exact count */
		r.total_ns = r.w > 0 ? ns_of(in, r.total * (double)r.calls / r.w) : 0;
		rows[n++] = r;
	}
	return n;
}

static void sample_text(const struct jp_instr *in, char *buf, size_t len)
{
	if (in->mode == JP_SAMPLE_NONE)
		snprintf(buf, len, "none");
	else if (in->mode == JP_SAMPLE_ADAPTIVE)
		snprintf(buf, len, "auto:%u", in->rate);
	else
		snprintf(buf, len, "%u", in->every);
}

#define PRICE_ERROR 1.0         /* of the probes' price inside a call (write_checks) */

static double self_ns(const struct jp_instr *in, const struct row *r)
{
	return r->total_ns - ns_of(in, r->child);
}

/*
 * Per row, in the rows' order: the error of its total, and the estimated
 * time of the callees it was seen to call ("-": not known), so that a
 * reader can check the figures against each other (jitperf-stats(5)).
 */
static void write_checks(struct jp_instr *in, FILE *f, const struct row *rows, size_t n)
{
	uint64_t now = jp_monotonic_ns();
	unsigned threads = 0;

	/* the time its threads could run: no function's self time is more */
	for (struct jp_thread *t = __atomic_load_n(&in->threads, __ATOMIC_ACQUIRE); t; t = t->next)
		threads++;
	fprintf(f, "# check: wall_ns=%llu threads=%u\n",
		(unsigned long long)(now > in->open_ns ? now - in->open_ns : 0), threads);
	fputs("# error: total_ns=", f);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		/* what the probes of its callees cost in the JIT's code
		 * differs from their calibrated price with what they
		 * overlap: from none to twice as much (doc/probes.md) */
		double probes = PRICE_ERROR * r->inside;

		if (i)
			fputc(',', f);
		if (r->timed && r->w > 0)
			fprintf(f, "%.0f", ns_of(in, root(r->err2 + probes * probes) *
						 (double)r->calls / r->w));
		else
			fputc('-', f);
	}
	fputs("\n# callees: total_ns=", f);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		if (i)
			fputc(',', f);
		if (r->timed && !r->framed)
			fprintf(f, "%.0f", r->total_ns - self_ns(in, r));
		else
			fputc('-', f);
	}
	fputc('\n', f);
}

static void write_header(struct jp_instr *in, FILE *f, const struct row *rows, size_t n)
{
	const struct jp_counter_set *cs = &in->counters;
	const double *c = in->cost.c;
	struct jp_totals tot;
	uint64_t cpu = jp_clock_cpu_ns();
	double probe_ns;
	char sample[32];

	sample_text(in, sample, sizeof(sample));
	fprintf(f, "# jitperf-stats 2 pid=%d clock=%s sample=%s counters=",
		(int)in->jp->pid, jp_clock_is_tsc ? "tsc" : "monotonic", sample);
	for (unsigned i = 0; i < cs->n; i++)
		fprintf(f, "%s%s", i ? "," : "", cs->names[i]);
	fputs(cs->n ? "\n" : "-\n", f);
	/* what the probes cost, subtracted from every timed call; to the ps:
	 * jitperf report multiplies them by hundreds of millions of calls */
	fprintf(f, "# probes: self_ns=%.3f lib_ns=%.3f inline_ns=%.3f framed_ns=%.3f timed_ns=%.3f\n",
		ns_of(in, in->cost.net_self), ns_of(in, c[JPT_COST_LIB]),
		ns_of(in, c[JPT_COST_INLINE]), ns_of(in, c[JPT_COST_FRAMED]),
		ns_of(in, c[JPT_COST_TIMED]));
	jp_totals(in, &tot);
	probe_ns = ns_of(in, (double)tot.lib_calls * c[JPT_COST_LIB] +
			     (double)tot.inline_calls * c[JPT_COST_INLINE] +
			     (double)tot.framed_calls * c[JPT_COST_FRAMED] +
			     (double)tot.timed * c[JPT_COST_TIMED]);
	/* and what they cost the run, against the process's CPU time */
	fprintf(f, "# run: calls=%llu lib_calls=%llu inline_calls=%llu framed_calls=%llu timed=%llu "
		"probe_ns=%.0f cpu_ns=%llu\n", (unsigned long long)tot.calls,
		(unsigned long long)tot.lib_calls, (unsigned long long)tot.inline_calls,
		(unsigned long long)tot.framed_calls,
		(unsigned long long)tot.timed, probe_ns,
		(unsigned long long)(cpu > in->cpu_open_ns ? cpu - in->cpu_open_ns : 0));
	if (in->tracing)
		fprintf(f, "# trace: max=%llu ring=%llu min_ns=%llu traced=%llu "
			"dropped_full=%llu dropped_short=%llu dropped_ring=%llu\n",
			(unsigned long long)(in->trace ? JPT_HEADER_SIZE +
				in->trace->max_blocks * in->trace->block_size : 0),
			(unsigned long long)in->trace_ring,
			(unsigned long long)in->trace_min_ns, (unsigned long long)tot.traced,
			(unsigned long long)tot.drop_full, (unsigned long long)tot.drop_short,
			(unsigned long long)tot.drop_ring);
	for (unsigned i = 0; i < cs->n; i++)
		if (!cs->ok[i])
			fprintf(f, "# unsupported counter %s: %s\n", cs->names[i], cs->why[i]);
	write_checks(in, f, rows, n);
	fputs("function\tcalls\ttimed\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced", f);
	for (unsigned i = 0; i < cs->n; i++)
		fprintf(f, "\t%s", cs->names[i]);
	fputc('\n', f);
}

static void write_rows(struct jp_instr *in, FILE *f, struct row *rows, size_t n)
{
	const struct jp_counter_set *cs = &in->counters;

	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		double scale = r->w > 0 ? (double)r->calls / r->w : 0;
		double total = r->total_ns, self = self_ns(in, r);

		put_name(f, jp_fnent(in, r->fn)->name);
		fprintf(f, "\t%llu\t%llu", (unsigned long long)r->calls, (unsigned long long)r->timed);
		if (r->timed) {
			fprintf(f, "\t%.0f", total);
			/* callees entered by code that keeps no stack were not
			 * credited to their callers: self time not known */
			if (r->framed)
				fputs("\t-", f);
			else
				fprintf(f, "\t%.0f", self > 0 ? self : 0);
			fprintf(f, "\t%llu\t%.0f\t%llu", (unsigned long long)jp_ticks_to_ns(in, r->min),
				r->calls ? (double)(uint64_t)(total / (double)r->calls) : 0,
				(unsigned long long)jp_ticks_to_ns(in, r->max));
		} else
			fputs("\t-\t-\t-\t-\t-", f);
		fprintf(f, "\t%llu", (unsigned long long)r->unbalanced);
		for (unsigned k = 0; k < cs->n; k++) {
			if (cs->ok[k] && r->timed)
				fprintf(f, "\t%.0f", r->ctr[k] * scale);
			else
				fputs("\t-", f);
		}
		fputc('\n', f);
	}
}

int jp_stats_write(struct jp_instr *in)
{
	uint32_t nfns = __atomic_load_n(&in->nfns, __ATOMIC_ACQUIRE);
	struct row *rows = calloc(nfns + 1, sizeof(*rows));
	struct jp_newfile nf;
	char path[4096];
	FILE *f;
	size_t n;
	int err;

	if (!rows)
		return -ENOMEM;
	n = merge(in, rows, nfns);
	qsort(rows, n, sizeof(*rows), by_total);
	snprintf(path, sizeof(path), "%s/jitperf-%d.stats", in->jp->dir, (int)in->jp->pid);
	/* Written under a temporary name and published whole: a reader never
	 * sees half a file, and nothing at either name is opened. */
	err = jp_newfile_create(&nf, path, O_WRONLY);
	if (err)
		goto out;
	f = fdopen(nf.fd, "w");
	if (!f) {
		err = -errno;
		goto out;
	}
	nf.fd = -1;             /* f owns it now */
	write_header(in, f, rows, n);
	write_rows(in, f, rows, n);
	if (ferror(f) | fclose(f))
		err = errno ? -errno : -EIO;
	if (!err)
		err = jp_newfile_publish(&nf);
out:
	jp_newfile_discard(&nf);
	free(rows);
	return err;
}
