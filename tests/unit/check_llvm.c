/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Check suite for libjitperf-llvm: code compiled by LLJIT (jitcalc's
 * language through examples/llvm_ir.c) is registered by the listener with
 * its exact run-time address, size, source lines and unwind info, and
 * unloaded when LLVM frees it; the instrumentation pass counts every call;
 * the .eh_frame re-encoding, the LEB128 reader and the object key table on
 * inputs made here.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/OrcEE.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "tests/check-subr.h"
#include "examples/jit.h"
#include "examples/llvm_ir.h"
#include "jitperf-llvm.h"
#include "llvm/leb128.h"
#include "llvm/llvm.h"
#include "read/jitdump_read.h"
#include "read/stats_read.h"

static const char source[] =
	"fn add(a, b) {\n"                      /* 1 */
	"\treturn a + b;\n"                     /* 2 */
	"}\n"                                   /* 3 */
	"fn fib(n) {\n"                         /* 4 */
	"\tif (n < 2) {\n"                      /* 5 */
	"\t\treturn n;\n"                       /* 6 */
	"\t}\n"                                 /* 7 */
	"\treturn fib(n - 1) + fib(n - 2);\n"   /* 8 */
	"}\n"                                   /* 9 */
	"fn run() {\n"                          /* 10 */
	"\treturn add(fib(10), 1);\n"           /* 11 */
	"}\n";                                  /* 12 */
#define SOURCE "/src/check.jc"

static char *dir;
static struct jc_prog *prog;

static void setup(void)
{
	clear_env();
	dir = make_tmpdir();
	prog = jc_prog_new();
	ck_assert_ptr_nonnull(prog);
	ck_assert_msg(jc_parse(prog, source, SOURCE) == 0 && jc_parse_finish(prog) == 0, "%s",
		      prog->err);
	LLVMInitializeNativeTarget();
	LLVMInitializeNativeAsmPrinter();
}

static void teardown(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	jc_prog_free(prog);
	remove_tmpdir(dir);
}

static void ok(LLVMErrorRef e)
{
	char *msg;

	if (!e)
		return;
	msg = LLVMGetErrorMessage(e);
	ck_abort_msg("LLVM: %s", msg);
}

static LLVMOrcObjectLayerRef with_listener(void *ctx, LLVMOrcExecutionSessionRef es,
					   const char *triple)
{
	LLVMOrcObjectLayerRef layer =
		LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager(es);

	LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(layer, ctx);
	return layer;
}

/* LLJIT at -O0 with listener l, the program's functions added per per-function modules. */
static LLVMOrcLLJITRef jit_of(LLVMJITEventListenerRef l, int per, int dwarf, jitperf *instrument)
{
	char *triple = LLVMGetDefaultTargetTriple(), *msg = NULL;
	LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
	LLVMOrcThreadSafeContextRef tsc;
	LLVMOrcDefinitionGeneratorRef gen;
	LLVMTargetRef target;
	LLVMOrcLLJITRef jit;

	ck_assert_int_eq(LLVMGetTargetFromTriple(triple, &target, &msg), 0);
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b,
		LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(
			LLVMCreateTargetMachine(target, triple, "", "", LLVMCodeGenLevelNone,
						LLVMRelocDefault, LLVMCodeModelJITDefault)));
	LLVMOrcLLJITBuilderSetObjectLinkingLayerCreator(b, with_listener, l);
	ok(LLVMOrcCreateLLJIT(&jit, b));
	LLVMDisposeMessage(triple);
	ok(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
		&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL));
	LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), gen);
	tsc = LLVMOrcCreateNewThreadSafeContext();
	for (int i = 0; i < prog->nfn; i += per) {
		LLVMModuleRef m = jc_llvm_module(prog, LLVMOrcThreadSafeContextGetContext(tsc),
						 prog->fn[i]->name, &prog->fn[i], per, dwarf);

		ck_assert_msg(m != NULL, "%s", prog->err);
		if (instrument)
			ck_assert_int_eq(jitperf_llvm_instrument_module(instrument, m), per);
		ok(LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit),
					       LLVMOrcCreateNewThreadSafeModule(m, tsc)));
	}
	LLVMOrcDisposeThreadSafeContext(tsc);
	return jit;
}

static uint64_t lookup(LLVMOrcLLJITRef jit, const char *name)
{
	LLVMOrcExecutorAddress a;

	ok(LLVMOrcLLJITLookup(jit, &a, name));
	return a;
}

