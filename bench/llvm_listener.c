/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/llvm_listener: the time LLVM's PerfJITEventListener and
 * jitperf_llvm_event_listener spend in their callback, per function, in
 * the same run on the same objects.  FUNCTIONS functions of jitcalc's
 * language (about a dozen source lines each, with a loop and a branch)
 * are compiled by LLJIT at -O0: with DWARF line tables as one module (one
 * object) per function, as JITs compiling function by function do, and as
 * a single module; and without debug information, one object each.  Both
 * listeners get every object, taking turns at going first; each call is
 * timed (the call for one function in CLOCK_MONOTONIC, the call for all of
 * them in thread CPU time, see llvm_timing.cpp).  Both write a jitdump (LLVM's under a
 * temporary JITDUMPDIR, jitperf's perf map and jitdump in a temporary
 * directory), removed at the end.  jitperf's callback leaves the lines and
 * .eh_frame to libjitperf's flusher thread: what that thread spends while
 * the objects of one function each load is printed too (its scheduler
 * account, which on a VM also holds what its wake-ups cost; it writes
 * jitperf's files out as well).  In the same run: what registering one
 * of these functions with jitperf_code_load costs by itself, and one bare
 * write() of its jitdump record, and what opening a libdw handle costs
 * (dwarf_begin_elf on an ELF in memory: each object with DWARF paid it
 * while the lines were read through libdw; llvm/debugline.c does not).
 *
 *   nice bench/llvm_listener [FUNCTIONS [ROUNDS [DWARF]]]
 *
 * Prints medians per function and the ratios.
 */
#include "config.h"

#define _XOPEN_SOURCE_EXTENDED 1
#include <elfutils/libdw.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm/Config/llvm-config.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/OrcEE.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "bench/llvm_timing.h"
#include "examples/jit.h"
#include "examples/llvm_ir.h"
#include "jitperf-llvm.h"

struct run {
	LLVMJITEventListenerRef timed;
	struct bench_lap       *laps;
	size_t                  nlaps, cap;
};

static void die(const char *what, LLVMErrorRef e)
{
	char *msg = e ? LLVMGetErrorMessage(e) : NULL;

	fprintf(stderr, "llvm_listener: %s%s%s\n", what, msg ? ": " : "", msg ? msg : "");
	exit(1);
}

static LLVMOrcObjectLayerRef make_layer(void *ctx, LLVMOrcExecutionSessionRef es,
					const char *triple)
{
	struct run *r = ctx;
	LLVMOrcObjectLayerRef layer =
		LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager(es);

	LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(layer, r->timed);
	return layer;
}

static LLVMOrcLLJITRef make_jit(struct run *r)
{
	char *triple = LLVMGetDefaultTargetTriple(), *msg = NULL;
	LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
	LLVMTargetRef target;
	LLVMOrcLLJITRef jit;
	LLVMErrorRef e;

	if (LLVMGetTargetFromTriple(triple, &target, &msg))
		die(msg, NULL);
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b,
		LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(
			LLVMCreateTargetMachine(target, triple, "", "", LLVMCodeGenLevelNone,
						LLVMRelocDefault, LLVMCodeModelJITDefault)));
	LLVMOrcLLJITBuilderSetObjectLinkingLayerCreator(b, make_layer, r);
	if ((e = LLVMOrcCreateLLJIT(&jit, b)))
		die("LLJIT", e);
	LLVMDisposeMessage(triple);
	return jit;
}

/* Compile and load every function of p, per module of per functions. */
static void load_all(struct run *r, struct jc_prog *p, int per, int dwarf)
{
	LLVMOrcLLJITRef jit = make_jit(r);
	LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
	LLVMOrcExecutorAddress addr;
	LLVMErrorRef e;

	for (int i = 0; i < p->nfn; i += per) {
		LLVMModuleRef m = jc_llvm_module(p, LLVMOrcThreadSafeContextGetContext(tsc), "m",
						 &p->fn[i], per, dwarf);

		if (!m)
			die(p->err, NULL);
		if ((e = LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit),
						     LLVMOrcCreateNewThreadSafeModule(m, tsc))))
			die("adding a module", e);
	}
	LLVMOrcDisposeThreadSafeContext(tsc);
	/* each lookup compiles and loads a module: the listeners run here */
	for (int i = 0; i < p->nfn; i++)
		if ((e = LLVMOrcLLJITLookup(jit, &addr, p->fn[i]->name)))
			die(p->fn[i]->name, e);
	if ((e = LLVMOrcDisposeLLJIT(jit)))
		die("LLJIT", e);
}

