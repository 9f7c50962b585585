/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitcalc - the example JIT: compiles a .jc file to x86-64 or AArch64 code,
 * registers it with libjitperf (jitperf_default(), so $JITPERF decides
 * what is written) and runs it.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

#ifndef JITCALC_DEMO
# define JITCALC_DEMO "examples/demo.jc"
#endif
#define DEFAULT_ROUNDS 5000  /* calls of run(): enough for a profile of many samples */

static const char usage[] =
"Usage: jitcalc [--instrument | --no-instrument] [--probes=inline|check|call]\n"
"               [-e EXPR] [-n N] [-t THREADS] [FILE.jc]\n"
"Compile FILE.jc (default: the demo, " JITCALC_DEMO ") to machine code\n"
"(x86-64 or AArch64, the host's),\n"
"register it with libjitperf and run it.\n"
"\n"
"  -e EXPR          evaluate EXPR (e.g. 'fib(20)') N times and print its value;\n"
"                   it runs as a function named 'expr'\n"
"  -n N             repeat the work N times (default: 1 with -e, else %d calls\n"
"                   of the file's run(), about 1.5 s)\n"
"  -t THREADS       do the work in THREADS threads at once (default 1)\n"
"  --instrument     emit jitperf_enter/jitperf_exit probes in every function\n"
"  --no-instrument  never emit probes; by default they are emitted when\n"
"                   $JITPERF asks for trace or stats\n"
"  --probes=CODE    how probes are emitted: inline (default: the counting path\n"
"                   inline, the library called for timed calls only), check\n"
"                   (an inline test, then a call of jitperf_enter/exit) or call\n"
"                   (always a call); on AArch64 inline is check\n"
"  -h, --help       show this help\n"
"\n"
"Environment: JITPERF=perfmap,jitdump,trace,stats, JITPERF_DIR (see libjitperf(3)).\n";

struct work {
	jc_entry   entry;
	long       rounds;
	int64_t    result;     /* sum of all rounds, wrapping */
	int64_t    last;       /* value of the last round */
	pthread_t  thread;
};

static void *worker(void *arg)
{
	struct work *w = arg;
	int64_t acc = 0;

	for (long i = 0; i < w->rounds; i++) {
		w->last = w->entry(0, 0, 0, 0, 0, 0);
		acc = (int64_t)((uint64_t)acc + (uint64_t)w->last);
	}
	w->result = acc;
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "instrument", no_argument, NULL, 'I' },
		{ "no-instrument", no_argument, NULL, 'N' },
		{ "probes", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *expr = NULL, *file = JITCALC_DEMO;
	int instrument = -1, c, err;
	enum jc_probe_code probe_code = JC_PROBES_INLINE;
	long rounds = 0, threads = 1;
	char path[PATH_MAX], *text, *nul;
	size_t len;
	struct jc_prog *p;
	struct jc_func *f;
	struct work *w;
	jitperf *jp;

	while ((c = getopt_long(argc, argv, "e:n:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e': expr = optarg; break;
		case 'n': rounds = jc_number("jitcalc", optarg, "-n"); break;
		case 't': threads = jc_number("jitcalc", optarg, "-t"); break;
		case 'I': instrument = 1; break;
		case 'N': instrument = 0; break;
		case 'P':
			if (!strcmp(optarg, "inline"))
				probe_code = JC_PROBES_INLINE;
			else if (!strcmp(optarg, "check"))
				probe_code = JC_PROBES_CHECK;
			else if (!strcmp(optarg, "call"))
				probe_code = JC_PROBES_CALL;
			else {
				fprintf(stderr, "jitcalc: --probes is inline, check or call, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'h': printf(usage, DEFAULT_ROUNDS); return 0;
		default: fprintf(stderr, usage, DEFAULT_ROUNDS); return 2;
		}
	}
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "jitcalc: one source file only ('%s' is one too many)\n", argv[optind]);
		return 2;
	}
	/* line info wants the absolute path, so perf annotate finds the source */
	if (!realpath(file, path) || !(text = jc_slurp(path, &len))) {
		fprintf(stderr, "jitcalc: %s: %s\n", file, strerror(errno));
		return 1;
	}
	if ((nul = memchr(text, 0, len))) {
		int line = 1;

		for (const char *q = text; q < nul; q++)
			line += *q == '\n';
		fprintf(stderr, "%s:%d: NUL byte in the source\n", file, line);
		free(text);
		return 1;
	}
	if (!(p = jc_prog_new()) || !(p->path = strdup(path))) {
		fprintf(stderr, "jitcalc: %s\n", strerror(ENOMEM));
		return 1;
	}
	p->probe_code = probe_code;
	/* errors name the file as the user gave it; line info gets the absolute path */
	err = jc_parse(p, text, file);
	free(text);
	if (!err && expr)
		err = jc_parse_expr(p, "expr", expr, "-e");
	if (!err)
		err = jc_parse_finish(p);
	for (int i = 0; !err && i < p->nfn; i++)
		if (!strcmp(p->fn[i]->file, file))
			p->fn[i]->file = p->path;
	f = jc_find(p, expr ? "expr" : "run");
	if (err || !f || f->nparams) {
		if (err)
			fprintf(stderr, "%s\n", p->err);
		else
			fprintf(stderr, "%s:1: no function 'run()' to run (or use -e)\n", file);
		jc_prog_free(p);
		return 1;
	}

	jp = jitperf_default();
	if (instrument < 0)
		instrument = !!(jitperf_outputs(jp) & (JITPERF_TRACE | JITPERF_STATS));
	if ((instrument && (err = jc_instrument(p))) || (err = jc_compile(p, jp))) {
		fprintf(stderr, "jitcalc: %s\n", p->err[0] ? p->err : strerror(-err));
		jc_prog_free(p);
		return 1;
	}

	if (!rounds)
		rounds = expr ? 1 : DEFAULT_ROUNDS;
	if (!(w = calloc((size_t)threads, sizeof(*w)))) {
		fprintf(stderr, "jitcalc: %s\n", strerror(ENOMEM));
		return 1;
	}
	for (long i = 0; i < threads; i++) {
		w[i].entry = jc_entry_of(p, f);
		w[i].rounds = rounds;
		if (threads == 1) {
			worker(&w[i]);
		} else if ((err = pthread_create(&w[i].thread, NULL, worker, &w[i]))) {
			fprintf(stderr, "jitcalc: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (long i = 0; threads > 1 && i < threads; i++)
		pthread_join(w[i].thread, NULL);
	if (expr)
		printf("%" PRId64 "\n", w[0].last);
	else
		printf("run() x %ld = %" PRId64 "\n", rounds, w[0].result);
	fflush(stdout);
	free(w);

	/* close before freeing the code: statistics and CODE_CLOSE are written here */
	if ((err = jitperf_close(jp)))
		fprintf(stderr, "jitcalc: jitperf_close: %s\n", jitperf_strerror(err));
	jc_prog_free(p);
	return err ? 1 : 0;
}
