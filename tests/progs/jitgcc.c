/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitgcc: a libgccjit JIT that compiles each function into a
 * gcc_jit_result of its own -- a shared object libgccjit writes to a
 * temporary directory, loads with dlopen and removes -- and registers it
 * with jitperf_default(), as a method JIT built on libgccjit does.
 *
 *   jitgcc N MS
 *
 * Compiles gj_f0 .. gj_f<N-1> (int f(int n): a loop of n steps, each with
 * a constant of its own), one context each, and runs each MS ms of its
 * thread's CPU time right after it is compiled.  The code's size is the symbol's in the loaded
 * object (dladdr1).  Exits 77 on other architectures.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <libgccjit.h>

#include "jitperf.h"

typedef int (*loop_fn)(int);

/* the thread's CPU time: its share of cpu-clock samples does not depend
 * on what else the machine runs */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* int NAME(int n) { int s = 0; for (int i = 0; i < n; i++) s = s * 31 + (i ^ K); return s; } */
static gcc_jit_result *compile(const char *name, int k)
{
	gcc_jit_context *c = gcc_jit_context_acquire();
	gcc_jit_type *int_t = gcc_jit_context_get_type(c, GCC_JIT_TYPE_INT);
	gcc_jit_param *n = gcc_jit_context_new_param(c, NULL, int_t, "n");
	gcc_jit_function *f = gcc_jit_context_new_function(c, NULL, GCC_JIT_FUNCTION_EXPORTED, int_t,
							   name, 1, &n, 0);
	gcc_jit_lvalue *s = gcc_jit_function_new_local(f, NULL, int_t, "s");
	gcc_jit_lvalue *i = gcc_jit_function_new_local(f, NULL, int_t, "i");
	gcc_jit_block *entry = gcc_jit_function_new_block(f, "entry");
	gcc_jit_block *cond = gcc_jit_function_new_block(f, "cond");
	gcc_jit_block *body = gcc_jit_function_new_block(f, "body");
	gcc_jit_block *done = gcc_jit_function_new_block(f, "done");
	gcc_jit_rvalue *step;
	gcc_jit_result *r;

	gcc_jit_context_set_int_option(c, GCC_JIT_INT_OPTION_OPTIMIZATION_LEVEL, 1);
	gcc_jit_block_add_assignment(entry, NULL, s, gcc_jit_context_zero(c, int_t));
	gcc_jit_block_add_assignment(entry, NULL, i, gcc_jit_context_zero(c, int_t));
	gcc_jit_block_end_with_jump(entry, NULL, cond);
	gcc_jit_block_end_with_conditional(cond, NULL,
		gcc_jit_context_new_comparison(c, NULL, GCC_JIT_COMPARISON_LT, gcc_jit_lvalue_as_rvalue(i),
					       gcc_jit_param_as_rvalue(n)), body, done);
	step = gcc_jit_context_new_binary_op(c, NULL, GCC_JIT_BINARY_OP_PLUS, int_t,
		gcc_jit_context_new_binary_op(c, NULL, GCC_JIT_BINARY_OP_MULT, int_t,
					      gcc_jit_lvalue_as_rvalue(s),
					      gcc_jit_context_new_rvalue_from_int(c, int_t, 31)),
		gcc_jit_context_new_binary_op(c, NULL, GCC_JIT_BINARY_OP_BITWISE_XOR, int_t,
					      gcc_jit_lvalue_as_rvalue(i),
					      gcc_jit_context_new_rvalue_from_int(c, int_t, k)));
	gcc_jit_block_add_assignment(body, NULL, s, step);
	gcc_jit_block_add_assignment_op(body, NULL, i, GCC_JIT_BINARY_OP_PLUS, gcc_jit_context_one(c, int_t));
	gcc_jit_block_end_with_jump(body, NULL, cond);
	gcc_jit_block_end_with_return(done, NULL, gcc_jit_lvalue_as_rvalue(s));
	r = gcc_jit_context_compile(c);
	gcc_jit_context_release(c);
	return r;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	double secs = argc > 2 ? atof(argv[2]) / 1e3 : 0.15;
	gcc_jit_result **results = calloc(n > 0 ? n : 1, sizeof(*results));
	volatile unsigned sink = 0;    /* wraps: only kept from being optimized out */

#ifndef __x86_64__
	return 77;
#endif
	if (!results || argc != 3 || n < 1) {
		fprintf(stderr, "usage: jitgcc N MS\n");
		return 2;
	}
	for (int k = 0; k < n; k++) {
		char name[32];
		const ElfW(Sym) *sym = NULL;
		Dl_info info;
		loop_fn f;
		double end;
		int err;

		snprintf(name, sizeof(name), "gj_f%d", k);
		results[k] = compile(name, k + 1);
		f = results[k] ? (loop_fn)gcc_jit_result_get_code(results[k], name) : NULL;
		if (!f || !dladdr1((void *)f, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) {
			fprintf(stderr, "jitgcc: %s: not compiled, or no size\n", name);
			return 1;
		}
		if ((err = jitperf_code_load(jitperf_default(), name, (void *)f, sym->st_size, NULL))) {
			fprintf(stderr, "jitgcc: %s: %s\n", name, jitperf_strerror(err));
			return 1;
		}
		for (end = now() + secs; now() < end;)
			sink += (unsigned)f(20000);
	}
	for (int k = 0; k < n; k++)
		gcc_jit_result_release(results[k]);
	free(results);
	return 0;
}
