/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/llvm_listener: what LLVM's PerfJITEventListener and
 * jitperf_llvm_event_listener cost per function, in the same run on the
 * same objects.  FUNCTIONS functions of jitcalc's language (about a dozen
 * source lines each, with a loop and a branch) are compiled by LLJIT at
 * -O0: with DWARF line tables as one module (one object) per function, as
 * JITs compiling function by function do, and as a single module; and
 * without debug information, one object each.  Both listeners get every
 * object, taking turns at going first (llvm_timing.cpp).
 *
 * Counted in full: the CPU time of the whole process (every thread) during
 * each callback, plus, for jitperf, its jitperf_close at the end (its last
 * record, the files closed) spread over the functions of the run.  LLVM's
 * listener writes its last record when the process exits (not counted: one
 * record).  Printed per function: the mean in full, the median callback,
 * and the worst callback (wall time) of each, and the ratios.  jitperf is
 * measured twice, each time against LLVM in the same run: writing a perf
 * map and a jitdump (what jitperf record asks for), and a jitdump only
 * (what LLVM's listener writes).
 *
 * The floor, in the same run: a listener that only writes as many bytes
 * per object as jitperf wrote on average, with one write() to a perf map
 * and one to a jitdump, and does nothing else, timed against LLVM's like
 * jitperf's.  No listener that writes both files in its callback can cost
 * less.  The floor runs twice: on the objects with DWARF lines, and on the
 * objects without debug info with what jitperf wrote for those; the last
 * line gives jitperf's cost in full over each.
 *
 * In the same run: what registering one such function with
 * jitperf_code_load costs by itself, one bare write() of its jitdump
 * record, and what opening a libdw handle costs (dwarf_begin_elf on an ELF
 * in memory; llvm/debugline.c reads line tables without libdw).  Both
 * listeners write into a temporary directory (LLVM's under JITDUMPDIR),
 * removed at the end.
 *
 *   nice bench/llvm_listener [FUNCTIONS [ROUNDS [DWARF]]]
 */
#include "config.h"

#define _XOPEN_SOURCE_EXTENDED 1
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <llvm/Config/llvm-config.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/OrcEE.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "bench.h"
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

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Per function of listener k over the laps from `from` on, of per functions each. */
struct cost {
	double median;          /* CPU time of a callback, per function */
	double sum;             /* CPU time of all callbacks */
	double worst;           /* wall time of the longest callback */
	double worst_cpu;       /* CPU time of the costliest callback */
	size_t functions;
};

static struct cost costs(const struct run *r, size_t from, int k, int per)
{
	size_t n = r->nlaps - from;
	double *v = malloc(n * sizeof(*v));
	struct cost c = { 0 };

	if (!v)
		die("out of memory", NULL);
	for (size_t i = 0; i < n; i++) {
		const struct bench_lap *l = &r->laps[from + i];

		v[i] = l->cpu[k] / per;
		c.sum += l->cpu[k];
		if (l->ns[k] > c.worst)
			c.worst = l->ns[k];
		if (l->cpu[k] > c.worst_cpu)
			c.worst_cpu = l->cpu[k];
	}
	c.median = median(v, n);
	c.functions = n * (size_t)per;
	free(v);
	return c;
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

/* A session of jitperf writing into dir, and a run timing its listener against LLVM's. */
static jitperf *open_run(struct run *r, const char *dir, unsigned outputs, size_t cap)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = outputs, .dir = dir };
	jitperf *jp;
	int err;

	if ((err = jitperf_open(&jp, &o))) {
		fprintf(stderr, "llvm_listener: jitperf_open: %s\n", jitperf_strerror(err));
		exit(1);
	}
	r->cap = cap;
	if (!(r->laps = calloc(r->cap, sizeof(*r->laps))))
		die("out of memory", NULL);
	r->timed = bench_timed(LLVMCreatePerfJITEventListener(), jitperf_llvm_event_listener(jp),
			       r->laps, r->cap, &r->nlaps);
	return jp;
}

static size_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (size_t)st.st_size;
}