/*
 * CPU time of libjitperf's flusher thread so far (ns, from the scheduler's
 * account in /proc; -1 when not found): it writes jitperf's files out, and
 * reads each object's lines and .eh_frame the callback left for later.
 */
static double flusher_ns(void)
{
	char path[300], comm[32];
	double ns = -1;
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");

	while (d && (e = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "jitperf-flush\n")) {
			FILE *g;

			snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
			if ((g = fopen(path, "r"))) {
				if (fscanf(g, "%lf", &ns) != 1)
					ns = -1;
				fclose(g);
			}
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Median per function of listener k over laps of per functions each: wall
 * time of the short calls of one function each, CPU time of long ones.
 */
static double per_function(const struct run *r, size_t from, int k, int per)
{
	size_t n = r->nlaps - from;
	double *v = malloc(n * sizeof(*v)), m;

	if (!v)
		die("out of memory", NULL);
	for (size_t i = 0; i < n; i++)
		v[i] = (per == 1 ? r->laps[from + i].ns[k] : r->laps[from + i].cpu[k]) / per;
	m = median(v, n);
	free(v);
	return m;
}

/* n functions of about a dozen lines: a loop, a branch, arithmetic. */
static char *source(int n)
{
	size_t cap = (size_t)n * 256 + 1, len = 0;
	char *s = malloc(cap);

	if (!s)
		die("out of memory", NULL);
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len,
			"fn f%d(a, b) {\n\tvar s = %d;\n\tvar i = 0;\n\twhile (i < a) {\n"
			"\t\tif (i %% 3 == 0) {\n\t\t\ts = s + b * i;\n\t\t} else {\n"
			"\t\t\ts = s - i;\n\t\t}\n\t\ti = i + 1;\n\t}\n\treturn s;\n}\n", i, i);
	return s;
}

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define CODE_LEN 128    /* about the size of the -O0 functions above */

/* jitperf_code_load of n functions of CODE_LEN bytes: thread CPU ns per function. */
static double register_only(const char *dir, int n)
{
	struct jitperf_options o = { .size = sizeof(o),
				     .outputs = JITPERF_PERFMAP | JITPERF_JITDUMP, .dir = dir };
	unsigned char *code = malloc((size_t)n * CODE_LEN);
	char name[32], path[4096];
	jitperf *jp;
	double t0, t;

	if (!code || jitperf_open(&jp, &o))
		die("register_only", NULL);
	for (size_t i = 0; i < (size_t)n * CODE_LEN; i++)
		code[i] = (unsigned char)(i * 2654435761u >> 13);
	t0 = cpu_ns();
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		if (jitperf_code_load(jp, name, code + (size_t)i * CODE_LEN, CODE_LEN, NULL))
			die("jitperf_code_load", NULL);
	}
	t = (cpu_ns() - t0) / n;
	jitperf_close(jp);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	unlink(path);
	free(code);
	return t;
}

/* One write() of such a function's CODE_LOAD record: thread CPU ns per call. */
static double bare_write(const char *dir, int n)
{
	unsigned char rec[56 + 8 + CODE_LEN] = { 0 };
	char path[4096];
	double t0, t;
	int fd;

	snprintf(path, sizeof(path), "%s/plain", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0)
		die(path, NULL);
	t0 = cpu_ns();
	for (int i = 0; i < n; i++)
		if (write(fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec))
			die("write", NULL);
	t = (cpu_ns() - t0) / n;
	close(fd);
	unlink(path);
	return t;
}

/*
 * What opening a libdw handle on an ELF image in memory costs, as the
 * listener did once per object with DWARF before it read line tables
 * itself: this program's own file, read into memory, through elf_memory,
 * dwarf_begin_elf and dwarf_end.
 */