static jitperf *session(unsigned outputs)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = outputs, .dir = dir };
	jitperf *jp;

	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	return jp;
}

/* What the jitdump says about one function. */
struct seen {
	uint64_t addr, size, index, ts;
	int      lines[16];         /* lines[k]: source line k has a row */
	size_t   nrows;
	int      rows_inside;       /* every row lies in [addr, addr + size) */
	int      first_at_start;    /* the first row is at addr */
	int      unwind;
};

/* Find name's CODE_LOAD in the session's jitdump, with what came before it. */
static int find_load(const char *name, struct seen *s)
{
	char path[512], err[256];
	struct jd_file *f;
	struct jd_record r;
	struct seen pend;
	int found = 0, n;

	memset(&pend, 0, sizeof(pend));
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	ck_assert_msg(jd_open(&f, path, err, sizeof(err)) == 0, "%s", err);
	while ((n = jd_next(f, &r, err, sizeof(err))) == 1) {
		if (r.id == JIT_CODE_DEBUG_INFO) {
			struct jd_debug_iter it;
			struct jd_debug_entry e;
			uint64_t at, nr;

			ck_assert_int_eq(jd_debug_info(f, &r, &at, &nr, &it), 0);
			pend.addr = at;
			pend.nrows = (size_t)nr;
			pend.rows_inside = 1;
			for (uint64_t k = 0; jd_debug_next(&it, &e, err, sizeof(err)) == 1; k++) {
				ck_assert_str_eq(e.file, SOURCE);
				if (e.lineno < 16)
					pend.lines[e.lineno] = 1;
				if (k == 0)
					pend.first_at_start = e.addr == at;
				pend.size = e.addr;             /* the last row, checked below */
				if (e.addr < at)
					pend.rows_inside = 0;
			}
		} else if (r.id == JIT_CODE_UNWINDING_INFO) {
			struct jd_unwinding u;

			ck_assert_msg(jd_unwinding_info(f, &r, &u, err, sizeof(err)) == 0, "%s", err);
			pend.unwind = u.eh_frame_hdr_size > 0;
		} else if (r.id == JIT_CODE_LOAD) {
			if (!strcmp(r.name, name)) {
				ck_assert(!found);
				*s = pend;
				if (s->nrows) {
					ck_assert_uint_eq(s->addr, r.code_addr);
					s->rows_inside = s->rows_inside && s->size < r.code_addr + r.code_size;
				}
				s->addr = r.code_addr;
				s->size = r.code_size;
				s->index = r.code_index;
				s->ts = r.timestamp;
				found = 1;
			}
			memset(&pend, 0, sizeof(pend));
		}
	}
	ck_assert_msg(n == 0, "%s", err);
	jd_close(f);
	return found;
}

static void check_loaded(LLVMOrcLLJITRef jit, struct seen *add, struct seen *fib)
{
	uint64_t a = lookup(jit, "add"), f = lookup(jit, "fib");

	ck_assert(find_load("add", add));
	ck_assert(find_load("fib", fib));
	/* the code LLVM runs, at the address it runs at */
	ck_assert_uint_eq(add->addr, a);
	ck_assert_uint_eq(fib->addr, f);
	ck_assert_uint_gt(add->size, 4);
	ck_assert_uint_gt(fib->size, 16);
	/* lines of check.jc: add's body is line 2, fib's are 5, 6 and 8 */
	ck_assert(add->nrows && add->rows_inside && add->first_at_start);
	ck_assert(add->lines[1] && add->lines[2] && !add->lines[5] && !add->lines[8]);
	ck_assert(fib->nrows && fib->rows_inside && fib->first_at_start);
	ck_assert(fib->lines[4] && fib->lines[5] && fib->lines[6] && fib->lines[8]);
	ck_assert(!fib->lines[2] && !fib->lines[11]);
	ck_assert(add->unwind && fib->unwind);
}

