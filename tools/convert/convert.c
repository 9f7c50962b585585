/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf convert: perf samples, instrumented calls and JIT code loads into
 * Chrome trace JSON, folded stacks and an SVG flame graph.
 *
 * The input is recognised by its first bytes, never by its name: a record
 * directory, perf.data ("PERFILE2", read natively), a jitperf
 * trace, a jitdump, or else perf script text.  It is read once; every event
 * goes to each requested writer (struct cv_ops).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tools/cmds.h"
#include "convert.h"
#include "cvinput.h"

static const char usage_text[] =
	"usage: jitperf convert [DIR | perf.data | perf-script.txt | FILE.trace | FILE.dump | -]\n"
	"                       [--chrome FILE] [--folded FILE] [--svg FILE] [--pprof FILE]\n"
	"                       [--pid] [--tid] [--kernel] [--jit] [--all] [--addrs]\n"
	"                       [--inline] [--srcline]\n"
	"                       [--source samples|calls] [--title TEXT] [--chrome-max MIB]\n"
	"                       [--merge-tiers]\n"
	"\n"
	"  --chrome FILE    Chrome trace JSON (Perfetto, chrome://tracing, speedscope)\n"
	"  --folded FILE    folded stacks, as stackcollapse-perf.pl (FILE - = stdout)\n"
	"  --svg FILE       SVG flame graph\n"
	"  --pprof FILE     gzip'ed profile.proto (go tool pprof, Pyroscope, Parca)\n"
	"  --pid, --tid     add the PID (and TID) to the process name\n"
	"  --kernel, --jit  annotate kernel (_[k]) and JIT (_[j]) frames\n"
	"  --all            both --kernel and --jit\n"
	"  --addrs          keep the address of frames without a symbol\n"
	"  --inline         perf.data: functions inlined at a frame's address become\n"
	"                   frames of their own, outer;inner (DWARF)\n"
	"  --srcline        frames get :FILE:LINE (perf.data: from DWARF, jitted code\n"
	"                   from its jitdump's lines; text: perf script -F+srcline)\n"
	"  --source S       stacks of perf samples or of instrumented calls (self ns)\n"
	"  --title TEXT     title of the SVG (default: Flame Graph)\n"
	"  --chrome-max MIB bound of the Chrome trace, so viewers open it (default 256;\n"
	"                   0 = no bound): the shortest calls are left out first\n"
	"  --merge-tiers    folded, SVG: tier code func[tag] counts as func, one frame\n"
	"                   per function whatever its tier\n"
	"  -h, --help       show this help\n"
	"The input is recognised by its content; default: jitperf.data, or - for stdin.\n"
	"With no output option, folded stacks go to standard output.\n";

const struct cv_ops *const cv_writers[] = {
	&cv_chrome_ops, &cv_folded_ops, &cv_svg_ops, &cv_pprof_ops, NULL,
};
#define NWRITERS (sizeof(cv_writers) / sizeof(cv_writers[0]) - 1)

struct output {
	const struct cv_ops *ops;
	const char          *path;
	struct outfile       of;
	void                *w;
};

/* One conversion: what the steps of cmd_convert share, freed in one place. */
struct conv {
	struct output   outs[NWRITERS];   /* each writer at most once */
	size_t          nouts;
	struct cv_opts  o;
	const char     *input, *source;
	struct cv_input in;
	int             in_open;
	struct cv_tiers tiers;            /* compiles and tags of the input's tiers files */
	struct cv_sink  sink;
	uint64_t        nsamples, ncalls, ncodes;   /* what the input delivered */
	int             status;           /* the exit status, once known */
	char            err[1024];
};

static int to_all_samples(const struct ps_sample *s, void *arg)
{
	struct conv *c = arg;
	int ret;

	c->nsamples++;
	for (size_t i = 0; i < c->nouts; i++)
		if (c->outs[i].ops->sample && (ret = c->outs[i].ops->sample(c->outs[i].w, s)))
			return ret;
	return 0;
}

static int to_all_calls(const struct cv_call *call, void *arg)
{
	struct conv *c = arg;
	int ret;

	c->ncalls += !call->correction;
	for (size_t i = 0; i < c->nouts; i++)
		if (c->outs[i].ops->call && (ret = c->outs[i].ops->call(c->outs[i].w, call)))
			return ret;
	return 0;
}

