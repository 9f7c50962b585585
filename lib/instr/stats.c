/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Call statistics: each thread accumulates per-function counts in its own
 * chunks (no sharing, no atomics); at close every thread's chunks, those of
 * exited threads included, are merged and written to
 * <dir>/jitperf-<pid>.stats (format: jitperf-stats(5)).
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

uint64_t jp_ticks_to_ns(const struct jp_instr *in, uint64_t ticks)
{
	if (in->ticks_per_sec == 1000000000u)
		return ticks;
	return (uint64_t)((double)ticks * 1e9 / (double)in->ticks_per_sec + 0.5);
}

struct row {
	uint32_t        fn;
	struct jp_fstat s;
};

static int by_total(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->s.total != y->s.total)
		return x->s.total < y->s.total ? 1 : -1;
	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static void put_name(FILE *f, const char *name)
{
	for (const char *p = name; *p; p++)
		fputc(*p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p, f);
}

/* Sum every thread's statistics into rows[fn], one per function called. */
static size_t merge(struct jp_instr *in, struct row *rows, uint32_t nfns)
{
	size_t n = 0;

	for (uint32_t fn = 1; fn <= nfns; fn++) {
		struct jp_fstat sum;

		memset(&sum, 0, sizeof(sum));
		sum.min = UINT64_MAX;
		for (struct jp_thread *t = __atomic_load_n(&in->threads, __ATOMIC_ACQUIRE); t; t = t->next) {
			const struct jp_fstat *c = t->stats[fn / JP_FN_CHUNK];
			const struct jp_fstat *s;

			if (!c)
				continue;
			s = &c[fn % JP_FN_CHUNK];
			sum.calls += s->calls;
			sum.total += s->total;
			sum.self += s->self;
			sum.unbalanced += s->unbalanced;
			if (s->calls && s->min < sum.min)
				sum.min = s->min;
			if (s->max > sum.max)
				sum.max = s->max;
			for (unsigned i = 0; i < in->counters.n; i++)
				sum.ctr[i] += s->ctr[i];
		}
		if (!sum.calls && !sum.unbalanced)
			continue;
		rows[n].fn = fn;
		rows[n].s = sum;
		n++;
	}
	return n;
}

static void write_rows(struct jp_instr *in, FILE *f, struct row *rows, size_t n)
{
	const struct jp_counter_set *cs = &in->counters;

	fprintf(f, "# jitperf-stats 1 pid=%d clock=%s sample_every=%u counters=",
		(int)in->jp->pid, jp_clock_is_tsc ? "tsc" : "monotonic", in->sample_every);
	for (unsigned i = 0; i < cs->n; i++)
		fprintf(f, "%s%s", i ? "," : "", cs->names[i]);
	fputs(cs->n ? "\n" : "-\n", f);
	for (unsigned i = 0; i < cs->n; i++)
		if (!cs->ok[i])
			fprintf(f, "# unsupported counter %s: %s\n", cs->names[i], cs->why[i]);
	fputs("function\tcalls\ttotal_ns\tself_ns\tmin_ns\tmean_ns\tmax_ns\tunbalanced", f);
	for (unsigned i = 0; i < cs->n; i++)
		fprintf(f, "\t%s", cs->names[i]);
	fputc('\n', f);
	for (size_t r = 0; r < n; r++) {
		const struct jp_fstat *s = &rows[r].s;
		uint64_t total = jp_ticks_to_ns(in, s->total);

		put_name(f, jp_fnent(in, rows[r].fn)->name);
		fprintf(f, "\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu",
			(unsigned long long)s->calls, (unsigned long long)total,
			(unsigned long long)jp_ticks_to_ns(in, s->self),
			(unsigned long long)(s->calls ? jp_ticks_to_ns(in, s->min) : 0),
			(unsigned long long)(s->calls ? total / s->calls : 0),
			(unsigned long long)jp_ticks_to_ns(in, s->max),
			(unsigned long long)s->unbalanced);
		for (unsigned i = 0; i < cs->n; i++) {
			if (cs->ok[i])
				fprintf(f, "\t%llu", (unsigned long long)s->ctr[i]);
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