static double dwarf_open_cost(int n)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	char *img = size > 0 ? malloc((size_t)size) : NULL;
	double t0, t = 0;
	Elf *e;

	if (!img || pread(fd, img, (size_t)size, 0) != size) {
		free(img);
		return 0;
	}
	close(fd);
	elf_version(EV_CURRENT);
	if (!(e = elf_memory(img, (size_t)size))) {
		free(img);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		Dwarf *d;

		t0 = cpu_ns();
		d = dwarf_begin_elf(e, DWARF_C_READ, NULL);
		if (d)
			dwarf_end(d);
		t += cpu_ns() - t0;
	}
	elf_end(e);
	free(img);
	return t / n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 500;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	int dwarf = argc > 3 ? atoi(argv[3]) : 4;
	char dir[] = "/tmp/jitperf-bench.XXXXXX", path[4096];
	struct jitperf_options o = { .size = sizeof(o) };
	struct run r = { 0 };
	double each[2], one[2], bare[2], reg, wr, dw, fl;
	struct jc_prog *p;
	size_t mark;
	char *text;
	jitperf *jp;
	int err;

	if (n < 1 || rounds < 1 || (dwarf != 4 && dwarf != 5)) {
		fprintf(stderr, "usage: llvm_listener [FUNCTIONS [ROUNDS [DWARF]]]\n");
		return 2;
	}
	if (!mkdtemp(dir))
		die("mkdtemp", NULL);
	text = source(n);
	if (!(p = jc_prog_new()) || jc_parse(p, text, "/nonexistent/bench.jc") ||
	    jc_parse_finish(p))
		die(p ? p->err : "out of memory", NULL);
	free(text);

	o.outputs = JITPERF_PERFMAP | JITPERF_JITDUMP;
	o.dir = dir;
	if ((err = jitperf_open(&jp, &o))) {
		fprintf(stderr, "llvm_listener: jitperf_open: %s\n", jitperf_strerror(err));
		return 1;
	}
	setenv("JITDUMPDIR", dir, 1);   /* LLVM's listener writes there */
	LLVMInitializeNativeTarget();
	LLVMInitializeNativeAsmPrinter();
	r.cap = (size_t)(n + 1) * (size_t)rounds * 2;
	if (!(r.laps = calloc(r.cap, sizeof(*r.laps))))
		die("out of memory", NULL);
	r.timed = bench_timed(LLVMCreatePerfJITEventListener(), jitperf_llvm_event_listener(jp),
			      r.laps, r.cap, &r.nlaps);

	load_all(&r, p, 1, dwarf);      /* warm-up: first-use costs of both */
	usleep(50000);                  /* the flusher done with it */
	mark = r.nlaps;
	fl = flusher_ns();
	for (int i = 0; i < rounds; i++)
		load_all(&r, p, 1, dwarf);
	usleep(50000);                  /* the flusher done with the last ones */
	fl = fl < 0 ? -1 : (flusher_ns() - fl) / n / rounds;
	each[0] = per_function(&r, mark, 0, 1);
	each[1] = per_function(&r, mark, 1, 1);
	mark = r.nlaps;
	for (int i = 0; i < rounds; i++)
		load_all(&r, p, n, dwarf);
	one[0] = per_function(&r, mark, 0, n);
	one[1] = per_function(&r, mark, 1, n);
	mark = r.nlaps;
	for (int i = 0; i < rounds; i++)
		load_all(&r, p, 1, 0);
	bare[0] = per_function(&r, mark, 0, 1);
	bare[1] = per_function(&r, mark, 1, 1);
	reg = register_only(dir, n * rounds);
	wr = bare_write(dir, n * rounds);
	dw = dwarf_open_cost(200);

	printf("%d functions of 12 source lines, LLVM %s at -O0, %d rounds; median time per\n"
	       "function in the listener's callback, both listeners on the same objects:\n"
	       "                                 DWARF %d lines, object:      no debug info\n"
	       "                                 one per function   one for all   one per function\n",
	       n, LLVM_VERSION_STRING, rounds, dwarf);
	printf("  LLVM PerfJITEventListener      %10.2f us  %10.2f us  %10.2f us\n", each[0] / 1e3,
	       one[0] / 1e3, bare[0] / 1e3);
	printf("  jitperf_llvm_event_listener    %10.2f us  %10.2f us  %10.2f us\n", each[1] / 1e3,
	       one[1] / 1e3, bare[1] / 1e3);
	printf("  LLVM / jitperf                 %10.1f x   %10.1f x   %10.1f x\n", each[0] / each[1],
	       one[0] / one[1], bare[0] / bare[1]);
	if (fl >= 0)
		printf("  jitperf's flusher thread meanwhile (writing the files out, reading\n"
		       "  lines and .eh_frame), one object per function      %8.2f us\n", fl / 1e3);
	printf("In the same run, thread CPU time:\n"
	       "  jitperf_code_load of a %d-byte function (perf map + jitdump)  %8.2f us\n"
	       "  one bare write() of its jitdump record                         %8.2f us\n"
	       "  libdw: dwarf_begin_elf + dwarf_end on an ELF in memory         %8.2f us\n"
	       "  LLVM listener (no debug info) / jitperf_code_load              %8.1f x\n",
	       CODE_LEN, reg / 1e3, wr / 1e3, dw / 1e3, bare[0] / reg);

	jitperf_close(jp);
	jc_prog_free(p);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(r.laps);
	return 0;
}