static int to_all_codes(const struct cv_code *code, void *arg)
{
	struct conv *c = arg;
	int ret;

	c->ncodes++;
	for (size_t i = 0; i < c->nouts; i++)
		if (c->outs[i].ops->code && (ret = c->outs[i].ops->code(c->outs[i].w, code)))
			return ret;
	return 0;
}

static int to_all_threads(const struct cv_thread *t, void *arg)
{
	struct conv *c = arg;
	int ret;

	for (size_t i = 0; i < c->nouts; i++)
		if (c->outs[i].ops->thread && (ret = c->outs[i].ops->thread(c->outs[i].w, t)))
			return ret;
	return 0;
}

/* Chrome traces larger than this make chrome://tracing and Perfetto's JSON
 * import give up or crawl; 0 lifts the bound */
#define CHROME_MAX_MIB 256

/* A decimal number of MiB into bytes; 0 or -EINVAL. */
static int parse_mib(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long n;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (*end || errno || n > (UINT64_MAX >> 20))
		return -EINVAL;
	*bytes = (uint64_t)n << 20;
	return 0;
}

/* Bad usage: say it, exit status 2. */
static int usage_error(struct conv *c)
{
	c->status = 2;
	return -EINVAL;
}

static int add_output(struct conv *c, const struct cv_ops *ops, const char *path)
{
	for (size_t i = 0; i < c->nouts; i++) {
		if (c->outs[i].ops == ops) {
			cmd_err("--%s given twice", ops->what);
			return usage_error(c);
		}
		if (!strcmp(c->outs[i].path, path)) {
			cmd_err("%s: used for two outputs", path);
			return usage_error(c);
		}
	}
	c->outs[c->nouts].ops = ops;
	c->outs[c->nouts].path = path;
	c->nouts++;
	return 0;
}

/*
 * The options: one --WHAT FILE per writer of cv_writers (long option values
 * from OPT_WRITER up), then the common ones.
 */
