/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf convert: perf samples, instrumented calls and JIT code loads into
 * Chrome trace JSON, folded stacks and an SVG flame graph.
 *
 * The input is recognised by its first bytes, never by its name: a record
 * directory, perf.data ("PERFILE2", read through `perf script`), a jitperf
 * trace, a jitdump, or else perf script text.  It is read once; every event
 * goes to each requested writer (struct cv_ops).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmds.h"
#include "convert.h"
#include "cvinput.h"

#define PROG "jitperf convert"

static const char usage_text[] =
	"usage: jitperf convert [DIR | perf.data | perf-script.txt | FILE.trace | FILE.dump | -]\n"
	"                       [--chrome FILE] [--folded FILE] [--svg FILE]\n"
	"                       [--pid] [--tid] [--kernel] [--jit] [--all] [--addrs]\n"
	"                       [--source samples|calls] [--title TEXT]\n"
	"\n"
	"  --chrome FILE    Chrome trace JSON (Perfetto, chrome://tracing, speedscope)\n"
	"  --folded FILE    folded stacks, as stackcollapse-perf.pl (FILE - = stdout)\n"
	"  --svg FILE       SVG flame graph\n"
	"  --pid, --tid     add the PID (and TID) to the process name\n"
	"  --kernel, --jit  annotate kernel (_[k]) and JIT (_[j]) frames; --all: both\n"
	"  --addrs          keep the address of frames without a symbol\n"
	"  --source S       stacks of perf samples or of instrumented calls (self ns)\n"
	"  --title TEXT     title of the SVG (default: Flame Graph)\n"
	"  -h, --help       show this help\n"
	"The input is recognised by its content; default: jitperf.data, or - for stdin.\n"
	"With no output option, folded stacks go to standard output.\n";

struct output {
	const struct cv_ops *ops;
	const char          *path;
	struct outfile       of;
	void                *w;
};

struct conv {
	struct output outs[3];
	size_t        nouts;
	struct cv_opts o;
};

static int to_all_samples(const struct ps_sample *s, void *arg)
{
	struct conv *c = arg;
	int ret;

	for (size_t i = 0; i < c->nouts; i++)
		if (c->outs[i].ops->sample && (ret = c->outs[i].ops->sample(c->outs[i].w, s)))
			return ret;
	return 0;
}

static int to_all_calls(const struct cv_call *call, void *arg)
{
	struct conv *c = arg;
	int ret;

	for (size_t i = 0; i < c->nouts; i++)
		if (c->outs[i].ops->call && (ret = c->outs[i].ops->call(c->outs[i].w, call)))
			return ret;
	return 0;
}