START_TEST(test_listener_registers)
{
	jitperf *jp = session(JITPERF_PERFMAP | JITPERF_JITDUMP);
	LLVMOrcLLJITRef jit = jit_of(jitperf_llvm_event_listener(jp), 1, 4, NULL);
	int64_t (*run)(void) = (int64_t (*)(void))(uintptr_t)lookup(jit, "run");
	struct seen add, fib;
	char path[64], want[64];
	unsigned char *map;
	size_t len;

	ck_assert_int_eq(run(), 56);
	check_loaded(jit, &add, &fib);
	/* the perf map names them too */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = slurp(path, &len);
	ck_assert_ptr_nonnull(map);
	snprintf(want, sizeof(want), "%llx %llx fib\n", (unsigned long long)fib.addr,
		 (unsigned long long)fib.size);
	ck_assert_msg(strstr((char *)map, want), "no '%s' in %s", want, map);
	free(map);
	ok(LLVMOrcDisposeLLJIT(jit));
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

static size_t lines_in(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

START_TEST(test_listener_one_object)
{
	/* one object of three functions, DWARF 5: each gets only its own rows */
	jitperf *jp = session(JITPERF_PERFMAP | JITPERF_JITDUMP);
	LLVMOrcLLJITRef jit = jit_of(jitperf_llvm_event_listener(jp), 3, 5, NULL);
	struct seen add, fib, run;
	char path[64], want[64];
	unsigned char *map;
	size_t len;

	check_loaded(jit, &add, &fib);
	/*
	 * Registered together (lib/codebatch.h): in both files once LLVM's
	 * lookup returned, the session still open, with consecutive indices
	 * and the one timestamp of their batch.
	 */
	ck_assert(find_load("run", &run));
	ck_assert_uint_eq(run.addr, lookup(jit, "run"));
	ck_assert_uint_eq(add.ts, fib.ts);
	ck_assert_uint_eq(add.ts, run.ts);
	ck_assert_uint_eq(add.index + fib.index + run.index, 6);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = slurp(path, &len);
	ck_assert_ptr_nonnull(map);
	for (int k = 0; k < 3; k++) {
		const struct seen *f = k == 0 ? &add : k == 1 ? &fib : &run;

		snprintf(want, sizeof(want), "%llx %llx %s\n", (unsigned long long)f->addr,
			 (unsigned long long)f->size, k == 0 ? "add" : k == 1 ? "fib" : "run");
		ck_assert_msg(strstr((char *)map, want), "no '%s' in %s", want, map);
	}
	ck_assert_uint_eq(lines_in((char *)map), 3);
	free(map);
	ok(LLVMOrcDisposeLLJIT(jit));
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

START_TEST(test_listener_unloads)
{
	jitperf *jp = session(JITPERF_JITDUMP);
	LLVMOrcLLJITRef jit = jit_of(jitperf_llvm_event_listener(jp), 1, 4, NULL);
	struct seen add, fib;

	check_loaded(jit, &add, &fib);
	ok(LLVMOrcDisposeLLJIT(jit));
	/* LLVM freed the objects: the listener unloaded their code already */
	ck_assert_int_eq(jitperf_code_unload(jp, add.index), -ENOENT);
	ck_assert_int_eq(jitperf_code_unload(jp, fib.index), -ENOENT);
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

START_TEST(test_listener_inactive)
{
	/* JITPERF unset: the code runs, nothing is written */
	jitperf *jp = session(0);
	LLVMOrcLLJITRef jit = jit_of(jitperf_llvm_event_listener(jp), 1, 4, NULL);
	int64_t (*run)(void) = (int64_t (*)(void))(uintptr_t)lookup(jit, "run");
	char path[512];

	ck_assert_int_eq(run(), 56);
	ok(LLVMOrcDisposeLLJIT(jit));
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

START_TEST(test_listener_one_per_session)
{
	jitperf *jp = session(JITPERF_JITDUMP);
	LLVMJITEventListenerRef l = jitperf_llvm_event_listener(jp);

	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_eq(jitperf_llvm_event_listener(jp), l);
	ck_assert_ptr_eq(jitperf_llvm_event_listener(NULL),
			 jitperf_llvm_event_listener(jitperf_default()));
	ck_assert_ptr_ne(jitperf_llvm_event_listener(NULL), l);
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

START_TEST(test_instrument_counts)
{
	jitperf *jp = session(JITPERF_STATS);
	LLVMOrcLLJITRef jit = jit_of(jitperf_llvm_event_listener(jp), 1, 4, jp);
	int64_t (*run)(void) = (int64_t (*)(void))(uintptr_t)lookup(jit, "run");
	struct stats_file *st;
	char path[512], err[256];
	int seen = 0;

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(run(), 56);
	ok(LLVMOrcDisposeLLJIT(jit));
	ck_assert_int_eq(jitperf_close(jp), 0);
	snprintf(path, sizeof(path), "%s/jitperf-%d.stats", dir, (int)getpid());
	ck_assert_msg(stats_read(path, &st, err, sizeof(err)) == 0, "%s", err);
	/* fib(10) makes 177 calls of fib; three runs */
	for (size_t i = 0; i < st->nrows; i++) {
		const struct stats_row *r = &st->rows[i];

		if (!strcmp(r->name, "fib")) {
			ck_assert_uint_eq(r->calls, 3 * 177);
			seen |= 1;
		} else if (!strcmp(r->name, "add")) {
			ck_assert_uint_eq(r->calls, 3);
			seen |= 2;
		} else if (!strcmp(r->name, "run")) {
			ck_assert_uint_eq(r->calls, 3);
			seen |= 4;
		}
		ck_assert_uint_eq(r->unbalanced, 0);
	}
	ck_assert_int_eq(seen, 7);
	stats_free(st);
}
END_TEST

START_TEST(test_instrument_module)
{
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m = jc_llvm_module(prog, ctx, "m", prog->fn, prog->nfn, 4);
	LLVMValueRef fib = LLVMGetNamedFunction(m, "fib");
	int calls = 0, loads = 0;

	ck_assert_int_eq(jitperf_llvm_instrument_module(NULL, NULL), -EINVAL);
	ck_assert_int_eq(jitperf_llvm_instrument_module(NULL, m), 3);
	/* instrumented functions are left alone the second time */
	ck_assert_int_eq(jitperf_llvm_instrument_module(NULL, m), 0);
	ck_assert_ptr_nonnull(LLVMGetNamedGlobal(m, "jitperf__probe_active"));
	/* fib: one entry probe and one exit probe per return (two, and the final
	 * "return 0" jitcalc adds, unreachable), each behind a load of the flag */
	for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fib); b; b = LLVMGetNextBasicBlock(b))
		for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
			LLVMValueRef callee;
			const char *name;
			size_t len;

			if (LLVMIsALoadInst(i) && LLVMGetOperand(i, 0) ==
			    LLVMGetNamedGlobal(m, "jitperf__probe_active")) {
				ck_assert(LLVMGetVolatile(i));
				loads++;
			}
			if (!LLVMIsACallInst(i) || !(callee = LLVMGetCalledValue(i)))
				continue;
			name = LLVMGetValueName2(callee, &len);
			calls += !strcmp(name, "jitperf_enter") || !strcmp(name, "jitperf_exit");
		}
	ck_assert_int_eq(calls, 4);
	ck_assert_int_eq(loads, 4);
	ck_assert_int_eq(LLVMVerifyModule(m, LLVMReturnStatusAction, NULL), 0);
	LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
}
END_TEST

/* ---- .eh_frame re-encoding, on a section made here */

static unsigned char code[64];

struct ehbuf {
	unsigned char b[128];
	size_t        n;
};

static void put(struct ehbuf *e, const void *p, size_t n)
{
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

/*
 * A CIE "zPLR" with 8-byte pcrel pointers and an FDE for code with an LSDA.
 * The CIE's code alignment factor, 1, is the LEB128 align[0..align_len).
 */
static size_t make_eh_align(struct ehbuf *e, int64_t begin_off, const unsigned char *align,
			    size_t align_len)
{
	static const unsigned char cie_aug[] = {
		0, 0, 0, 0,     /* CIE id */
		1, 'z', 'P', 'L', 'R', 0,
	};
	static const unsigned char cie_head[] = {
		0x78, 16,       /* data align -8, return address r16 */
		11,             /* augmentation data: P enc + 8, L enc, R enc */
		0x1c,           /* personality: pcrel|sdata8 */
	};
	static const unsigned char cie_tail[] = {
		0x1b,           /* LSDA: pcrel|sdata4 */
		0x1c,           /* FDE pointers: pcrel|sdata8 */
		0x0c, 7, 8,     /* def_cfa rsp+8 */
		0x90, 1,        /* r16 at cfa-8 */
		0, 0,           /* nops */
	};
	static const unsigned char fde_tail[] = {
		4, 0, 0, 0, 0,  /* augmentation data: an LSDA pointer */
		0x41,           /* advance 1 */
		0x0e, 16,       /* def_cfa_offset 16 */
		0,
	};
	uint32_t len;
	int64_t v;
	size_t fde, field;

	e->n = 0;
	len = (uint32_t)(sizeof(cie_aug) + align_len + sizeof(cie_head) + 8 + sizeof(cie_tail));
	put(e, &len, 4);
	put(e, cie_aug, sizeof(cie_aug));
	put(e, align, align_len);
	put(e, cie_head, sizeof(cie_head));
	v = 0x1000;             /* personality: somewhere */
	put(e, &v, 8);
	put(e, cie_tail, sizeof(cie_tail));
	fde = e->n;
	len = 4 + 8 + 8 + sizeof(fde_tail);
	put(e, &len, 4);
	len = (uint32_t)(e->n - 0);     /* back to the CIE at 0 */
	put(e, &len, 4);
	field = e->n;
	v = (int64_t)((uintptr_t)code + (uint64_t)begin_off - (uintptr_t)(e->b + field));
	put(e, &v, 8);
	v = 48;
	put(e, &v, 8);
	put(e, fde_tail, sizeof(fde_tail));
	return fde;
}

static size_t make_eh(struct ehbuf *e, int64_t begin_off)
{
	return make_eh_align(e, begin_off, (const unsigned char *)"\x01", 1);
}

START_TEST(test_unwind_reencode)
{
	struct ehbuf e;
	struct jpl_arena a;
	struct jpl_fdes *t;
	unsigned char *out;
	size_t n;
	uint64_t lo = (uintptr_t)code, eh_addr = lo + 64;
	uint32_t len, ptr;
	int32_t begin;
	jitperf *jp = session(JITPERF_JITDUMP);
	struct jitperf_code c = { .size = sizeof(c), .name = "reencoded", .addr = code,
				  .len = sizeof(code) };

	make_eh(&e, 8);
	jpl_arena_init(&a, NULL, 0);
	ck_assert_int_eq(jpl_unwind_open(&t, e.b, e.n, (uintptr_t)e.b, &a), 0);
	/* code elsewhere: no FDE */
	ck_assert_int_eq(jpl_unwind_of(t, lo + 4096, lo + 4096 + 64, &out, &n), 0);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(jpl_unwind_of(t, lo, lo + 64, &out, &n), 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(n % 4, 0);
	/* the CIE: "zR", one byte of augmentation data, pcrel|sdata4 */
	memcpy(&len, out, 4);
	ck_assert_uint_eq(memcmp(out + 8, "\x01zR\0\x01\x78\x10\x01\x1b\x0c\x07\x08\x90\x01", 14), 0);
	/* the FDE: back to the CIE, pc_begin as if at lo + 64, range, no LSDA */
	memcpy(&ptr, out + 4 + len + 4, 4);
	ck_assert_uint_eq(ptr, 4 + len + 4);
	memcpy(&begin, out + 4 + len + 8, 4);
	ck_assert_uint_eq(eh_addr + 4 + len + 8 + (uint64_t)(int64_t)begin, lo + 8);
	memcpy(&ptr, out + 4 + len + 12, 4);
	ck_assert_uint_eq(ptr, 48);
	ck_assert_uint_eq(memcmp(out + 4 + len + 16, "\0\x41\x0e\x10", 4), 0);
	/* and libjitperf takes it (it checks the convention) */
	c.eh_frame = out;
	c.eh_frame_len = n;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), 0);
	/* an FDE reaching past the code is cut at its end */
	ck_assert_int_eq(jpl_unwind_of(t, lo, lo + 32, &out, &n), 0);
	memcpy(&ptr, out + 4 + len + 12, 4);
	ck_assert_uint_eq(ptr, 24);
	/* a record longer than the section */
	e.b[0] = 0xf0;
	ck_assert_int_eq(jpl_unwind_open(&t, e.b, e.n, (uintptr_t)e.b, &a), -EINVAL);
	jpl_arena_free(&a);
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

/*
 * The arena: aligned memory from the caller's block, then from malloc'ed
 * ones; the newest allocation grows in place, an older one moves with its
 * bytes; given back, it starts over from malloc.
 */
START_TEST(test_arena)
{
	unsigned char space[256];
	struct jpl_arena a;
	unsigned char *p, *q, *r;

	jpl_arena_init(&a, space + 1, sizeof(space) - 1);
	ck_assert_ptr_nonnull(p = jpl_alloc(&a, 3));
	ck_assert_uint_eq((uintptr_t)p % 16, 0);
	memcpy(p, "abc", 3);
	ck_assert_ptr_nonnull(q = jpl_alloc(&a, 40));
	ck_assert_uint_eq((uintptr_t)q % 16, 0);
	ck_assert(q >= p + 3);
	memset(q, 'q', 40);
	/* the newest grows where it is (not under ASan: each is a block) */
	r = jpl_realloc(&a, q, 40, 80);
	ck_assert_ptr_nonnull(r);
	ck_assert(r == q || !(q >= space && q < space + sizeof(space)));
	ck_assert_uint_eq(r[39], 'q');
	/* an older one moves, bytes and all */
	ck_assert_ptr_nonnull(q = jpl_realloc(&a, p, 3, 64));
	ck_assert(q != p);
	ck_assert_uint_eq(memcmp(q, "abc", 3), 0);
	/* past the caller's block: malloc'ed, big ones too */
	ck_assert_ptr_nonnull(p = jpl_alloc(&a, 1000));
	ck_assert(!(p >= space && p < space + sizeof(space)));
	memset(p, 1, 1000);
	ck_assert_ptr_nonnull(p = jpl_alloc(&a, (size_t)1 << 20));
	memset(p, 2, (size_t)1 << 20);
	ck_assert_ptr_null(jpl_alloc(&a, SIZE_MAX - 4));
	jpl_arena_free(&a);
	ck_assert_ptr_nonnull(p = jpl_alloc(&a, 16));
	memset(p, 3, 16);
	jpl_arena_free(&a);
}
END_TEST

/*
 * A LEB128 number in the CIE padded past 64 bits (DWARF allows any
 * padding) is read; one whose value needs more than 64 bits is not, and
 * the FDE is left out rather than taken with a truncated value.
 */
START_TEST(test_unwind_leb128)
{
	/* 1, padded to 12 bytes */
	static const unsigned char padded[] = { 0x81, 0x80, 0x80, 0x80, 0x80, 0x80,
						0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
	/* 1 + 2^64 */
	static const unsigned char wide[] = { 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					      0x80, 0x80, 0x02 };
	struct ehbuf e;
	struct jpl_arena a = { 0 };
	struct jpl_fdes *t;
	unsigned char *out;
	size_t n;
	uint64_t lo = (uintptr_t)code;
	uint32_t len;
	jitperf *jp = session(JITPERF_JITDUMP);
	struct jitperf_code c = { .size = sizeof(c), .name = "padded", .addr = code,
				  .len = sizeof(code) };

	make_eh_align(&e, 8, padded, sizeof(padded));
	ck_assert_int_eq(jpl_unwind_open(&t, e.b, e.n, (uintptr_t)e.b, &a), 0);
	ck_assert_int_eq(jpl_unwind_of(t, lo, lo + 64, &out, &n), 0);
	ck_assert_msg(out != NULL, "the FDE of a CIE with a padded LEB128 was left out");
	/* the CIE keeps the number as it was written; libjitperf takes it */
	memcpy(&len, out, 4);
	ck_assert_uint_eq(memcmp(out + 8, "\x01zR\0", 4), 0);
	ck_assert_uint_eq(memcmp(out + 12, padded, sizeof(padded)), 0);
	ck_assert_uint_eq(memcmp(out + 12 + sizeof(padded), "\x78\x10\x01\x1b", 4), 0);
	c.eh_frame = out;
	c.eh_frame_len = n;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), 0);

	make_eh_align(&e, 8, wide, sizeof(wide));
	ck_assert_int_eq(jpl_unwind_open(&t, e.b, e.n, (uintptr_t)e.b, &a), 0);
	ck_assert_int_eq(jpl_unwind_of(t, lo, lo + 64, &out, &n), 0);
	ck_assert_msg(out == NULL, "a CIE with a LEB128 of 65 bits was read");
	jpl_arena_free(&a);
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

/* The LEB128 reader of the object code (llvm/leb128.h) */
START_TEST(test_leb128)
{
	static const struct {
		int sign, ok;
		uint64_t v;
		size_t n;
		unsigned char b[12];
	} cases[] = {
		/* DWARF 5, tables 7.7 and 7.8 */
		{ 0, 1, 2, 1, { 0x02 } },
		{ 0, 1, 127, 1, { 0x7f } },
		{ 0, 1, 128, 2, { 0x80, 0x01 } },
		{ 0, 1, 129, 2, { 0x81, 0x01 } },
		{ 0, 1, 130, 2, { 0x82, 0x01 } },
		{ 0, 1, 12857, 2, { 0xb9, 0x64 } },
		{ 1, 1, 2, 1, { 0x02 } },
		{ 1, 1, (uint64_t)-2, 1, { 0x7e } },
		{ 1, 1, 127, 2, { 0xff, 0x00 } },
		{ 1, 1, (uint64_t)-127, 2, { 0x81, 0x7f } },
		{ 1, 1, 128, 2, { 0x80, 0x01 } },
		{ 1, 1, (uint64_t)-128, 2, { 0x80, 0x7f } },
		{ 1, 1, 129, 2, { 0x81, 0x01 } },
		{ 1, 1, (uint64_t)-129, 2, { 0xff, 0x7e } },
		/* the edges of 64 bits */
		{ 0, 1, UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
		{ 0, 0, 0, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03 } },
		{ 0, 0, 0, 10, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02 } },
		{ 1, 1, (uint64_t)INT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00 } },
		{ 1, 1, (uint64_t)INT64_MIN, 10, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f } },
		{ 1, 0, 0, 10, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 } },  /* 2^63 */
		{ 1, 0, 0, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7e } },
		/* padding past 64 bits: zeros, or copies of the sign */
		{ 0, 1, 3, 12, { 0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 } },
		{ 1, 1, (uint64_t)-1, 12, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f } },
		{ 1, 1, 3, 12, { 0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 } },
		{ 0, 0, 0, 12, { 0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00 } },
		{ 1, 0, 0, 12, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7e } },
		/* runs past the end */
		{ 0, 0, 0, 0, { 0 } },
		{ 0, 0, 0, 2, { 0x80, 0x80 } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const unsigned char *b = cases[i].b;
		uint64_t v = 0xdead;
		const unsigned char *q = jpl_leb128(b, b + cases[i].n, &v, cases[i].sign);

		if (!cases[i].ok) {
			ck_assert_msg(q == NULL, "case %zu: read as %#llx", i, (unsigned long long)v);
			continue;
		}
		ck_assert_msg(q == b + cases[i].n, "case %zu: %td bytes read, not %zu", i,
			      q ? q - b : -1, cases[i].n);
		ck_assert_msg(v == cases[i].v, "case %zu: %#llx, not %#llx", i,
			      (unsigned long long)v, (unsigned long long)cases[i].v);
	}
}
END_TEST

