/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Check suite for the example JIT: the generated x86-64 code computes the
 * right results (with and without probes), bad programs are reported as
 * "file:line: what is wrong", and the generated .eh_frame says what libdw
 * reads back at every instruction of the prologue, body and epilogue.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit.h"

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
	"fn nothing() { var x = 1; }\n";

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
	ck_assert_int_eq(call("nothing", 0, 0), 0);
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
	ck_assert_uint_eq(fib->nprobe_ids, 4);  /* entry, two returns, the implicit "return 0" */
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

	tc = tcase_create("Source errors");
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
