/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report: one table of where the time went in JIT code, by
 * function name: the sample share perf measured (self, and children when
 * call graphs were recorded) beside the exact instrumented figures of the
 * statistics files (calls, mean, min, max, counters per call).
 *
 * Samples come from perf script, one frame a line, and are added up here
 * by function name; which frames are JIT code of any emitter and what
 * they are called is tools/jitsym.c's business (perf's names, else the
 * record directory's copies of perf maps and jitdumps).
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

#include "cmds.h"
#include "jitsym.h"
#include "perf.h"
#include "read/jitdump_read.h"
#include "read/perfmap_read.h"
#include "rundir.h"
#include "read/stats_read.h"
#include "read/symbolize.h"

static const char usage_text[] =
	"usage: jitperf report [DIR] [--perf]\n"
	"\n"
	"Where the time went in the JIT code of a jitperf record directory (default\n"
	"jitperf.data): per function, the share of perf samples (self and children)\n"
	"and the instrumented figures (calls, mean, min and max ns, counters per call).\n"
	"JIT code of any runtime counts (jitted-*.so of perf inject, perf maps), named\n"
	"as perf names it or from the directory's copies of perf maps and jitdumps.\n"
	"Functions of -finstrument-functions programs (libjitperf-cyg) are named\n"
	"'function (file.c:line)'; samples in libjitperf's own probes are the row\n"
	"'(jitperf probes)'.\n"
	"\n"
	"  -p, --perf      run perf report on DIR/perf.jit.data instead\n"
	"  -h, --help      show this help\n";

struct fnrow {
	char     *name;                 /* key: perf's symbol name */
	char     *label;                /* shown instead of name, or NULL */
	int       jit;                  /* named by a CODE_LOAD or a stats row */
	uint64_t  samples;              /* where the sample landed */
	uint64_t  children;             /* samples with it anywhere on the stack */
	uint64_t  seen;                 /* the last sample counted in children */
	int       has_stats;
	uint64_t  calls, total_ns, min_ns, max_ns;
	uint64_t *ctr;                  /* summed per counter, STATS_NO_VALUE if unsupported */
};

struct table {
	struct fnrow *rows;
	size_t        n, cap;
	size_t       *slot;             /* hash: index + 1, 0 = empty */
	size_t        nslot;
	size_t        ncounters;
	char        **counters;         /* names, from the first stats file */
	uint64_t      total_samples;
	uint64_t      probe_samples;    /* in libjitperf's own probes */
	uint64_t      unnamed_samples;  /* in JIT code nothing names */
	int           have_perf;
	struct jitsym *js;              /* JIT code and its names */
	char         *event;            /* the event counted: the first one */
	int           counting;         /* the current sample is of that event */
	int           other_events;     /* samples of other events were left out */
	int           callchains;       /* the samples have call graphs */
	size_t        depth;            /* of the next frame of the current sample */
	int           bad_input;        /* a file could not be read: exit 1 after the table */
	size_t        nstats;           /* stats files read: processes with instrumented calls */
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* The row of name, NULL if there is none. */
static struct fnrow *find(struct table *t, const char *name)
{
	if (!t->nslot)
		return NULL;
	for (size_t i = hash(name) & (t->nslot - 1); t->slot[i]; i = (i + 1) & (t->nslot - 1))
		if (!strcmp(t->rows[t->slot[i] - 1].name, name))
			return &t->rows[t->slot[i] - 1];
	return NULL;
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
	free(t->event);
	jitsym_free(t->js);
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

