/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Check suite for the example JIT: the generated code (x86-64 or AArch64,
 * the host's backend) computes the right results (with and without
 * probes), bad programs are reported as "file:line: what is wrong", and
 * the generated .eh_frame says what libdw reads back at every instruction
 * of the prologue, body and epilogue, in the host's DWARF register numbers.
 */
#include "config.h"

#include <check.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/jit.h"
#include "tests/check-subr.h"

static const char demo[] =
	"fn add(a, b) { return a + b; }\n"
	"fn sum(n) { var s = 0; var i = 0; while (i < n) { s = s + i; i = i + 1; } return s; }\n"
	"fn fib(n) {\n"
	"  if (n < 2) { return n; }\n"
	"  return fib(n - 1) + fib(n - 2);\n"
	"}\n"
	"fn gcd(a, b) { while (b != 0) { var t = a % b; a = b; b = t; } return a; }\n"
	"fn nested(n) { var c = 0; var i = 0; while (i < n) { var j = 0;\n"
	"  while (j < n) { c = add(c, (i * j) % 7); j = j + 1; } i = i + 1; } return c; }\n"
	"fn div(a, b) { return a / b; }\n"
	"fn mod(a, b) { return a % b; }\n"
	"fn cmp(a, b) { return (a < b) * 1 + (a <= b) * 2 + (a == b) * 4 + (a != b) * 8\n"
	"  + (a >= b) * 16 + (a > b) * 32 + !a * 64 + -a * 128; }\n"
	"fn six(a, b, c, d, e, f) { return a - b * 2 + c * 3 - d * 4 + e * 5 - f * 6; }\n"
	"fn deep(n) { if (n == 0) { return 0; } return 1 + deep(n - 1); }\n"
	"fn big() { return 1000000000000 + 1; }\n"
	"fn k(i) { if (i == 0) { return 0; } if (i == 1) { return 65536; }\n"
	"  if (i == 2) { return 4294967295; } if (i == 3) { return 9223372036854775807; }\n"
	"  if (i == 4) { return 281470681808895; } return 0 - 4294967296; }\n"
	"fn nothing() { var x = 1; }\n"
	"fn spaced(a) { a # assignment over a comment and a line break\n = a == 1; return a; }\n";

static struct jc_prog *prog;

static struct jc_prog *build(const char *text, int instrument)
{
	struct jc_prog *p = jc_prog_new();
	jitperf *jp;
	struct jitperf_options o = { .size = sizeof(o), .outputs = 0 };

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	ck_assert_msg(jc_parse(p, text, "/demo.jc") == 0, "%s", p->err);
	ck_assert_msg(jc_parse_finish(p) == 0, "%s", p->err);
	if (instrument)
		ck_assert_int_eq(jc_instrument(p), 0);
	ck_assert_msg(jc_compile(p, jp) == 0, "%s", p->err);
	ck_assert_int_eq(jitperf_close(jp), 0);
	return p;
}

static int64_t call(const char *name, int64_t a, int64_t b)
{
	struct jc_func *f = jc_find(prog, name);

	ck_assert_ptr_nonnull(f);
	return jc_entry_of(prog, f)(a, b, 0, 0, 0, 0);
}

static void plain_setup(void) { prog = build(demo, 0); }
static void probed_setup(void) { prog = build(demo, 1); }
static void teardown(void) { jc_prog_free(prog); prog = NULL; }

