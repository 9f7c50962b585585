/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf report: one table of where the time went in JIT code, by
 * function name: the sample share perf measured (self, and children when
 * call graphs were recorded) beside the exact instrumented figures of the
 * statistics files (calls, mean, min, max, counters per call).
 *
 * Samples come from perf's own aggregation: `perf report --sort sym` with
 * tab-separated overhead_children, overhead, sample and symbol columns;
 * percentages are recomputed from the sample counts so they are exact.
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
#include "perf.h"
#include "read/jitdump_read.h"
#include "rundir.h"
#include "read/stats_read.h"
#include "read/symbolize.h"

static const char usage_text[] =
	"usage: jitperf report [DIR] [--perf]\n"
	"\n"
	"Where the time went in the JIT code of a jitperf record directory (default\n"
	"jitperf.data): per function, the share of perf samples (self and children)\n"
	"and the instrumented figures (calls, mean, min and max ns, counters per call).\n"
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
	uint64_t  samples;
	double    children;             /* percent from perf, < 0 if N/A */
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
	int           have_perf, have_children;
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

/* Cut the blanks (and newline) perf pads a column with. */
static char *trim(char *s)
{
	char *end;

	while (*s == ' ')
		s++;
	for (end = s + strlen(s); end > s && (end[-1] == ' ' || end[-1] == '\n'); )
		*--end = '\0';
	return s;
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
	if (!strncmp(dso, "jitted-", 7) || !strncmp(dso, "perf-", 5) || !strncmp(dso, "[JIT]", 5))
		return 0;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		if (!strcmp(sym, probes[i]))
			return 1;
	return !strncmp(sym, "jp_", 3);
}

/* One line of perf report -t '\t': children, self, samples, dso, "[x] symbol". */
static int perf_line(struct table *t, char *line)
{
	char *f[5], *p = line, *sym, *dso, *end;
	struct fnrow *row;
	uint64_t samples;
	size_t n = 0;

	for (n = 0; n < 5 && p; n++) {
		f[n] = p;
		p = strchr(p, '\t');
		if (p)
			*p++ = '\0';
	}
	if (n != 5)
		return 0;                   /* not a table row: ignore */
	samples = strtoull(f[2], &end, 10);
	dso = trim(f[3]);
	sym = f[4];
	if (end == f[2])
		return 0;
	if (sym[0] == '[' && sym[1] && sym[2] == ']' && sym[3] == ' ')
		sym += 4;
	sym = trim(sym);
	t->total_samples += samples;
	if (is_probe(dso, sym)) {
		t->probe_samples += samples;
		return 0;
	}
	row = lookup(t, sym);
	if (!row)
		return -ENOMEM;
	row->samples += samples;
	while (*f[0] == ' ')
		f[0]++;
	if (strncmp(f[0], "N/A", 3)) {
		/*
		 * perf sorts by symbol object, not name: one function can come
		 * in two rows (its jitted-*.so and the perf map, when a sample
		 * lands before perf sees the injected mmap).  Add them up like
		 * the samples, or the smaller row would hide the other.
		 */
		row->children = (row->children > 0 ? row->children : 0) + strtod(f[0], NULL);
		t->have_children = 1;
	}
	return 0;
}

/*
 * Run perf report and feed its rows to the table: 0, -ENOENT when there is
 * no perf to run, -EIO when perf report failed (a damaged perf.data), or
 * another -errno.
 */
static int perf_samples(struct table *t, const char *data)
{
	static const char *const args[] = {
		"report", "-i", NULL, "--stdio", "--children", "--sort", "dso,sym",
		"-F", "overhead_children,overhead,sample,dso,sym", "-t", "\t", "-q",
		"-g", "none", "--percent-limit", "0", NULL };
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
	while (fp && !err && getline(&line, &cap, fp) > 0)
		err = perf_line(t, line);
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

static void print_table(struct table *t, const char *dir)
{
	uint64_t jit_samples = 0;
	int stats = 0, width = t->probe_samples ? 16 : 14;   /* "(jitperf probes)" */
	size_t shown = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct fnrow *r = &t->rows[i];
		int len = (int)strlen(r->label ? r->label : r->name);

		if (!r->jit)
			continue;
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
		       t->total_samples ? 100.0 * (double)jit_samples / (double)t->total_samples : 0.0);
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

		if (!r->jit)
			continue;
		shown++;
		printf("%-*s", width, r->label ? r->label : r->name);
		if (t->have_perf) {
			printf(" %7.2f", t->total_samples ?
			       100.0 * (double)r->samples / (double)t->total_samples : 0.0);
			if (r->children >= 0)
				printf(" %9.2f", r->children);
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
	if (t->have_perf && t->probe_samples)
		printf("%-*s %7.2f %9s %8" PRIu64 "\n", width, "(jitperf probes)",
		       100.0 * (double)t->probe_samples / (double)t->total_samples, "-",
		       t->probe_samples);
	if (t->have_perf) {
		uint64_t other = t->total_samples - jit_samples - t->probe_samples;

		printf("%-*s %7.2f %9s %8" PRIu64 "\n", width, "(not JIT code)",
		       t->total_samples ? 100.0 * (double)other / (double)t->total_samples : 0.0,
		       "-", other);
	}
	if (!shown)
		printf("(no JIT functions: the program registered none)\n");
	if (t->have_perf && !t->have_children)
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
	while ((c = getopt_long(argc, argv, "ph", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			handover = 1;
			break;
		default:
			return cmd_usage(usage_text, c == 'h');
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
	err = add_jitdump_names(&t, &rd);
	if (!err)
		err = add_stats(&t, &rd);
	if (!err && (rd.has_perf_data || rd.has_jit_data)) {
		err = perf_samples(&t, data);
		if (err == -ENOENT)
			cmd_err("perf not found, showing instrumented figures only "
				"(" PERF_INSTALL_HINT ")");
		else if (err) {     /* a damaged perf.data: still show the rest, exit 1 */
			cmd_err("perf report -i %s failed; showing "
				"instrumented figures only", data);
			t.bad_input = err != -ENOMEM;
		}
		t.have_perf = !err;
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