	if (strncmp(name, JP_NATIVE_PREFIX, strlen(JP_NATIVE_PREFIX)) ||
	    jp_symbolize_native(name, buf, sizeof(buf)) || !strcmp(buf, name))
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

/*
 * Every name a jitdump loaded or a perf map lists is JIT code, sampled or
 * not: the table counts those without samples.
 */
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

static int add_perfmap_names(struct table *t, const struct rundir *rd)
{
	char err[512];

	for (size_t i = 0; i < rd->nmaps; i++) {
		struct pm_map *m;
		int ret = pm_read(rd->maps[i], &m, err, sizeof(err));

		if (ret == -ENOMEM)
			return ret;
		if (ret) {
			cmd_err("%s", err);
			t->bad_input = 1;
			continue;
		}
		for (size_t k = 0; k < m->nsyms; k++) {
			struct fnrow *row = lookup(t, m->syms[k].name);

			if (!row) {
				pm_free(m);
				return -ENOMEM;
			}
			row->jit = 1;
		}
		pm_free(m);
	}
	return 0;
}

static int add_stats(struct table *t, const struct rundir *rd)
{
	char err[512];

	for (size_t i = 0; i < rd->nstats; i++) {
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
		for (size_t r = 0; r < s->nrows; r++) {
			const struct stats_row *sr = &s->rows[r];
			struct fnrow *row = registered(t, sr->name);

			if (!row)
				goto nomem;
			row->jit = 1;
			if (!row->ctr && t->ncounters &&
			    !(row->ctr = calloc(t->ncounters, sizeof(uint64_t))))
				goto nomem;
			row->min_ns = row->has_stats && row->min_ns < sr->min_ns ? row->min_ns : sr->min_ns;
			row->max_ns = row->max_ns > sr->max_ns ? row->max_ns : sr->max_ns;
			row->has_stats = 1;
			row->calls += sr->calls;
			row->total_ns += sr->total_ns;
			/* counters are matched by name: processes may list them differently */
			for (size_t c = 0; c < s->ncounters; c++)
				for (size_t k = 0; k < t->ncounters; k++)
					if (!strcmp(s->counters[c], t->counters[k]))
						row->ctr[k] = sr->counters[c] == STATS_NO_VALUE ||
							row->ctr[k] == STATS_NO_VALUE ? STATS_NO_VALUE :
							row->ctr[k] + sr->counters[c];
		}
		stats_free(s);
		t->nstats++;
		continue;
nomem:
		stats_free(s);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Code of libjitperf itself (libjitperf.so*, libjitperf-cyg.so*) or its
 * probe functions where they were linked in statically: the cost of the
 * instrumentation, shown apart from the program's own non-JIT code.
 * Asked of frames that are not JIT code (a JIT may name its code jp_*).
 */
static int is_probe(const char *dso, const char *sym)
{
	static const char *const probes[] = { "jitperf__enter_slow", "jitperf__exit_slow",
					      "jitperf_enter", "jitperf_exit" };
	const char *b = strrchr(dso, '/');

	b = b ? b + 1 : dso;
	if (!strncmp(b, "libjitperf", 10) && strstr(b, ".so"))
		return 1;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		if (!strcmp(sym, probes[i]))
			return 1;
	return !strncmp(sym, "jp_", 3);
}

/*
 * One frame of the current sample (depth 0 is where it landed): JIT code
 * by its object, named as perf names it or from the directory's copies;
 * other code only where a statistics file lists its name (libjitperf-cyg).
 * A function counts once per sample in children, however deep it recurses.
 */
static int add_frame(struct table *t, size_t depth, const char *dso, const char *sym,
		     uint64_t ip)
{
	struct fnrow *row;
	const char *name;
	int jit = jitsym_frame(t->js, dso, sym, ip, &name);

	if (jit < 0)
		return jit;
	if (jit && !name) {
		t->unnamed_samples += depth == 0;
		return 0;
	}
	if (jit) {
		if (!(row = lookup(t, name)))
			return -ENOMEM;
		row->jit = 1;
	} else if (depth == 0 && is_probe(dso, sym)) {
		t->probe_samples++;
		return 0;
	} else if (!(row = find(t, sym)) || !row->has_stats) {
		return 0;
	}
	if (depth == 0)
		row->samples++;
	if (t->callchains && row->seen != t->total_samples) {
		row->seen = t->total_samples;
		row->children++;
	}
	return 0;
}

/*
 * A frame as perf script -F ip,sym,dso prints it: "ADDR SYMBOL (DSO)",
 * where the symbol may hold blanks and parentheses of its own.
 */
static int frame_line(struct table *t, char *l)
{
	char *end, *open, *sym;
	uint64_t ip;
	size_t n;

	while (*l == ' ' || *l == '\t')
		l++;
	ip = strtoull(l, &end, 16);
	if (end == l)
		return 0;
	sym = end + (*end == ' ');
	n = strlen(sym);
	while (n && (sym[n - 1] == '\n' || sym[n - 1] == ' '))
		sym[--n] = '\0';
	open = NULL;
	if (n && sym[n - 1] == ')')
		for (char *p = sym + n - 1; p > sym; p--)
			if (*p == '(' && p[-1] == ' ') {
				open = p;
				break;
			}
	if (!open)
		return add_frame(t, t->depth++, "", sym, ip);
	open[-1] = '\0';
	sym[n - 1] = '\0';
	return add_frame(t, t->depth++, open + 1, sym, ip);
}

/*
 * A sample's first line: "PID EVENT: " then, without a call graph, its one
 * frame.  Only the first event's samples count, as in perf report's first
 * table.
 */
static int header_line(struct table *t, char *l)
{
	char *ev, *colon;

	while (*l == ' ')
		l++;
	while (*l >= '0' && *l <= '9')
		l++;
	while (*l == ' ')
		l++;
	ev = l;
	for (colon = strchr(ev, ':'); colon; colon = strchr(colon + 1, ':'))
		if (colon[1] == ' ' || colon[1] == '\n' || !colon[1])
			break;
	if (!colon)
		return 0;                  /* not a sample line: ignore */
	*colon = '\0';
	if (!t->event && !(t->event = strdup(ev)))
		return -ENOMEM;
	t->counting = !strcmp(ev, t->event);
	if (!t->counting) {
		t->other_events = 1;
		return 0;
	}
	t->total_samples++;
	t->depth = 0;
	for (l = colon + 1; *l == ' '; l++)
		;
	if (*l && *l != '\n')
		return frame_line(t, l);
	t->callchains = 1;             /* the frames follow, one a line */
	return 0;
}

/*
 * Samples through perf script, aggregated here: perf report would group
 * frames by object and address, where a JIT function is one name across
 * the images and perf map lines that held its code.  0, -ENOENT when
 * there is no perf to run, -EIO when perf script failed (a damaged
 * perf.data), or another -errno.
 */
static int perf_samples(struct table *t, const char *data)
{
	static const char *const args[] = {
		"script", "-i", NULL, "-F", "pid,event,ip,sym,dso", NULL };
	const char *argv[sizeof(args) / sizeof(args[0])];
	char *perf = perf_find(), *line = NULL;
	size_t cap = 0;
	int fd, st, err;
	pid_t pid;
	FILE *fp;

	if (!perf)
		return -ENOENT;
	memcpy(argv, args, sizeof(args));
	argv[2] = data;
	err = perf_spawn(perf, argv, &fd, -1, &pid);
	free(perf);
	if (err)
		return err;
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		err = -errno;
	}
	while (fp && !err && getline(&line, &cap, fp) > 0) {
		if (line[0] == '\t')
			err = t->counting ? frame_line(t, line) : 0;
		else if (line[0] != '\n')
			err = header_line(t, line);
	}
	free(line);
	if (fp)
		fclose(fp);
	st = perf_wait(pid);
	return err ? err : st == 127 ? -ENOENT : st ? -EIO : 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct fnrow *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* What perf gave before it failed is not shown as if it were all. */
static void forget_samples(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->rows[i].samples = t->rows[i].children = 0;
	t->total_samples = t->probe_samples = t->unnamed_samples = 0;
}

/* A row worth a line: perf saw it, or it was instrumented. */
static int active(const struct fnrow *r)
{
	return r->jit && (r->samples || r->children || r->has_stats);
}

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

static void print_table(struct table *t, const char *dir)
{
	uint64_t jit_samples = t->unnamed_samples;
	int stats = 0, width = t->unnamed_samples ? 18 : t->probe_samples ? 16 : 14;
	size_t shown = 0, quiet = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct fnrow *r = &t->rows[i];
		int len = (int)strlen(r->label ? r->label : r->name);

		if (!active(r)) {
			quiet += r->jit;
			continue;
		}
		jit_samples += r->samples;
		stats |= r->has_stats;
		width = len > width ? (len > 48 ? 48 : len) : width;
	}
	qsort(t->rows, t->n, sizeof(t->rows[0]), cmp_rows);
	free(t->slot);      /* rows moved: the hash is stale */
	t->slot = NULL;
	t->nslot = 0;

	printf("# %s: ", dir);
	if (t->have_perf)
		printf("%" PRIu64 " samples, %.2f%% in JIT code; ", t->total_samples,
		       pct(jit_samples, t->total_samples));
	printf("%zu process%s with instrumented calls\n", t->nstats, t->nstats == 1 ? "" : "es");
	printf("%-*s", width, "function");
	if (t->have_perf)
		printf(" %7s %9s %8s", "self%", "children%", "samples");
	if (stats) {
		printf(" %10s %12s %12s %12s", "calls", "mean_ns", "min_ns", "max_ns");
		for (size_t k = 0; k < t->ncounters; k++)
			printf(" %14s/call", t->counters[k]);
	}
	putchar('\n');
	for (size_t i = 0; i < t->n; i++) {
		const struct fnrow *r = &t->rows[i];

		if (!active(r))
			continue;
		shown++;
		printf("%-*s", width, r->label ? r->label : r->name);
		if (t->have_perf) {
			printf(" %7.2f", pct(r->samples, t->total_samples));
			if (t->callchains)
				printf(" %9.2f", pct(r->children, t->total_samples));
			else
				printf(" %9s", "-");
			printf(" %8" PRIu64, r->samples);
		}
		if (stats && r->has_stats) {
			printf(" %10" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64, r->calls,
			       r->calls ? r->total_ns / r->calls : 0, r->min_ns, r->max_ns);
			for (size_t k = 0; k < t->ncounters; k++) {
				if (r->ctr[k] == STATS_NO_VALUE || !r->calls)
					printf(" %19s", "-");
				else
					printf(" %19" PRIu64, r->ctr[k] / r->calls);
			}
		} else if (stats) {
			printf(" %10s %12s %12s %12s", "-", "-", "-", "-");
			for (size_t k = 0; k < t->ncounters; k++)
				printf(" %19s", "-");
		}
		putchar('\n');
	}
	if (t->have_perf && t->unnamed_samples)
		printf("%-*s %7.2f %9s %8" PRIu64 "\n", width, "(unnamed JIT code)",
		       pct(t->unnamed_samples, t->total_samples), "-", t->unnamed_samples);
	if (t->have_perf && t->probe_samples)
		printf("%-*s %7.2f %9s %8" PRIu64 "\n", width, "(jitperf probes)",
		       pct(t->probe_samples, t->total_samples), "-", t->probe_samples);
	if (t->have_perf) {
		uint64_t other = t->total_samples - jit_samples - t->probe_samples;

		printf("%-*s %7.2f %9s %8" PRIu64 "\n", width, "(not JIT code)",
		       pct(other, t->total_samples), "-", other);
	}
	if (!shown && !quiet && !t->unnamed_samples)
		printf("(no JIT code: no process wrote a jitdump or perf map, and perf saw none)\n");
	else if (quiet)
		printf("# %zu more JIT function%s without %s\n", quiet, quiet == 1 ? "" : "s",
		       t->have_perf && t->nstats ? "samples or calls" :
		       t->have_perf ? "samples" : "calls");
	if (t->other_events)
		printf("# samples of %s only; jitperf report --perf shows the other events\n",
		       t->event);
	if (t->have_perf && !t->callchains)
		printf("# children%%: record with -g or --call-graph to see time spent in callees\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "perf", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = "jitperf.data", *msg;
	char *data = NULL;
	struct table t = { 0 };
	struct rundir rd;
	struct stat st;
	int c, handover = 0, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ph", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			handover = 1;
			break;
		case 'h':
			return cmd_usage(usage_text, 1);
		default:
			return cmd_bad_option(c, argv);
		}
	}
	if (optind < argc - 1) {
		cmd_err("one directory at a time");
		fputs(usage_text, stderr);
		return 2;
	}
	if (optind == argc - 1)
		dir = argv[optind];
	msg = stat(dir, &st) ? strerror(errno) : !S_ISDIR(st.st_mode) ? "not a directory" : NULL;
	if (msg) {
		cmd_err("%s: %s (record one with: jitperf record -o %s "
			"-- COMMAND)", dir, msg, dir);
		return 1;
	}
	err = rundir_scan(dir, &rd);
	if (err) {
		cmd_err("%s: %s", dir, strerror(-err));
		return 1;
	}
	if (!rd.has_perf_data && !rd.has_jit_data && !rd.nstats) {
		cmd_err("%s: nothing recorded here (no perf.data, "
			"perf.jit.data or jitperf-*.stats)", dir);
		rundir_free(&rd);
		return 1;
	}
	if (asprintf(&data, "%s/%s", dir, rd.has_jit_data ? "perf.jit.data" : "perf.data") < 0) {
		rundir_free(&rd);
		return 1;
	}
	if (handover) {
		int none = !rd.has_perf_data && !rd.has_jit_data;

		rundir_free(&rd);
		if (none) {
			cmd_err("%s: no perf data (recorded with --no-perf)",
				dir);
			free(data);
			return 1;
		}
		char *perf = perf_find();

		if (perf)
			execl(perf, perf, "report", "-i", data, (char *)NULL);
		cmd_err("perf: %s%s", perf ? strerror(errno) : "not found",
			perf ? "" : " (" PERF_INSTALL_HINT ")");
		free(perf);
		free(data);
		return 127;
	}
	err = jitsym_new(&t.js, dir);
	err = err ?: add_jitdump_names(&t, &rd);
	err = err ?: add_perfmap_names(&t, &rd);
	err = err ?: add_stats(&t, &rd);
	if (!err && (rd.has_perf_data || rd.has_jit_data)) {
		err = perf_samples(&t, data);
		if (err == -ENOENT)
			cmd_err("perf not found, showing instrumented figures only "
				"(" PERF_INSTALL_HINT ")");
		else if (err) {     /* a damaged perf.data: still show the rest, exit 1 */
			cmd_err("perf script -i %s failed; showing "
				"instrumented figures only", data);
			t.bad_input = err != -ENOMEM;
		}
		t.have_perf = !err;
		if (err)
			forget_samples(&t);
		err = err == -ENOMEM ? err : 0;
	}
	if (err)
		cmd_err("%s", strerror(-err));
	else if (t.nstats || t.have_perf || !t.bad_input)   /* no table of nothing readable */
		print_table(&t, dir);
	table_free(&t);
	rundir_free(&rd);
	free(data);
	return err || t.bad_input ? 1 : 0;
}