static int parse_args(struct conv *c, int argc, char **argv)
{
	enum { OPT_WRITER = 256 };
	static const struct option common[] = {
		{ "pid",    no_argument,       NULL, 'p' },
		{ "tid",    no_argument,       NULL, 't' },
		{ "kernel", no_argument,       NULL, 'k' },
		{ "jit",    no_argument,       NULL, 'j' },
		{ "all",    no_argument,       NULL, 'a' },
		{ "addrs",  no_argument,       NULL, 'A' },
		{ "inline", no_argument,       NULL, 'I' },
		{ "srcline", no_argument,      NULL, 'L' },
		{ "source", required_argument, NULL, 'S' },
		{ "title",  required_argument, NULL, 'T' },
		{ "chrome-max", required_argument, NULL, 'M' },
		{ "merge-tiers", no_argument,  NULL, 'G' },
		{ "help",   no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct option longopts[NWRITERS + sizeof(common) / sizeof(common[0])];
	int opt, err = 0;

	for (size_t i = 0; i < NWRITERS; i++)
		longopts[i] = (struct option){ cv_writers[i]->what, required_argument, NULL,
					       OPT_WRITER + (int)i };
	memcpy(longopts + NWRITERS, common, sizeof(common));
	c->input = "jitperf.data";
	c->o.title = "Flame Graph";
	c->o.chrome_max_bytes = (uint64_t)CHROME_MAX_MIB << 20;
	optind = 1;
	opterr = 0;             /* our own messages, named "jitperf convert" */
	while (!err && (opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p': c->o.ps_flags |= PS_PID; break;
		case 't': c->o.ps_flags |= PS_TID; break;
		case 'k': c->o.ps_flags |= PS_KERNEL; break;
		case 'j': c->o.ps_flags |= PS_JIT; break;
		case 'a': c->o.ps_flags |= PS_KERNEL | PS_JIT; break;
		case 'A': c->o.ps_flags |= PS_ADDRS; break;
		case 'I': c->o.ps_flags |= PS_INLINE; break;
		case 'L': c->o.ps_flags |= PS_SRCLINE; break;
		case 'S': c->source = optarg; break;
		case 'T': c->o.title = optarg; break;
		case 'G': c->o.merge_tiers = 1; break;
		case 'M':
			if (parse_mib(optarg, &c->o.chrome_max_bytes)) {
				cmd_err("--chrome-max takes a size in MiB (0 = no bound), not '%s'",
					optarg);
				return usage_error(c);
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			c->status = 0;
			return -ECANCELED;
		case '?':
		case ':':
			cmd_bad_option(opt, argv);
			return usage_error(c);
		default:
			err = add_output(c, cv_writers[opt - OPT_WRITER], optarg);
		}
	}
	if (err)
		return err;
	if (optind < argc)
		c->input = argv[optind++];
	if (optind < argc) {
		cmd_err("one input only ('%s' is extra)", argv[optind]);
		return usage_error(c);
	}
	if (c->source && strcmp(c->source, "samples") && strcmp(c->source, "calls")) {
		cmd_err("--source is 'samples' or 'calls', not '%s'", c->source);
		return usage_error(c);
	}
	return 0;
}

/* One output to stdout at most, none renamed over the input. */
static int check_outputs(struct conv *c)
{
	struct stat in, out;
	size_t stdouts = 0;

	for (size_t i = 0; c->nouts == 0 && cv_writers[i]; i++)
		if (cv_writers[i]->flags & CV_DEFAULT)
			add_output(c, cv_writers[i], "-");
	for (size_t i = 0; i < c->nouts; i++)
		if (!strcmp(c->outs[i].path, "-") && ++stdouts > 1) {
			cmd_err("only one output can be standard output");
			return usage_error(c);
		}
	/* an output renamed over the input would destroy it; cv_input_open
	 * says what is wrong with an input that is not a regular file */
	if (!strcmp(c->input, "-") || stat(c->input, &in) || !S_ISREG(in.st_mode))
		return 0;
	for (size_t i = 0; i < c->nouts; i++)
		if (!stat(c->outs[i].path, &out) && out.st_dev == in.st_dev &&
		    out.st_ino == in.st_ino) {
			cmd_err("%s: output would replace the input", c->outs[i].path);
			return usage_error(c);
		}
	return 0;
}

static int open_input(struct conv *c)
{
	int ret = cv_input_open(&c->in, c->input, c->err, sizeof(c->err));

	if (ret) {
		cmd_err("%s", c->err);
		return ret;
	}
	c->in_open = 1;
	return 0;
}

/*
 * The tiers files of a record directory, or beside a perf.data: compile
 * spans and flows in the Chrome trace, the tags of tier code for
 * --merge-tiers and pprof's tier labels.
 */
static int read_tiers(struct conv *c)
{
	int ret = 0;

	c->o.tiers = &c->tiers;
	c->err[0] = 0;
	if (c->in.kind == CV_DIR || (c->in.kind == CV_PERFDATA && strcmp(c->input, "-")))
		ret = cv_tiers_read(&c->tiers, c->input, c->in.kind == CV_DIR, c->err,
				    sizeof(c->err));
	if (ret) {
		cmd_err("%s", c->err[0] ? c->err : strerror(-ret));
		return ret;
	}
	/* an output that silently kept the tags would pass for a merged one */
	if (c->o.merge_tiers && !c->tiers.nfiles) {
		cmd_err("%s: --merge-tiers needs the tiers files (jit-PID.tiers) of a record "
			"directory; there are none", c->input);
		return -ENOENT;
	}
	return 0;
}

/*
 * A jitdump alone has code loads and no stacks: the outputs that show code
 * loads (Chrome's timeline) are made of it, the others are refused.
 */
static int jitdump_outputs(struct conv *c)
{
	for (size_t i = 0; i < c->nouts; i++)
		if (!c->outs[i].ops->code) {
			cmd_err("%s: a jitdump has code loads and no stacks: --%s cannot be made "
				"of it (--chrome shows the loads on a timeline)", c->input,
				c->outs[i].ops->what);
			return -ENODATA;
		}
	return 0;
}

/* Stacks of samples or of calls: what was asked, else what the input has. */
static int choose_source(struct conv *c)
{
	if (c->in.kind == CV_JITDUMP)
		return jitdump_outputs(c);
	c->o.has_calls = c->in.has_calls;
	if (!c->source)
		c->o.source = c->in.has_samples ? CV_SAMPLES : CV_CALLS;
	else
		c->o.source = !strcmp(c->source, "samples") ? CV_SAMPLES : CV_CALLS;
	/* text names objects by path and prints no sample's address in them
	 * that DWARF could place: the chains come from perf.data only */
	if ((c->o.ps_flags & PS_INLINE) && c->in.kind == CV_TEXT) {
		cmd_err("%s: --inline needs a perf.data (or record directory), not perf "
			"script text", c->input);
		return usage_error(c);
	}
	if (c->o.source == CV_SAMPLES && !c->in.has_samples) {
		cmd_err("%s: no perf samples (try --source calls)", c->input);
		return -ENODATA;
	}
	if (c->o.source == CV_CALLS && !c->in.has_calls) {
		cmd_err("%s: no instrumented calls (record with --instrument)", c->input);
		return -ENODATA;
	}
	return 0;
}

/* With a bounded Chrome trace of an input with calls: which calls fit. */
static int size_chrome(struct conv *c)
{
	int ret, chrome = 0;

	for (size_t i = 0; i < c->nouts; i++)
		chrome |= !!(c->outs[i].ops->flags & CV_CALL_BOUND);
	/* perf script text has no calls; the other inputs are files, read twice */
	if (!chrome || !c->o.chrome_max_bytes || !c->in.has_calls || c->in.kind == CV_TEXT)
		return 0;
	ret = cv_chrome_budget(&c->in, c->o.chrome_max_bytes, &c->o.chrome_min_call_ns,
			       c->err, sizeof(c->err));
	if (ret)
		cmd_err("%s", c->err[0] ? c->err : strerror(-ret));
	return ret;
}

static int open_outputs(struct conv *c)
{
	for (size_t i = 0; i < c->nouts; i++) {
		struct output *out = &c->outs[i];
		int ret = outfile_open(&out->of, out->path);

		if (ret) {
			cmd_err("%s: %s", out->path, out->of.why ? out->of.why : strerror(-ret));
			return ret;
		}
		out->w = out->ops->begin(&out->of, &c->o);
		if (!out->w) {
			cmd_err("out of memory");
			return -ENOMEM;
		}
		if ((out->ops->flags & CV_CALL_STACKS) &&
		    (c->o.source == CV_CALLS || (out->ops->flags & CV_ALWAYS_CALL_STACKS)))
			c->sink.call_stacks = 1;
		if (out->ops->flags & CV_RAW_FRAMES)
			c->o.ps_flags |= PS_RAW;
	}
	return 0;
}

/* one thread's share of the samples when text is read in parallel */
struct lane {
	struct conv *c;
	void        *w[NWRITERS];
};

static int lane_sample(const struct ps_sample *s, void *arg)
{
	struct lane *l = arg;
	int ret;

	for (size_t i = 0; i < l->c->nouts; i++)
		if ((ret = l->c->outs[i].ops->sample(l->w[i], s)))
			return ret;
	return 0;
}

/*
 * perf script text in pieces on every core, when every output only adds
 * samples up (folded stacks, SVG): each piece into states of its own,
 * merged into the outputs once all went well.  -EAGAIN: read it whole.
 */
static int read_parallel(struct conv *c)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = ncpu > 8 ? 8 : ncpu < 1 ? 1 : (size_t)ncpu, i, k;
	struct lane lanes[8];
	void *args[8];
	uint64_t samples = 0;
	int ret = 0, filtered;

	if (c->in.kind != CV_TEXT || n < 2)
		return -EAGAIN;
	for (k = 0; k < c->nouts; k++)
		if (!c->outs[k].ops->fork)
			return -EAGAIN;
	memset(lanes, 0, sizeof(lanes));
	for (i = 0; i < n && !ret; i++) {
		lanes[i].c = c;
		args[i] = &lanes[i];
		for (k = 0; k < c->nouts && !ret; k++)
			if (!(lanes[i].w[k] = c->outs[k].ops->fork(c->outs[k].w)))
				ret = -ENOMEM;
	}
	if (!ret)
		ret = cv_read_text_parallel(&c->in, c->o.ps_flags, n, lane_sample, args, &samples,
					    &filtered, c->err, sizeof(c->err));
	for (i = 0; i < n; i++)
		for (k = 0; k < c->nouts; k++) {
			if (!lanes[i].w[k])
				continue;
			if (!ret)
				ret = c->outs[k].ops->merge(c->outs[k].w, lanes[i].w[k]);
			else
				c->outs[k].ops->drop(lanes[i].w[k]);
		}
	c->nsamples += samples;     /* the lanes' samples bypass to_all_samples */
	return ret;
}

static int read_input(struct conv *c)
{
	int ret;

	c->sink = (struct cv_sink){
		.sample = to_all_samples, .call = to_all_calls, .code = to_all_codes,
		.thread = to_all_threads, .call_stacks = c->sink.call_stacks,
	};
	c->err[0] = 0;
	ret = read_parallel(c);
	if (ret == -EAGAIN) {
		c->err[0] = 0;
		ret = cv_input_read(&c->in, c->o.ps_flags, &c->sink, c, c->err, sizeof(c->err));
	}
	if (ret) {
		if (ret == -ENOMEM && !c->err[0])
			snprintf(c->err, sizeof(c->err), "%s: out of memory", c->input);
		cmd_err("%s", c->err[0] ? c->err : strerror(-ret));
	}
	return ret;
}

/*
 * An input that gave nothing, or no stacks of the kind folded and SVG
 * output are made of, is an error that says what was empty: such an
 * output would be empty, and exit status 0 would hide why.
 */
static int check_not_empty(struct conv *c)
{
	int stacks = 0;

	for (size_t i = 0; i < c->nouts; i++)
		stacks |= !!(c->outs[i].ops->flags & CV_STACKS_ONLY);
	if (c->nsamples + c->ncalls + c->ncodes == 0) {
		if (c->in.kind == CV_TEXT && c->in.npeek == 0)
			cmd_err("%s: empty: no perf script text in it", c->input);
		else if (c->in.kind == CV_TEXT)
			cmd_err("%s: no samples in this perf script text (it needs call "
				"graphs: perf record -g)", c->input);
		else if (c->o.source == CV_SAMPLES)
			cmd_err("%s: perf recorded no samples in %s", c->input, c->in.perfdata);
		else
			cmd_err("%s: no instrumented calls in its trace%s", c->input,
				c->in.ntraces == 1 ? "" : "s");
		return -ENODATA;
	}
	if (stacks && c->o.source == CV_SAMPLES && !c->nsamples) {
		cmd_err("%s: perf recorded no samples in %s (try --source calls)", c->input,
			c->in.perfdata ? c->in.perfdata : c->input);
		return -ENODATA;
	}
	if (stacks && c->o.source == CV_CALLS && !c->ncalls) {
		cmd_err("%s: no instrumented calls in its trace%s%s", c->input,
			c->in.ntraces == 1 ? "" : "s", c->in.has_samples ? " (try --source samples)" : "");
		return -ENODATA;
	}
	return 0;
}

/* Finish every output (only when all went well) or throw it away. */
static int close_outputs(struct conv *c, int commit)
{
	int err = 0;

	for (size_t i = 0; i < c->nouts; i++) {
		struct output *out = &c->outs[i];
		int ret;

		if (commit && !err && out->w) {
			ret = out->ops->end(out->w);
			if (!ret)
				ret = outfile_commit(&out->of);
			if (ret) {
				cmd_err("%s: %s", out->path, strerror(-ret));
				err = ret;
			}
		}
		outfile_abort(&out->of);    /* no-op after a commit */
		if (out->w)
			out->ops->free(out->w);
		out->w = NULL;
	}
	return err;
}

int cmd_convert(int argc, char **argv)
{
	struct conv c = { .status = 1 };
	int err;

	err = parse_args(&c, argc, argv);
	err = err ?: check_outputs(&c);
	err = err ?: open_input(&c);
	err = err ?: read_tiers(&c);
	err = err ?: choose_source(&c);
	err = err ?: size_chrome(&c);
	err = err ?: open_outputs(&c);
	err = err ?: read_input(&c);
	err = err ?: check_not_empty(&c);
	err = close_outputs(&c, !err) ?: err;
	if (c.in_open)
		cv_input_close(&c.in);
	cv_tiers_free(&c.tiers);
	return err ? c.status : 0;
}