START_TEST(test_results)
{
	ck_assert_int_eq(call("add", 40, 2), 42);
	ck_assert_int_eq(call("sum", 100, 0), 4950);
	ck_assert_int_eq(call("fib", 20, 0), 6765);
	ck_assert_int_eq(call("fib", 1, 0), 1);
	ck_assert_int_eq(call("gcd", 1071, 462), 21);
	ck_assert_int_eq(call("nested", 10, 0), 219);
	ck_assert_int_eq(call("deep", 10000, 0), 10000);
	ck_assert_int_eq(call("big", 0, 0), 1000000000001);
	/* constants whose 16-bit halves are 0, 0xffff or neither (AArch64's movz/movn/movk) */
	ck_assert_int_eq(call("k", 0, 0), 0);
	ck_assert_int_eq(call("k", 1, 0), 65536);
	ck_assert_int_eq(call("k", 2, 0), 4294967295);
	ck_assert_int_eq(call("k", 3, 0), INT64_MAX);
	ck_assert_int_eq(call("k", 4, 0), 0xffff0000ffffLL);
	ck_assert_int_eq(call("k", 5, 0), -4294967296LL);
	ck_assert_int_eq(call("nothing", 0, 0), 0);
	ck_assert_int_eq(call("spaced", 1, 0), 1);
	ck_assert_int_eq(jc_entry_of(prog, jc_find(prog, "six"))(1, 2, 3, 4, 5, 6),
			 1 - 4 + 9 - 16 + 25 - 36);
}
END_TEST

START_TEST(test_division)
{
	ck_assert_int_eq(call("div", -7, 2), -3);
	ck_assert_int_eq(call("mod", -7, 3), -1);
	ck_assert_int_eq(call("div", 7, 0), 0);        /* defined as 0, no SIGFPE */
	ck_assert_int_eq(call("mod", 7, 0), 0);
	ck_assert_int_eq(call("div", INT64_MIN, -1), INT64_MIN);  /* wraps, no trap */
	ck_assert_int_eq(call("mod", INT64_MIN, -1), 0);
	ck_assert_int_eq(call("div", 9, -1), -9);
}
END_TEST

START_TEST(test_compare)
{
	ck_assert_int_eq(call("cmp", 1, 2), 1 + 2 + 8 - 128);
	ck_assert_int_eq(call("cmp", 2, 2), 2 + 4 + 16 - 256);
	ck_assert_int_eq(call("cmp", 3, 2), 8 + 16 + 32 - 384);
	ck_assert_int_eq(call("cmp", 0, 2), 1 + 2 + 8 + 64);
}
END_TEST

/* Probes are calls emitted into the code: results must not change. */
START_TEST(test_probe_code)
{
	struct jc_func *fib = jc_find(prog, "fib");

	ck_assert(fib->instrumented);
	ck_assert_uint_ne(fib->probe, 0);
	/* entry, two returns, the implicit "return 0": 4 sites, each with the
	 * id in its call of the library; on x86-64 the entry's inline counting
	 * path has it 3 times more (calls, next, calls again) */
#ifdef __x86_64__
	ck_assert_uint_eq(fib->nprobe_fix, 1 * 4 + 3 * 1);
#else
	ck_assert_uint_eq(fib->nprobe_fix, 1 * 4);
#endif
}
END_TEST

static void expect_error(const char *text, const char *msg)
{
	struct jc_prog *p = jc_prog_new();
	int err = jc_parse(p, text, "bad.jc");

	if (!err)
		err = jc_parse_finish(p);
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_str_eq(p->err, msg);
	jc_prog_free(p);
}

START_TEST(test_errors)
{
	expect_error("fn f() {\n  return x;\n}\n", "bad.jc:2: unknown variable 'x'");
	expect_error("fn f() { return g(1); }\n", "bad.jc:1: unknown function 'g'");
	expect_error("fn g(a) { return a; }\n\nfn f() { return g(); }\n",
		     "bad.jc:3: 'g' takes 1 arguments, not 0");
	expect_error("fn f() {\n return 1;\n", "bad.jc:3: missing '}' at end of file");
	expect_error("fn f() { return 1 $ 2; }", "bad.jc:1: unexpected character '$'");
	expect_error("x = 1;", "bad.jc:1: expected 'fn' to start a function");
	expect_error("fn f() {}\nfn f() {}", "bad.jc:2: function 'f' is already defined");
	expect_error("fn f(a, a) {}", "bad.jc:1: 'a' is already defined in 'f'");
	expect_error("fn f(a,b,c,d,e,f,g) {}", "bad.jc:1: more than 6 parameters");
	expect_error("fn f() { return 99999999999999999999; }", "bad.jc:1: number too large");
	expect_error("fn f() { return (1; }", "bad.jc:1: expected ')'");
}
END_TEST

