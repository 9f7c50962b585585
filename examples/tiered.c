/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitcalc-tiered - the tiered example JIT: runs a jitcalc program in a
 * bytecode interpreter (tier 0, "interp") and tiers hot functions up to
 * native code compiled on a background thread (tier 1, "opt").  It
 * registers everything with libjitperf (jitperf_default(), so $JITPERF
 * decides what is written) and prints, per function, its calls in each
 * tier and what its compile cost.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiered.h"

#ifndef JITCALC_TIERED
# define JITCALC_TIERED "examples/tiered.jc"
#endif
#define DEFAULT_ROUNDS 200000
#define DEFAULT_THRESHOLD 10000
#define MAX_PASSES 8

static const char usage[] =
"Usage: jitcalc-tiered [-n N] [-t T] [--passes FUNC=K]... [FILE.jc]\n"
"Run FILE.jc (default: " JITCALC_TIERED ") in a bytecode interpreter, and\n"
"compile each function called T times to machine code on a background thread.\n"
"Calls run(i, T) for i = 0 .. N-1 and prints the sum of its values, then per\n"
"function its calls in each tier and its compile time.\n"
"\n"
"  -n N             rounds (default %d)\n"
"  -t T             tier-up threshold: interpreted calls before a function is\n"
"                   compiled (default %d; 0: never)\n"
"  --passes FUNC=K  run the backend K more times over FUNC, the extra output\n"
"                   thrown away: a costly optimizing compile (default: cold=%d)\n"
"  -h, --help       show this help\n"
"\n"
"Tier 0 is named 'interp', tier 1 'opt': perf shows hot[interp] (the\n"
"function's trampoline into the interpreter) and hot[opt] (its native code).\n"
"Environment: JITPERF=perfmap,jitdump, JITPERF_DIR (see libjitperf(3)).\n";

#define DEFAULT_COLD_PASSES 30000

struct passes { const char *func; int k; };

static void report(const struct tx_rt *rt)
{
	printf("compiler thread: tid %d\n", atomic_load(&rt->compiler_tid));
	for (int i = 0; i < rt->prog->nfn; i++) {
		const struct tx_fn *f = &rt->fn[i];

		printf("%s: %lu calls interp, %lu calls opt", f->ir->name, f->calls_interp,
		       f->calls_native);
		if (f->native_map)
			printf(", compile %.3f ms\n", (double)f->compile_ns / 1e6);
		else if (f->compile_status)
			printf(", compile failed: %s\n", strerror(-f->compile_status));
		else
			printf("\n");
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "passes", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct passes passes[MAX_PASSES] = { { "cold", DEFAULT_COLD_PASSES } };
	int npasses = 1, user_passes = 0, c, err;
	long rounds = DEFAULT_ROUNDS, threshold = DEFAULT_THRESHOLD;
	const char *file = JITCALC_TIERED;
	int64_t sum = 0;
	struct jc_prog *p;
	struct tx_fn *run;
	struct tx_rt rt;
	jitperf *jp;
	char *eq;

	while ((c = getopt_long(argc, argv, "n:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': rounds = jc_number("jitcalc-tiered", optarg, "-n"); break;
		case 't':
			threshold = strcmp(optarg, "0") ? jc_number("jitcalc-tiered", optarg, "-t") : 0;
			break;
		case 'p':
			if (!user_passes++)
				npasses = 0;        /* the user's list replaces the default */
			if (!(eq = strchr(optarg, '=')) || eq == optarg || npasses == MAX_PASSES) {
				fprintf(stderr, "jitcalc-tiered: --passes wants FUNC=K (at most %d), not '%s'\n",
					MAX_PASSES, optarg);
				return 2;
			}
			*eq = 0;
			passes[npasses].func = optarg;
			passes[npasses++].k = (int)jc_number("jitcalc-tiered", eq + 1, "--passes");
			break;
		case 'h': printf(usage, DEFAULT_ROUNDS, DEFAULT_THRESHOLD, DEFAULT_COLD_PASSES); return 0;
		default: fprintf(stderr, usage, DEFAULT_ROUNDS, DEFAULT_THRESHOLD, DEFAULT_COLD_PASSES); return 2;
		}
	}
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "jitcalc-tiered: one source file only ('%s' is one too many)\n",
			argv[optind]);
		return 2;
	}
	if (!(p = jc_prog_new())) {
		fprintf(stderr, "jitcalc-tiered: %s\n", strerror(ENOMEM));
		return 1;
	}
	if ((err = tx_load(p, file))) {
		fprintf(stderr, "%s\n", p->err[0] ? p->err : strerror(-err));
		jc_prog_free(p);
		return 1;
	}
	if (!jc_find(p, "run") || jc_find(p, "run")->nparams != 2) {
		fprintf(stderr, "%s:1: no function 'run(i, t)' to run\n", file);
		jc_prog_free(p);
		return 1;
	}

	jp = jitperf_default();
	if ((err = tx_rt_open(&rt, p, jp, (unsigned long)threshold))) {
		fprintf(stderr, "jitcalc-tiered: %s\n", p->err[0] ? p->err : strerror(-err));
		tx_rt_close(&rt);
		jc_prog_free(p);
		return 1;
	}
	for (int i = 0; i < npasses; i++) {
		struct tx_fn *f = tx_rt_find(&rt, passes[i].func);

		if (f)
			f->passes = passes[i].k;
		else if (user_passes) {
			fprintf(stderr, "jitcalc-tiered: --passes: no function '%s' in %s\n",
				passes[i].func, file);
			tx_rt_close(&rt);
			jc_prog_free(p);
			return 2;
		}
	}

	run = tx_rt_find(&rt, "run");
	for (long i = 0; i < rounds; i++) {
		int64_t args[JC_MAX_PARAMS] = { i, threshold };

		sum = (int64_t)((uint64_t)sum + (uint64_t)tx_call(run, args));
	}
	/* the compiles still running end before the session does */
	tx_tierup_stop(&rt);
	printf("run(i, %ld) for i < %ld = %" PRId64 "\n", threshold, rounds, sum);
	report(&rt);
	fflush(stdout);

	/* close before unmapping the code: CODE_CLOSE is written here */
	if ((err = jitperf_close(jp)))
		fprintf(stderr, "jitcalc-tiered: jitperf_close: %s\n", jitperf_strerror(err));
	tx_rt_close(&rt);
	jc_prog_free(p);
	return err ? 1 : 0;
}
