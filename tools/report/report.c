/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report: one table of where the time went in JIT code, by
 * function name: the sample share perf measured (self, and children when
 * call graphs were recorded) beside the exact instrumented figures of the
 * statistics files (calls, mean, min, max, counters per call).
 *
 * Samples come from the perf.data itself (read/pdscript.h, no perf needed),
 * named as perf report names them: self is the sample's own symbol, children
 * the share of all periods whose call graph holds the function (once a
 * sample, as perf report --children counts).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"
#include "read/jitdump_read.h"
#include "read/pdscript.h"
#include "read/stats_read.h"
#include "read/symbolize.h"
#include "tools/cmds.h"
#include "tools/perf.h"
#include "tools/rundir.h"

static const char usage_text[] =
	"usage: jitperf report [DIR] [--perf] [--tiers] [--json]\n"
	"\n"
	"Where the time went in the JIT code of a jitperf record directory (default\n"
	"jitperf.data): per function, the share of perf samples (self and children)\n"
	"and the instrumented figures (calls counted, calls timed, mean, min and max\n"
	"ns estimated from the timed calls net of the probes' cost, counters per call).\n"
	"Functions of -finstrument-functions programs (libjitperf-cyg) are named\n"
	"'function (file.c:line)'; samples in libjitperf's own probes are the row\n"
	"'(jitperf probes)'.  Tiered JIT code (func[tag], V8's ~ ^ + * marks, .NET's\n"
	"[QuickJitted] ...) adds a tiers table under it.\n"
	"\n"
	"  -t, --tiers     only the tiers table: per function and tier, compiles,\n"
	"                  compile, queue and install ms, samples, calls, ns/call,\n"
	"                  break-even calls and whether the tier-up paid back\n"
	"  -j, --json      the report as one JSON object (fields: jitperf-report(1))\n"
	"  -p, --perf      run perf report on DIR/perf.jit.data instead\n"
	"  -h, --help      show this help\n";

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static struct fnrow *lookup(struct table *t, const char *name)
{
	size_t i;

	if (t->n * 2 >= t->nslot) {
		size_t nslot = t->nslot ? t->nslot * 2 : 256;
		size_t *slot = calloc(nslot, sizeof(*slot));

		if (!slot)
			return NULL;
		for (size_t r = 0; r < t->n; r++) {
			for (i = hash(t->rows[r].name) & (nslot - 1); slot[i]; i = (i + 1) & (nslot - 1))
				;
			slot[i] = r + 1;
		}
		free(t->slot);
		t->slot = slot;
		t->nslot = nslot;
	}
	for (i = hash(name) & (t->nslot - 1); t->slot[i]; i = (i + 1) & (t->nslot - 1))
		if (!strcmp(t->rows[t->slot[i] - 1].name, name))
			return &t->rows[t->slot[i] - 1];
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct fnrow *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return NULL;
		t->rows = rows;
		t->cap = cap;
	}
	memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
	t->rows[t->n].children = -1;
	if (!(t->rows[t->n].name = strdup(name)))
		return NULL;
	t->slot[i] = ++t->n;
	return &t->rows[t->n - 1];
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->rows[i].name);
		free(t->rows[i].label);
		free(t->rows[i].ctr);
	}
	for (size_t i = 0; i < t->ncounters; i++)
		free(t->counters[i]);
	free(t->counters);
	free(t->rows);
	free(t->slot);
	for (size_t i = 0; i < t->nwarnings; i++)
		free(t->warnings[i]);
	free(t->warnings);
}

/*
 * The row of a registered function.  libjitperf-cyg registers native
 * functions as "@native:<module>+0x<offset>": their row is keyed by the
 * function name perf gives the same code ("fib") so the samples meet the
 * calls, and labelled "fib (file.c:line)" from the module's debug info.
 */
static struct fnrow *registered(struct table *t, const char *name)
{
	char buf[512];
	struct fnrow *row;
	size_t len;

	if (strncmp(name, SYM_NATIVE_PREFIX, strlen(SYM_NATIVE_PREFIX)) ||
	    sym_native_name(name, buf, sizeof(buf)) || !strcmp(buf, name))
		return lookup(t, name);
	len = strcspn(buf, " ");
	if (!buf[len])
		return lookup(t, buf);          /* a name without a source line */
	buf[len] = '\0';
	row = lookup(t, buf);
	buf[len] = ' ';
	if (row && !row->label && !(row->label = strdup(buf)))
		return NULL;
	return row;
}