/*
 * Unwind info: put fib's code and the .eh_frame jc_ehframe made for it into
 * an ELF file at the addresses perf inject --jit uses (code at 0x80, the
 * .eh_frame at ALIGN_8 after it), and ask libdw for the CFA rule and where
 * %rbp is at every instruction.
 */
static char *write_elf(const struct jc_func *f, uint64_t code_addr, uint64_t eh_addr)
{
	static const char names[] = "\0.text\0.eh_frame\0.shstrtab";
	char *path = strdup("/tmp/check_example-XXXXXX");
	const void *bufs[3] = { prog->code + f->off, prog->code + f->eh_off, names };
	size_t sizes[3] = { f->len, f->eh_len, sizeof(names) };
	uint64_t addrs[3] = { code_addr, eh_addr, 0 };
	unsigned name_off[3] = { 1, 7, 17 };
	Elf64_Ehdr *eh;
	Elf *e;
	int fd;

	ck_assert_ptr_nonnull(path);
	ck_assert_int_ge(fd = mkstemp(path), 0);
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	ck_assert_ptr_nonnull(e = elf_begin(fd, ELF_C_WRITE, NULL));
	ck_assert_ptr_nonnull(eh = elf64_newehdr(e));
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
#ifdef __aarch64__
	eh->e_machine = EM_AARCH64;
#else
	eh->e_machine = EM_X86_64;
#endif
	eh->e_type = ET_DYN;
	eh->e_version = EV_CURRENT;
	for (int i = 0; i < 3; i++) {
		Elf_Scn *scn = elf_newscn(e);
		Elf_Data *d = elf_newdata(scn);
		Elf64_Shdr *sh = elf64_getshdr(scn);

		d->d_buf = (void *)bufs[i];
		d->d_size = sizes[i];
		d->d_align = 8;
		d->d_type = ELF_T_BYTE;
		sh->sh_name = name_off[i];
		sh->sh_type = i < 2 ? SHT_PROGBITS : SHT_STRTAB;
		sh->sh_flags = i < 2 ? SHF_ALLOC : 0;
		sh->sh_addr = addrs[i];
		if (i == 2)
			eh->e_shstrndx = (Elf64_Half)elf_ndxscn(scn);
	}
	ck_assert_int_gt(elf_update(e, ELF_C_WRITE), 0);
	elf_end(e);
	close(fd);
	return path;
}

/* The DWARF numbers the host's ABI uses: the test states them itself
 * rather than trusting jc_target. */
#ifdef __aarch64__
enum { SP = 31, FP = 29, RA = 30, CFA_ENTRY = 0 };     /* sp, x29, x30; no push at a call */
#else
enum { SP = 7, FP = 6, RA = 16, CFA_ENTRY = 8 };       /* %rsp, %rbp, rip; call pushed 8 */
#endif

/* Where register regno is: CFA+cfa_off (cfa_off != 0), or the caller's
 * value (0); "same value" and "undefined" both read as no ops here. */
static void expect_saved(Dwarf_Frame *frame, uint64_t pc, int regno, int cfa_off)
{
	Dwarf_Op *ops, mem[3];
	size_t nops;

	ck_assert_int_eq(dwarf_frame_register(frame, regno, mem, &ops, &nops), 0);
	if (cfa_off) {
		ck_assert_msg(nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
			      (int64_t)ops[1].number == cfa_off, "pc %#lx: r%d not at CFA%+d",
			      (unsigned long)pc, regno, cfa_off);
	} else {
		ck_assert_msg(nops == 0, "pc %#lx: r%d should be the caller's", (unsigned long)pc,
			      regno);
	}
}

