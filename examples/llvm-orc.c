/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * llvm-orc - the example JIT on LLVM: jitcalc's language (same parser, same
 * demo.jc) compiled to LLVM IR with DWARF lines (llvm_ir.c) and run by
 * ORC's LLJIT at -O0, one module per function as JITs that compile
 * function by function do.  The one line that makes its code visible to
 * perf is the listener, where a JIT would have put
 * LLVMCreatePerfJITEventListener():
 *
 *	LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(layer,
 *		jitperf_llvm_event_listener(NULL));
 *
 * and jitperf_llvm_instrument_module() adds entry/exit probes to each
 * module when asked (--instrument) or when $JITPERF wants trace or stats.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/OrcEE.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "examples/jit.h"
#include "examples/llvm_ir.h"
#include "jitperf-llvm.h"

#ifndef JITCALC_DEMO
# define JITCALC_DEMO "examples/demo.jc"
#endif
#define DEFAULT_ROUNDS 5000

static const char usage[] =
"Usage: llvm-orc [--instrument | --no-instrument] [--one-module] [--dwarf 4|5]\n"
"                [--perf-listener] [-e EXPR] [-n N] [FILE.jc]\n"
"Compile FILE.jc (default: the demo, " JITCALC_DEMO ") with LLVM ORC (LLJIT,\n"
"-O0, DWARF lines), register it with libjitperf-llvm's listener and run it.\n"
"\n"
"  -e EXPR          evaluate EXPR (e.g. 'fib(20)') N times and print its value;\n"
"                   it runs as a function named 'expr'\n"
"  -n N             repeat the work N times (default: 1 with -e, else %d calls\n"
"                   of the file's run())\n"
"  --instrument     add jitperf_enter/jitperf_exit probes to every function\n"
"                   (jitperf_llvm_instrument_module); by default only when\n"
"                   $JITPERF asks for trace or stats\n"
"  --no-instrument  never add probes\n"
"  --one-module     one LLVM module for all functions (default: one each)\n"
"  --dwarf N        DWARF version of the line tables, 4 (default) or 5\n"
"  --perf-listener  also register LLVM's own LLVMCreatePerfJITEventListener(),\n"
"                   which writes its jitdump under $JITDUMPDIR/.debug/jit/\n"
"  -h, --help       show this help\n"
"\n"
"Environment: JITPERF=perfmap,jitdump,trace,stats, JITPERF_DIR (see libjitperf(3)).\n";

struct opts {
	int instrument;         /* -1: when $JITPERF asks for trace or stats */
	int one_module;
	int dwarf;
	int perf_listener;
};

static int failed(const char *what, LLVMErrorRef e)
{
	char *msg = LLVMGetErrorMessage(e);

	fprintf(stderr, "llvm-orc: %s: %s\n", what, msg);
	LLVMDisposeErrorMessage(msg);
	return 1;
}

/* The object layer: RuntimeDyld, with the listeners. */
static LLVMOrcObjectLayerRef make_layer(void *ctx, LLVMOrcExecutionSessionRef es,
					const char *triple)
{
	const struct opts *o = ctx;
	LLVMOrcObjectLayerRef layer =
		LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager(es);
	LLVMJITEventListenerRef l = jitperf_llvm_event_listener(NULL);

	if (l)
		LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(layer, l);
	else
		fprintf(stderr, "llvm-orc: jitperf_llvm_event_listener: %s\n", strerror(errno));
	if (o->perf_listener)
		LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(
			layer, LLVMCreatePerfJITEventListener());
	return layer;
}

/* LLJIT generating code at -O0 for this machine. */
static int make_jit(LLVMOrcLLJITRef *jit, struct opts *o)
{
	char *triple = LLVMGetDefaultTargetTriple(), *msg = NULL;
	char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
	LLVMOrcLLJITBuilderRef b;
	LLVMTargetMachineRef tm;
	LLVMTargetRef target;
	LLVMErrorRef e;
	int err = 0;

	if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
		fprintf(stderr, "llvm-orc: %s: %s\n", triple, msg);
		err = 1;
		goto out;
	}
	tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelNone,
				     LLVMRelocDefault, LLVMCodeModelJITDefault);
	b = LLVMOrcCreateLLJITBuilder();
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
		b, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
	LLVMOrcLLJITBuilderSetObjectLinkingLayerCreator(b, make_layer, o);
	if ((e = LLVMOrcCreateLLJIT(jit, b)))
		err = failed("LLJIT", e);
out:
	LLVMDisposeMessage(msg);
	LLVMDisposeMessage(triple);
	LLVMDisposeMessage(cpu);
	LLVMDisposeMessage(features);
	return err;
}

/* Add the n functions fns as one module. */
static int add_module(LLVMOrcLLJITRef jit, LLVMOrcThreadSafeContextRef tsc, struct jc_prog *p,
		      struct jc_func **fns, int n, const struct opts *o, jitperf *jp)
{
	LLVMModuleRef mod = jc_llvm_module(p, LLVMOrcThreadSafeContextGetContext(tsc),
					   n == 1 ? fns[0]->name : "program", fns, n, o->dwarf);
	LLVMErrorRef e;
	int k;

	if (!mod) {
		fprintf(stderr, "llvm-orc: %s\n", p->err);
		return 1;
	}
	if (o->instrument && (k = jitperf_llvm_instrument_module(jp, mod)) < 0) {
		fprintf(stderr, "llvm-orc: jitperf_llvm_instrument_module: %s\n", jitperf_strerror(k));
		LLVMDisposeModule(mod);
		return 1;
	}
	e = LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit),
					LLVMOrcCreateNewThreadSafeModule(mod, tsc));
	return e ? failed("adding a module", e) : 0;
}