/* Every name a jitdump loaded is JIT code, sampled or not. */
static int add_jitdump_names(struct table *t, const struct rundir *rd)
{
	char err[512];

	for (size_t i = 0; i < rd->ndumps; i++) {
		struct jd_file *f;
		struct jd_record rec;
		int r;

		if (jd_open(&f, rd->dumps[i], err, sizeof(err))) {
			cmd_err("%s", err);
			t->bad_input = 1;
			continue;
		}
		while ((r = jd_next(f, &rec, err, sizeof(err))) != 0) {
			struct fnrow *row;

			if (r == -EBADMSG) {
				cmd_err("%s", err);
				t->bad_input = 1;
				break;
			}
			if (r != 1 || rec.id != JIT_CODE_LOAD)
				continue;
			if (!(row = registered(t, rec.name))) {
				jd_close(f);
				return -ENOMEM;
			}
			row->jit = 1;
		}
		jd_close(f);
	}
	return 0;
}

static int add_stats(struct table *t, const struct rundir *rd)
{
	char err[512];

	for (size_t i = 0; i < rd->nstats; i++) {
		struct report_check chk = { 0 };
		struct stats_file *s;

		if (stats_read(rd->stats[i], &s, err, sizeof(err))) {
			cmd_err("%s", err);
			t->bad_input = 1;
			continue;
		}
		if (!t->counters && s->ncounters) {
			t->counters = calloc(s->ncounters, sizeof(char *));
			if (!t->counters)
				goto nomem;
			for (size_t c = 0; c < s->ncounters; c++)
				if (!(t->counters[t->ncounters++] = strdup(s->counters[c])))
					goto nomem;
		}
		report_run_add(&t->run, s);
		if (report_check_read(rd->stats[i], &chk, s->nrows) ||
		    report_check_run(t, s, &chk))
			goto nomem;
		for (size_t r = 0; r < s->nrows; r++) {
			const struct stats_row *sr = &s->rows[r];
			struct fnrow *row = registered(t, sr->name);

			if (!row)
				goto nomem;
			row->jit = 1;
			if (!row->ctr && t->ncounters &&
			    !(row->ctr = calloc(t->ncounters, sizeof(uint64_t))))
				goto nomem;
			report_row_add(row, s, sr);
			if (chk.err_ns[r] >= 0) {
				row->has_err = 1;
				row->err2 += chk.err_ns[r] * chk.err_ns[r];
			}
			/* counters are matched by name: processes may list them differently */
			for (size_t c = 0; c < s->ncounters; c++)
				for (size_t k = 0; k < t->ncounters; k++)
					if (!strcmp(s->counters[c], t->counters[k]))
						row->ctr[k] = sr->counters[c] == STATS_NO_VALUE ||
							row->ctr[k] == STATS_NO_VALUE ? STATS_NO_VALUE :
							row->ctr[k] + sr->counters[c];
		}
		report_check_free(&chk);
		stats_free(s);
		t->nstats++;
		continue;
nomem:
		report_check_free(&chk);
		stats_free(s);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Code of libjitperf itself (libjitperf.so*, libjitperf-cyg.so*) or its
 * probe functions where they were linked in statically: the cost of the
 * instrumentation, shown apart from the program's own non-JIT code.
 */
static int is_probe(const char *dso, const char *sym)
{
	static const char *const probes[] = { "jitperf__enter_slow", "jitperf__exit_slow",
					      "jitperf_enter", "jitperf_exit" };

	if (!strncmp(dso, "libjitperf", 10) && strstr(dso, ".so"))
		return 1;
	/* a JIT may name its own code anything, jp_* included */
	if (!strncmp(dso, "jitted-", 7) || !strncmp(dso, "jitimage-", 9) ||
	    !strncmp(dso, "perf-", 5) || !strncmp(dso, "[JIT]", 5))
		return 0;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		if (!strcmp(sym, probes[i]))
			return 1;
	return !strncmp(sym, "jp_", 3);
}

/* the name a place gets in the table: perf's symbol, else the address */
static const char *place_name(const struct pd_frame *f, char *buf, size_t len)
{
	if (f->loc.sym)
		return f->loc.sym->name;
	snprintf(buf, len, "0x%016" PRIx64, f->loc.addr);
	return buf;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

struct sample_ctx {
	struct table *t;
	struct tiers *tiers;
	uint64_t      period;       /* all samples' periods: children% are shares of it */
	uint64_t      seq;          /* sample number: a row's children count once a sample */
};

/*
 * One sample: the row of its leaf (or the probes) gets the sample, every
 * distinct row of its call graph the period (perf report --children).
 */
static int add_sample(const struct pd_raw *s, void *arg)
{
	struct sample_ctx *c = arg;
	struct table *t = c->t;
	struct fnrow *row;
	char buf[32];
	const char *name, *dso;
	size_t i;

	c->seq++;
	c->period += s->period;
	t->total_samples++;
	for (i = 0; i < s->nframes; i++) {
		const struct pd_frame *f = &s->frames[i];

		name = place_name(f, buf, sizeof(buf));
		dso = f->loc.map ? base_name(f->loc.map->dso->name) : "[unknown]";
		if (is_probe(dso, name)) {
			if (i == 0)
				t->probe_samples++;
			continue;
		}
		row = lookup(t, name);
		if (!row)
			return -ENOMEM;
		/* JIT code of any runtime: a perf map or an injected jitted-*.so, jitimage-*.so */
		if (f->loc.map && f->loc.map->dso->jit)
			row->jit = 1;
		if (i == 0)
			row->samples++;
		if (s->sample->has_callchain && row->seen != c->seq) {
			row->seen = c->seq;
			row->child_period += s->period;
		}
	}
	if (s->sample->has_callchain)
		t->have_children = 1;
	return report_tiers_sample(c->tiers, s);
}

/*
 * Read the perf.data natively and feed its samples to the table: 0, or
 * -errno with the reader's message in err.
 */
static int perf_samples(struct table *t, struct tiers *tiers, const char *data, char *err,
			size_t errlen)
{
	struct sample_ctx c = { .t = t, .tiers = tiers };
	struct pd_script_info info;
	int ret;

	ret = pd_raw_read(data, NULL, add_sample, &c, &info, err, errlen);
	if (ret == -ENOTSUP)
		snprintf(err, errlen, "%s: call graphs recorded with --call-graph dwarf are "
			 "read by perf report: use jitperf report --perf", data);
	if (ret)
		return ret;
	for (size_t i = 0; i < t->n; i++)
		t->rows[i].children = t->have_children && c.period ?
				      100.0 * (double)t->rows[i].child_period / (double)c.period : -1;
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct fnrow *x = a, *y = b;

	/* the samples of the function's own code, its probes moved out */
	if (x->samples - x->probe_samples != y->samples - y->probe_samples)
		return x->samples - x->probe_samples < y->samples - y->probe_samples ? 1 : -1;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

#define NAME_MAX_WIDTH 48

/*
 * The name column: a name longer than NAME_MAX_WIDTH keeps its start and
 * its end, where runtimes put the file (V8's "JS:*f node:internal/..."),
 * with "..." between, so the columns after it stay aligned.
 */
static void print_name(const char *name, int width)
{
	size_t len = strlen(name);
	const size_t head = NAME_MAX_WIDTH - 3 - 15;

	if (len <= NAME_MAX_WIDTH)
		printf("%-*s", width, name);
	else
		printf("%.*s...%s", (int)head, name, name + len - (NAME_MAX_WIDTH - 3 - head));
}

void report_table_sort(struct table *t)
{
	if (t->have_perf)
		report_probes_move(t);
	for (size_t i = 0; i < t->n; i++) {
		struct fnrow *r = &t->rows[i];

		if (!r->jit)
			continue;
		t->jit_samples += r->samples - r->probe_samples;
		t->has_stats |= r->has_stats;
	}
	/*
	 * The probes' row only when something was instrumented; otherwise
	 * libjitperf's samples are registration, with the rest that is not
	 * JIT code.
	 */
	t->shown_probes = t->has_stats ? t->probe_samples + t->moved_samples : 0;
	if (t->n)
		qsort(t->rows, t->n, sizeof(t->rows[0]), cmp_rows);
	free(t->slot);      /* rows moved: the hash is stale */
	t->slot = NULL;
	t->nslot = 0;
}

static void print_table(struct table *t, const char *dir)
{
	uint64_t jit_samples = t->jit_samples, probes = t->shown_probes;
	int stats = t->has_stats, width = 14;      /* "(not JIT code)" */
	size_t shown = 0, quiet = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct fnrow *r = &t->rows[i];
		int len = (int)strlen(r->label ? r->label : r->name);

		if (r->jit)
			width = len > width ? (len > NAME_MAX_WIDTH ? NAME_MAX_WIDTH : len) : width;
	}
	if (probes && width < 16)
		width = 16;                     /* "(jitperf probes)" */

	printf("# %s: ", dir);
	if (t->have_perf)
		printf("%" PRIu64 " samples, %.2f%% in JIT code; ", t->total_samples,
		       t->total_samples ? 100.0 * (double)jit_samples / (double)t->total_samples : 0.0);
	printf("%zu process%s with instrumented calls\n", t->nstats, t->nstats == 1 ? "" : "es");
	printf("%-*s", width, "function");
	if (t->have_perf)
		printf(" %7s %9s %8s", "self%", "children%", "samples");
	if (stats) {
		printf(" %10s %8s %12s %12s %12s", "calls", "timed", "mean_ns", "min_ns", "max_ns");
		for (size_t k = 0; k < t->ncounters; k++)
			printf(" %14s/call", t->counters[k]);
	}
	putchar('\n');
	for (size_t i = 0; i < t->n; i++) {
		const struct fnrow *r = &t->rows[i];

		if (!r->jit)
			continue;
		if (report_row_quiet(r)) {
			quiet++;
			continue;
		}
		shown++;
		print_name(r->label ? r->label : r->name, width);
		if (t->have_perf) {
			uint64_t own = r->samples - r->probe_samples;

			printf(" %7.2f", t->total_samples ?
			       100.0 * (double)own / (double)t->total_samples : 0.0);
			if (r->children >= 0)
				printf(" %9.2f", r->children);
			else
				printf(" %9s", "-");
			printf(" %8" PRIu64, own);
		}
		if (stats && r->has_stats) {
			report_print_times(r, &t->run);
			for (size_t k = 0; k < t->ncounters; k++) {
				if (r->ctr[k] == STATS_NO_VALUE || !r->calls)
					printf(" %19s", "-");
				else
					printf(" %19" PRIu64, r->ctr[k] / r->calls);
			}
		} else if (stats) {
			printf(" %10s %8s %12s %12s %12s", "-", "-", "-", "-", "-");
			for (size_t k = 0; k < t->ncounters; k++)
				printf(" %19s", "-");
		}
		putchar('\n');
	}
	if (t->have_perf && probes)
		printf("%-*s %7.2f %9s %8" PRIu64 "\n", width, "(jitperf probes)",
		       100.0 * (double)probes / (double)t->total_samples, "-", probes);
	if (t->have_perf) {
		uint64_t other = t->total_samples - jit_samples - probes;

		printf("%-*s %7.2f %9s %8" PRIu64 "\n", width, "(not JIT code)",
		       t->total_samples ? 100.0 * (double)other / (double)t->total_samples : 0.0,
		       "-", other);
	}
	if (!shown && !quiet)
		printf("(no JIT code: no process wrote a jitdump or perf map, and perf saw none)\n");
	else if (quiet)
		printf("# %zu more JIT function%s without %s\n", quiet, quiet == 1 ? "" : "s",
		       t->have_perf && t->nstats ? "samples or calls" :
		       t->have_perf ? "samples" : "calls");
	if (t->have_perf && !t->have_children)
		printf("# children%%: record with -g or --call-graph to see time spent in callees\n");
	report_print_notes(t);
	report_print_warnings(t);
}

/* One report: what the steps of cmd_report share, freed in one place. */
struct report {
	const char   *dir;
	int           handover;        /* --perf */
	int           tiers_only;      /* --tiers */
	int           json;            /* --json */
	struct rundir rd;
	char         *data;            /* DIR/perf.jit.data, else DIR/perf.data */
	struct table  t;
	struct tiers  tiers;
	int           status;          /* the exit status, once known */
};

/* 0 to go on; else r->status is the exit status (help: 0, bad usage: 2). */
static int parse(int argc, char **argv, struct report *r)
{
	static const struct option opts[] = {
		{ "perf", no_argument, NULL, 'p' },
		{ "tiers", no_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	r->dir = "jitperf.data";
	optind = 1;
	opterr = 0;             /* our own messages, named "jitperf report" */
	while ((c = getopt_long(argc, argv, ":ptjh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			r->handover = 1;
			break;
		case 't':
			r->tiers_only = 1;
			break;
		case 'j':
			r->json = 1;
			break;
		case 'h':
			r->status = cmd_usage(usage_text, 1);
			return -ECANCELED;
		default:
			r->status = cmd_bad_option(c, argv);
			return -EINVAL;
		}
	}
	if (optind < argc - 1) {
		cmd_err("one directory at a time");
		fputs(usage_text, stderr);
		r->status = 2;
		return -EINVAL;
	}
	if (optind == argc - 1)
		r->dir = argv[optind];
	return 0;
}

/*
 * DIR is a recording: what it holds.  A name that is missing gets the
 * record command that makes it; one taken by something else, a new name.
 */
static int scan_dir(struct report *r)
{
	struct stat st;
	int err;

	if (stat(r->dir, &st)) {
		err = -errno;
		cmd_err("%s: %s (record one with: jitperf record -o %s -- COMMAND)", r->dir,
			strerror(errno), r->dir);
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		cmd_err("%s: not a directory (record one with: jitperf record -o DIR "
			"-- COMMAND, DIR a new name)", r->dir);
		return -ENOTDIR;
	}
	err = rundir_scan(r->dir, &r->rd);
	if (err) {
		cmd_err("%s: %s", r->dir, strerror(-err));
		return err;
	}
	if (!r->rd.has_perf_data && !r->rd.has_jit_data && !r->rd.nstats) {
		cmd_err("%s: nothing recorded here (no perf.data, "
			"perf.jit.data or jitperf-*.stats)", r->dir);
		return -ENOENT;
	}
	if (asprintf(&r->data, "%s/%s", r->dir,
		     r->rd.has_jit_data ? "perf.jit.data" : "perf.data") < 0) {
		r->data = NULL;
		cmd_err("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

/* --perf: perf report takes over the process; it returns only on failure. */
static int hand_over(struct report *r)
{
	char *perf;
	int err;

	if (!r->handover)
		return 0;
	if (!r->rd.has_perf_data && !r->rd.has_jit_data) {
		cmd_err("%s: no perf data (recorded with --no-perf)", r->dir);
		return -ENOENT;
	}
	perf = perf_find();
	err = perf ? perf_exec(perf, (const char *const[]){ "report", "-i", r->data, NULL })
		   : -ENOENT;
	cmd_err("perf: %s%s", perf ? strerror(-err) : "not found",
		perf ? "" : " (" PERF_INSTALL_HINT ")");
	free(perf);
	r->status = 127;
	return -ENOENT;
}

/* The names of the jitdumps, the figures of the statistics files, the
 * compiles of the tiers files. */
static int read_registered(struct report *r)
{
	int err = add_jitdump_names(&r->t, &r->rd);

	err = err ?: add_stats(&r->t, &r->rd);
	err = err ?: report_tiers_load(&r->tiers, r->dir, &r->rd, &r->t.bad_input);
	if (err)
		cmd_err("%s", strerror(-err));
	return err;
}

/* perf's samples; a damaged perf.data still shows the rest, and exits 1. */
static int read_samples(struct report *r)
{
	char perr[512];
	int err;

	if (!r->rd.has_perf_data && !r->rd.has_jit_data)
		return 0;
	err = perf_samples(&r->t, &r->tiers, r->data, perr, sizeof(perr));
	if (err == -ENOMEM) {
		cmd_err("%s", strerror(ENOMEM));
		return err;
	}
	if (err) {
		cmd_err("%s; showing instrumented figures only", perr);
		r->t.bad_input = 1;
	}
	r->t.have_perf = !err;
	return 0;
}

static int show(struct report *r)
{
	int err;

	report_table_sort(&r->t);
	err = report_tiers_finish(&r->tiers, &r->t, &r->rd);
	if (err) {
		cmd_err("%s", strerror(-err));
		return err;
	}
	r->status = r->t.bad_input;
	if (r->json) {
		report_json(&r->t, &r->tiers, r->dir, r->tiers_only);
		return 0;
	}
	/* no table of nothing readable */
	if (!r->tiers_only && (r->t.nstats || r->t.have_perf || !r->t.bad_input))
		print_table(&r->t, r->dir);
	if (r->tiers.n) {
		if (!r->tiers_only)
			putchar('\n');
		report_tiers_print(&r->tiers);
	} else if (r->tiers_only) {
		printf("# %s: no tier data (no jit-<pid>.tiers, no tier marks in the names "
		       "of the samples or instrumented calls)\n", r->dir);
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report r = { .status = 1 };
	int err;

	err = parse(argc, argv, &r);
	err = err ?: scan_dir(&r);
	err = err ?: hand_over(&r);
	err = err ?: read_registered(&r);
	err = err ?: read_samples(&r);
	err = err ?: show(&r);
	table_free(&r.t);
	report_tiers_free(&r.tiers);
	rundir_free(&r.rd);
	free(r.data);
	return r.status;
}