/* CFA = reg + off; rbp_saved: the frame pointer saved at CFA-16 (else the
 * caller's value), and on AArch64 x30 at CFA-8 with it */
static void expect_frame(Dwarf_CFI *cfi, uint64_t pc, int reg, int off, int rbp_saved)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;

	ck_assert_msg(dwarf_cfi_addrframe(cfi, pc, &frame) == 0, "no frame at %#lx: %s",
		      (unsigned long)pc, dwarf_errmsg(-1));
	ck_assert_int_eq(dwarf_frame_cfa(frame, &ops, &nops), 0);
	ck_assert_uint_eq(nops, 1);
	ck_assert_uint_eq(ops[0].atom, DW_OP_bregx);     /* libdw's form of "reg + off" */
	ck_assert_msg(ops[0].number == (Dwarf_Word)reg && (int64_t)ops[0].number2 == off,
		      "pc %#lx: CFA is r%ld%+ld, expected r%d%+d", (unsigned long)pc,
		      (long)ops[0].number, (long)ops[0].number2, reg, off);
	expect_saved(frame, pc, FP, rbp_saved ? -16 : 0);
#ifdef __aarch64__
	expect_saved(frame, pc, RA, rbp_saved ? -8 : 0);
#else
	expect_saved(frame, pc, RA, -8);                 /* the call pushed it */
#endif
	free(frame);
}

START_TEST(test_unwind_table)
{
	static const char *const names[] = { "fib", "nested", "six", "nothing" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		const struct jc_func *f = jc_find(prog, names[k]);
		uint64_t lo = 0x80, eh_addr = jc_ehframe_addr(lo, f->len);
		char *path = write_elf(f, lo, eh_addr);
		int fd = open(path, O_RDONLY);
		Elf *e = elf_begin(fd, ELF_C_READ, NULL);
		Dwarf_CFI *cfi = dwarf_getcfi_elf(e);
		Dwarf_Frame *frame;

		ck_assert_ptr_nonnull(cfi);
		ck_assert_uint_eq(f->eh_off - f->off, eh_addr - lo);   /* same place in memory */
		for (uint64_t pc = lo; pc < lo + f->len; pc++) {
			size_t o = pc - lo;

			if (o < f->frame.push_end)
				expect_frame(cfi, pc, SP, CFA_ENTRY, 0);
			else if (o < f->frame.mov_end)
				expect_frame(cfi, pc, SP, 16, 1);
			else if (o < f->frame.leave_end)
				expect_frame(cfi, pc, FP, 16, 1);
			else
				expect_frame(cfi, pc, SP, CFA_ENTRY, 0);
		}
		ck_assert_int_ne(dwarf_cfi_addrframe(cfi, lo + f->len, &frame), 0);
		dwarf_cfi_end(cfi);
		elf_end(e);
		close(fd);
		unlink(path);
		free(path);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("Example JIT");
	TCase *tc;

	tc = tcase_create("Generated code");
	tcase_add_checked_fixture(tc, plain_setup, teardown);
	tcase_add_test(tc, test_results);
	tcase_add_test(tc, test_division);
	tcase_add_test(tc, test_compare);
	suite_add_tcase(s, tc);

	tc = tcase_create("Instrumented code");
	tcase_add_checked_fixture(tc, probed_setup, teardown);
	tcase_add_test(tc, test_results);
	tcase_add_test(tc, test_division);
	tcase_add_test(tc, test_compare);
	tcase_add_test(tc, test_probe_code);
	suite_add_tcase(s, tc);

	tc = tcase_create("Unwind info");
	tcase_add_checked_fixture(tc, probed_setup, teardown);
	tcase_add_test(tc, test_unwind_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("Source errors");
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