/* Every function into the JIT; jitperf_enter/_exit come from the process. */
static int compile(LLVMOrcLLJITRef jit, struct jc_prog *p, const struct opts *o, jitperf *jp)
{
	LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
	LLVMOrcDefinitionGeneratorRef gen;
	LLVMErrorRef e;
	int err = 0;

	e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
		&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
	if (e)
		err = failed("process symbols", e);
	else
		LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), gen);
	if (o->one_module)
		err = err ?: add_module(jit, tsc, p, p->fn, p->nfn, o, jp);
	for (int i = 0; !o->one_module && !err && i < p->nfn; i++)
		err = add_module(jit, tsc, p, &p->fn[i], 1, o, jp);
	LLVMOrcDisposeThreadSafeContext(tsc);    /* the modules keep it alive */
	return err;
}

/* Parse FILE (and -e EXPR) with jitcalc's front end; NULL after a message. */
static struct jc_prog *parse(const char *file, const char *expr)
{
	char path[PATH_MAX], *text;
	size_t len;
	struct jc_prog *p;
	int err;

	/* line info wants the absolute path, so perf annotate finds the source */
	if (!realpath(file, path) || !(text = jc_slurp(path, &len))) {
		fprintf(stderr, "llvm-orc: %s: %s\n", file, strerror(errno));
		return NULL;
	}
	if (!(p = jc_prog_new()) || !(p->path = strdup(path))) {
		fprintf(stderr, "llvm-orc: %s\n", strerror(ENOMEM));
		free(text);
		jc_prog_free(p);
		return NULL;
	}
	/* errors name the file as the user gave it; line info gets the absolute path */
	err = jc_parse(p, text, file);
	free(text);
	if (!err && expr)
		err = jc_parse_expr(p, "expr", expr, "-e");
	err = err ?: jc_parse_finish(p);
	for (int i = 0; !err && i < p->nfn; i++)
		if (!strcmp(p->fn[i]->file, file))
			p->fn[i]->file = p->path;
	if (err) {
		fprintf(stderr, "%s\n", p->err);
		jc_prog_free(p);
		return NULL;
	}
	return p;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "instrument", no_argument, NULL, 'I' },
		{ "no-instrument", no_argument, NULL, 'N' },
		{ "one-module", no_argument, NULL, 'O' },
		{ "dwarf", required_argument, NULL, 'D' },
		{ "perf-listener", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .instrument = -1, .dwarf = 4 };
	const char *expr = NULL, *file = JITCALC_DEMO, *entry;
	long rounds = 0;
	int c, err;
	int64_t (*fn)(void), last = 0, sum = 0;
	LLVMOrcExecutorAddress addr;
	LLVMOrcLLJITRef jit;
	LLVMErrorRef e;
	struct jc_prog *p;
	jitperf *jp;

	while ((c = getopt_long(argc, argv, "e:n:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'e': expr = optarg; break;
		case 'n': rounds = jc_number("llvm-orc", optarg, "-n"); break;
		case 'I': o.instrument = 1; break;
		case 'N': o.instrument = 0; break;
		case 'O': o.one_module = 1; break;
		case 'D': o.dwarf = (int)jc_number("llvm-orc", optarg, "--dwarf"); break;
		case 'P': o.perf_listener = 1; break;
		case 'h': printf(usage, DEFAULT_ROUNDS); return 0;
		default: fprintf(stderr, usage, DEFAULT_ROUNDS); return 2;
		}
	}
	if (o.dwarf != 4 && o.dwarf != 5) {
		fprintf(stderr, "llvm-orc: --dwarf must be 4 or 5\n");
		return 2;
	}
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "llvm-orc: one source file only ('%s' is one too many)\n", argv[optind]);
		return 2;
	}
	if (!(p = parse(file, expr)))
		return 1;
	entry = expr ? "expr" : "run";
	if (!jc_find(p, entry) || jc_find(p, entry)->nparams) {
		fprintf(stderr, "%s:1: no function 'run()' to run (or use -e)\n", file);
		jc_prog_free(p);
		return 1;
	}

	jp = jitperf_default();
	if (o.instrument < 0)
		o.instrument = !!(jitperf_outputs(jp) & (JITPERF_TRACE | JITPERF_STATS));
	LLVMInitializeNativeTarget();
	LLVMInitializeNativeAsmPrinter();
	if (make_jit(&jit, &o)) {
		jc_prog_free(p);
		return 1;
	}
	err = compile(jit, p, &o, jp);
	/* the lookup compiles and loads the code: the listener runs here */
	if (!err && (e = LLVMOrcLLJITLookup(jit, &addr, entry)))
		err = failed(entry, e);
	if (!err) {
		fn = (int64_t (*)(void))(uintptr_t)addr;
		if (!rounds)
			rounds = expr ? 1 : DEFAULT_ROUNDS;
		for (long i = 0; i < rounds; i++) {
			last = fn();
			sum = (int64_t)((uint64_t)sum + (uint64_t)last);
		}
		if (expr)
			printf("%" PRId64 "\n", last);
		else
			printf("run() x %ld = %" PRId64 "\n", rounds, sum);
		fflush(stdout);
	}
	/* freeing the code unloads it from the session (notifyFreeingObject) */
	if ((e = LLVMOrcDisposeLLJIT(jit)))
		err = failed("disposing of the JIT", e);
	LLVMShutdown();
	jc_prog_free(p);
	if ((c = jitperf_close(jp))) {
		fprintf(stderr, "llvm-orc: jitperf_close: %s\n", jitperf_strerror(c));
		err = 1;
	}
	return err ? 1 : 0;
}
