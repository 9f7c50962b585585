/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tiered_interp.c - tier 0: the bytecode eval loop, and the dispatch of a
 * call to a function's current tier.
 *
 * Every interpreted function runs in tx_eval, so perf's samples of all of
 * them land in this one C function.  tx_call enters it through the
 * function's trampoline (jitperf_trampoline), whose frame, named
 * func[interp], sits right under tx_eval's on the stack.  Arithmetic is
 * the native tier's: 64-bit wrapping, x / 0 = x % 0 = 0, comparisons give
 * 0 or 1.
 */
#include "config.h"

#include <stdatomic.h>
#include <string.h>

#include "tiered.h"

static int64_t divide(int64_t a, int64_t b, int mod)
{
	if (b == 0)
		return 0;
	if (b == -1)        /* INT64_MIN / -1 wraps and must not trap */
		return mod ? 0 : (int64_t)(0 - (uint64_t)a);
	return mod ? a % b : a / b;
}

/* noinline and with a frame: the trampoline's frame is its caller's */
__attribute__((noinline)) int64_t tx_eval(struct tx_fn *f, const int64_t *args)
{
	int64_t v[TX_MAX_SLOTS] = { 0 }, st[TX_MAX_STACK + 1];
	const int64_t *code = f->code;
	struct tx_fn *all = f->rt->fn;
	size_t pc = 0;
	int sp = 0;         /* st[sp - 1] is the top */
	int64_t a, b;

	memcpy(v, args, (size_t)f->ir->nparams * sizeof(v[0]));
	for (;;) {
		switch ((enum tx_op)code[pc++]) {
		case TX_PUSH: st[sp++] = code[pc++]; break;
		case TX_LOAD: st[sp++] = v[code[pc++]]; break;
		case TX_STORE: v[code[pc++]] = st[--sp]; break;
		case TX_POP: sp--; break;
		case TX_NEG: st[sp - 1] = (int64_t)(0 - (uint64_t)st[sp - 1]); break;
		case TX_NOT: st[sp - 1] = !st[sp - 1]; break;
#define BINARY(expr_) b = st[--sp]; a = st[sp - 1]; st[sp - 1] = (expr_); break
		case TX_ADD: BINARY((int64_t)((uint64_t)a + (uint64_t)b));
		case TX_SUB: BINARY((int64_t)((uint64_t)a - (uint64_t)b));
		case TX_MUL: BINARY((int64_t)((uint64_t)a * (uint64_t)b));
		case TX_DIV: BINARY(divide(a, b, 0));
		case TX_MOD: BINARY(divide(a, b, 1));
		case TX_LT: BINARY(a < b);
		case TX_GT: BINARY(a > b);
		case TX_LE: BINARY(a <= b);
		case TX_GE: BINARY(a >= b);
		case TX_EQ: BINARY(a == b);
		case TX_NE: BINARY(a != b);
#undef BINARY
		case TX_JMP: pc = (size_t)code[pc]; break;
		case TX_JZ: pc = st[--sp] ? pc + 1 : (size_t)code[pc]; break;
		case TX_CALL: {
			int64_t in[JC_MAX_PARAMS] = { 0 };
			int n = (int)code[pc + 1];

			sp -= n;
			memcpy(in, &st[sp], (size_t)n * sizeof(in[0]));
			st[sp++] = tx_call(&all[code[pc]], in);
			pc += 2;
			break;
		}
		case TX_RET: return st[sp - 1];
		}
	}
}

int64_t tx_call(struct tx_fn *f, const int64_t *args)
{
	jc_entry native = atomic_load_explicit(&f->native, memory_order_acquire);

	if (native) {
		f->calls_native++;
		return native(args[0], args[1], args[2], args[3], args[4], args[5]);
	}
	if (++f->calls_interp == f->rt->threshold)
		tx_tierup_request(f);
	return f->tramp(f, args);
}