START_TEST(test_keys)
{
	struct jpl_keys *t = NULL;
	uint64_t idx[3], *got;

	for (uint64_t k = 0; k < 1000; k++) {
		idx[0] = k, idx[1] = k + 1, idx[2] = k + 2;
		ck_assert_int_eq(jpl_keys_add(&t, 0x7f0000000000 + 64 * k, idx, 1 + k % 3), 0);
	}
	ck_assert_uint_eq(jpl_keys_take(t, 42, &got), 0);
	ck_assert_ptr_null(got);
	for (uint64_t k = 0; k < 1000; k++) {
		size_t n = jpl_keys_take(t, 0x7f0000000000 + 64 * k, &got);

		ck_assert_uint_eq(n, 1 + k % 3);
		for (size_t i = 0; i < n; i++)
			ck_assert_uint_eq(got[i], k + i);
		free(got);
		ck_assert_uint_eq(jpl_keys_take(t, 0x7f0000000000 + 64 * k, &got), 0);
	}
	jpl_keys_free(t);
}
END_TEST

static Suite *llvm_suite(void)
{
	Suite *s = suite_create("libjitperf-llvm");
	TCase *tc;

	tc = tcase_create("Listener");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_listener_registers);
	tcase_add_test(tc, test_listener_one_object);
	tcase_add_test(tc, test_listener_unloads);
	tcase_add_test(tc, test_listener_inactive);
	tcase_add_test(tc, test_listener_one_per_session);
	suite_add_tcase(s, tc);

	tc = tcase_create("Instrumentation pass");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_instrument_counts);
	tcase_add_test(tc, test_instrument_module);
	suite_add_tcase(s, tc);

	tc = tcase_create("Unwind info and object keys");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_unwind_reencode);
	tcase_add_test(tc, test_unwind_leb128);
	tcase_add_test(tc, test_leb128);
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_arena);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(llvm_suite());
}