/* LLVM's listener against the floor: map_len and dump_len bytes written per object. */
static struct cost floor_run(struct jc_prog *p, const char *dir, size_t map_len, size_t dump_len,
			     int rounds, int dwarf, struct cost *llvm)
{
	struct run f = { 0 };
	char path[4096];
	int mfd, dfd;
	struct cost c;

	snprintf(path, sizeof(path), "%s/floor.map", dir);
	mfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	snprintf(path, sizeof(path), "%s/floor.dump", dir);
	dfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (mfd < 0 || dfd < 0)
		die(path, NULL);
	f.cap = (size_t)p->nfn * (size_t)rounds;
	if (!(f.laps = calloc(f.cap, sizeof(*f.laps))))
		die("out of memory", NULL);
	f.timed = bench_timed(LLVMCreatePerfJITEventListener(),
			      bench_floor(mfd, map_len, dfd, dump_len), f.laps, f.cap, &f.nlaps);
	for (int i = 0; i < rounds; i++)
		load_all(&f, p, 1, dwarf);
	*llvm = costs(&f, 0, 0, 1);
	c = costs(&f, 0, 1, 1);
	close(mfd);
	close(dfd);
	free(f.laps);
	return c;
}

static double proc_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void print_row(const char *what, double full, const struct cost *c, double llvm_full)
{
	printf("  %-29s %8.2f %8.2f %9.1f %9.1f %6.1f x\n", what, full / 1e3, c->median / 1e3,
	       c->worst_cpu / 1e3, c->worst / 1e3, llvm_full / full);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 500;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	int dwarf = argc > 3 ? atoi(argv[3]) : 4;
	char dir[] = "/tmp/jitperf-bench.XXXXXX", path[4096];
	struct run r = { 0 }, rd = { 0 };
	struct cost each[2], eachd[2], one[2], bare[2], flo[2], flob[2];
	size_t map_len, dump_len, map_before, dump_before, map_bare, dump_bare;
	char map_path[4096], dump_path[4096];
	double reg, wr, dw, t0, close_ns, closed_ns, full[2], fulld[2];
	struct jc_prog *p;
	size_t mark, cap;
	char *text;
	jitperf *jp, *jpd;

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

	setenv("JITDUMPDIR", dir, 1);   /* LLVM's listener writes there */
	LLVMInitializeNativeTarget();
	LLVMInitializeNativeAsmPrinter();
	cap = (size_t)(n + 1) * (size_t)(rounds + 1) * 3;
	jp = open_run(&r, dir, JITPERF_PERFMAP | JITPERF_JITDUMP, cap);
	snprintf(path, sizeof(path), "%s/d", dir);
	if (mkdir(path, 0755))
		die(path, NULL);
	jpd = open_run(&rd, path, JITPERF_JITDUMP, cap);

	load_all(&r, p, 1, dwarf);      /* warm-up: first-use costs of both */
	load_all(&rd, p, 1, dwarf);
	mark = r.nlaps;
	for (int i = 0; i < rounds; i++)
		load_all(&r, p, 1, dwarf);
	each[0] = costs(&r, mark, 0, 1);
	each[1] = costs(&r, mark, 1, 1);
	/* what jitperf wrote per object so far (all its objects held one function) */
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	map_len = file_size(map_path) / r.nlaps;
	snprintf(dump_path, sizeof(dump_path), "%s/jit-%d.dump", dir, (int)getpid());
	dump_len = file_size(dump_path) / r.nlaps;
	flo[1] = floor_run(p, dir, map_len, dump_len, rounds, dwarf, &flo[0]);
	mark = rd.nlaps;
	for (int i = 0; i < rounds; i++)
		load_all(&rd, p, 1, dwarf);
	eachd[0] = costs(&rd, mark, 0, 1);
	eachd[1] = costs(&rd, mark, 1, 1);
	mark = r.nlaps;
	for (int i = 0; i < rounds; i++)
		load_all(&r, p, n, dwarf);
	one[0] = costs(&r, mark, 0, n);
	one[1] = costs(&r, mark, 1, n);
	mark = r.nlaps;
	map_before = file_size(map_path);
	dump_before = file_size(dump_path);
	for (int i = 0; i < rounds; i++)
		load_all(&r, p, 1, 0);
	bare[0] = costs(&r, mark, 0, 1);
	bare[1] = costs(&r, mark, 1, 1);
	/* what jitperf wrote per object without debug info, and the floor of that */
	map_bare = (file_size(map_path) - map_before) / (r.nlaps - mark);
	dump_bare = (file_size(dump_path) - dump_before) / (r.nlaps - mark);
	flob[1] = floor_run(p, dir, map_bare, dump_bare, rounds, 0, &flob[0]);
	/* the close, counted against the functions of one object each, with DWARF */
	t0 = proc_ns();
	jitperf_close(jp);
	close_ns = proc_ns() - t0;
	t0 = proc_ns();
	jitperf_close(jpd);
	closed_ns = proc_ns() - t0;
	reg = register_only(dir, n * rounds);
	wr = bare_write(dir, n * rounds);
	dw = dwarf_open_cost(200);

	full[0] = each[0].sum / each[0].functions;
	full[1] = (each[1].sum + close_ns) / each[1].functions;
	fulld[0] = eachd[0].sum / eachd[0].functions;
	fulld[1] = (eachd[1].sum + closed_ns) / eachd[1].functions;
	printf("%d functions of 12 source lines, LLVM %s at -O0, %d rounds, DWARF %d line tables,\n"
	       "one object per function.  us per function: CPU time of the whole process (all\n"
	       "threads) in the callbacks, jitperf's close included (in full), and the median\n"
	       "callback; the costliest callback in CPU time and the longest in wall time\n"
	       "                                  in full   median  worst CPU worst wall  LLVM/this\n",
	       n, LLVM_VERSION_STRING, rounds, dwarf);
	print_row("LLVM PerfJITEventListener", full[0], &each[0], full[0]);
	print_row("jitperf: perf map + jitdump", full[1], &each[1], full[0]);
	print_row("LLVM PerfJITEventListener", fulld[0], &eachd[0], fulld[0]);
	print_row("jitperf: jitdump only", fulld[1], &eachd[1], fulld[0]);
	print_row("LLVM PerfJITEventListener", flo[0].sum / flo[0].functions, &flo[0],
		  flo[0].sum / flo[0].functions);
	print_row("floor: 2 bare write()s", flo[1].sum / flo[1].functions, &flo[1],
		  flo[0].sum / flo[0].functions);
	printf("  (the floor writes %zu + %zu bytes per object, jitperf's average)\n",
	       map_len, dump_len);
	printf("The same objects' functions as one object (DWARF), and one object per function\n"
	       "without debug info (perf map + jitdump):\n");
	print_row("LLVM, one object for all", one[0].sum / one[0].functions, &one[0],
		  one[0].sum / one[0].functions);
	print_row("jitperf, one object for all", one[1].sum / one[1].functions, &one[1],
		  one[0].sum / one[0].functions);
	print_row("LLVM, no debug info", bare[0].sum / bare[0].functions, &bare[0],
		  bare[0].sum / bare[0].functions);
	print_row("jitperf, no debug info", bare[1].sum / bare[1].functions, &bare[1],
		  bare[0].sum / bare[0].functions);
	print_row("LLVM, beside the floor", flob[0].sum / flob[0].functions, &flob[0],
		  flob[0].sum / flob[0].functions);
	print_row("floor, no debug info", flob[1].sum / flob[1].functions, &flob[1],
		  flob[0].sum / flob[0].functions);
	printf("  (the floor writes %zu + %zu bytes per object)\n"
	       "jitperf over its floor: %.2f x with DWARF, %.2f x without debug info\n",
	       map_bare, dump_bare, (full[1]) / (flo[1].sum / flo[1].functions),
	       (bare[1].sum / bare[1].functions) / (flob[1].sum / flob[1].functions));
	printf("In the same run, thread CPU time:\n"
	       "  jitperf_code_load of a %d-byte function (perf map + jitdump)  %8.2f us\n"
	       "  one bare write() of its jitdump record                         %8.2f us\n"
	       "  libdw: dwarf_begin_elf + dwarf_end on an ELF in memory         %8.2f us\n",
	       CODE_LEN, reg / 1e3, wr / 1e3, dw / 1e3);

	jc_prog_free(p);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(r.laps);
	free(rd.laps);
	return 0;
}