static int to_all_codes(const struct cv_code *code, void *arg)
{
	struct conv *c = arg;
	int ret;

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

static struct cv_sink sink = {
	.sample = to_all_samples,
	.call   = to_all_calls,
	.code   = to_all_codes,
	.thread = to_all_threads,
};

static int add_output(struct conv *c, const struct cv_ops *ops, const char *path)
{
	for (size_t i = 0; i < c->nouts; i++) {
		if (c->outs[i].ops == ops) {
			fprintf(stderr, PROG ": --%s given twice\n", ops->what);
			return -1;
		}
		if (!strcmp(c->outs[i].path, path)) {
			fprintf(stderr, PROG ": %s: used for two outputs\n", path);
			return -1;
		}
	}
	c->outs[c->nouts].ops = ops;
	c->outs[c->nouts].path = path;
	c->nouts++;
	return 0;
}

/* An output renamed over the input would destroy it: refuse that. */
static int replaces_input(const struct conv *c, const char *input)
{
	struct stat in, out;

	if (stat(input, &in) || !S_ISREG(in.st_mode))
		return 0;       /* cv_input_open says what is wrong with it */
	for (size_t i = 0; i < c->nouts; i++)
		if (!stat(c->outs[i].path, &out) && out.st_dev == in.st_dev &&
		    out.st_ino == in.st_ino) {
			fprintf(stderr, PROG ": %s: output would replace the input\n",
				c->outs[i].path);
			return 1;
		}
	return 0;
}

static void close_outputs(struct conv *c, int commit, int *status)
{
	for (size_t i = 0; i < c->nouts; i++) {
		struct output *out = &c->outs[i];
		int err;

		if (commit && *status == 0 && out->w) {
			err = out->ops->end(out->w);
			if (!err)
				err = outfile_commit(&out->of);
			if (err) {
				fprintf(stderr, PROG ": %s: %s\n", out->path, strerror(-err));
				*status = 1;
			}
		}
		outfile_abort(&out->of);    /* no-op after a commit */
		if (out->w)
			out->ops->free(out->w);
		out->w = NULL;
	}
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "chrome", required_argument, NULL, 'c' },
		{ "folded", required_argument, NULL, 'f' },
		{ "svg",    required_argument, NULL, 's' },
		{ "pid",    no_argument,       NULL, 'p' },
		{ "tid",    no_argument,       NULL, 't' },
		{ "kernel", no_argument,       NULL, 'k' },
		{ "jit",    no_argument,       NULL, 'j' },
		{ "all",    no_argument,       NULL, 'a' },
		{ "addrs",  no_argument,       NULL, 'A' },
		{ "source", required_argument, NULL, 'S' },
		{ "title",  required_argument, NULL, 'T' },
		{ "help",   no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct conv c = { .nouts = 0 };
	struct cv_input in;
	const char *input = "jitperf.data", *source = NULL;
	char err[1024] = "";
	int opt, status = 0, ret;

	c.o.title = "Flame Graph";
	optind = 1;
	opterr = 0;             /* our own messages, named "jitperf convert" */
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': if (add_output(&c, &cv_chrome_ops, optarg)) return 2; break;
		case 'f': if (add_output(&c, &cv_folded_ops, optarg)) return 2; break;
		case 's': if (add_output(&c, &cv_svg_ops, optarg)) return 2; break;
		case 'p': c.o.ps_flags |= PS_PID; break;
		case 't': c.o.ps_flags |= PS_TID; break;
		case 'k': c.o.ps_flags |= PS_KERNEL; break;
		case 'j': c.o.ps_flags |= PS_JIT; break;
		case 'a': c.o.ps_flags |= PS_KERNEL | PS_JIT; break;
		case 'A': c.o.ps_flags |= PS_ADDRS; break;
		case 'S': source = optarg; break;
		case 'T': c.o.title = optarg; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default:
			if (optopt && strchr("cfsST", optopt))  /* the options with an argument */
				fprintf(stderr, PROG ": option '%s' needs an argument\n", argv[optind - 1]);
			else
				fprintf(stderr, PROG ": unknown option '%s'\n", argv[optind - 1]);
			fprintf(stderr, "see 'jitperf convert --help'\n");
			return 2;
		}
	}
	if (optind < argc)
		input = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, PROG ": one input only ('%s' is extra)\n", argv[optind]);
		return 2;
	}
	if (source && strcmp(source, "samples") && strcmp(source, "calls")) {
		fprintf(stderr, PROG ": --source is 'samples' or 'calls', not '%s'\n", source);
		return 2;
	}
	if (c.nouts == 0)
		add_output(&c, &cv_folded_ops, "-");
	for (size_t i = 0, stdouts = 0; i < c.nouts; i++)
		if (!strcmp(c.outs[i].path, "-") && ++stdouts > 1) {
			fprintf(stderr, PROG ": only one output can be standard output\n");
			return 2;
		}
	if (strcmp(input, "-") && replaces_input(&c, input))
		return 2;

	ret = cv_input_open(&in, input, err, sizeof(err));
	if (ret) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	c.o.has_calls = in.has_calls;
	if (!source)
		c.o.source = in.has_samples ? CV_SAMPLES : CV_CALLS;
	else
		c.o.source = !strcmp(source, "samples") ? CV_SAMPLES : CV_CALLS;
	if (c.o.source == CV_SAMPLES && !in.has_samples) {
		fprintf(stderr, PROG ": %s: no perf samples (try --source calls)\n", input);
		cv_input_close(&in);
		return 1;
	}
	if (c.o.source == CV_CALLS && !in.has_calls) {
		fprintf(stderr, PROG ": %s: no instrumented calls (record with --instrument)\n", input);
		cv_input_close(&in);
		return 1;
	}

	for (size_t i = 0; i < c.nouts; i++) {
		struct output *out = &c.outs[i];

		ret = outfile_open(&out->of, out->path);
		if (ret) {
			fprintf(stderr, PROG ": %s: %s\n", out->path,
				out->of.why ? out->of.why : strerror(-ret));
			status = 1;
			goto out;
		}
		out->w = out->ops->begin(&out->of, &c.o);
		if (!out->w) {
			fprintf(stderr, PROG ": out of memory\n");
			status = 1;
			goto out;
		}
	}

	for (size_t i = 0; i < c.nouts; i++)      /* Chrome needs only the callee */
		if (c.outs[i].ops != &cv_chrome_ops && c.o.source == CV_CALLS)
			sink.call_stacks = 1;
	ret = cv_input_read(&in, c.o.ps_flags, &sink, &c, err, sizeof(err));
	if (ret) {
		if (ret == -ENOMEM && !err[0])
			snprintf(err, sizeof(err), "%s: out of memory", input);
		fprintf(stderr, PROG ": %s\n", err[0] ? err : strerror(-ret));
		status = 1;
	}
out:
	close_outputs(&c, 1, &status);
	cv_input_close(&in);
	return status;
}
