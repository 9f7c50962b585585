/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tiered_bytecode.c - tier 0's compiler: jitcalc's tree IR to the stack
 * bytecode tiered_interp.c runs.  One walk over the tree, a few
 * microseconds per function: the cheap tier a runtime starts with.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "tiered.h"

struct bc {
	struct tx_rt *rt;
	struct tx_fn *f;
	int64_t      *w;
	size_t        n, cap;
	int           depth, max_depth;
	int           err;
};

static size_t put(struct bc *b, int64_t v)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		int64_t *w = realloc(b->w, cap * sizeof(*w));

		if (!w) {
			b->err = -ENOMEM;
			return b->n;
		}
		b->w = w;
		b->cap = cap;
	}
	b->w[b->n] = v;
	return b->n++;
}

/* An op and how it changes the operand stack's depth. */
static void op(struct bc *b, enum tx_op o, int change)
{
	put(b, o);
	b->depth += change;
	if (b->depth > b->max_depth)
		b->max_depth = b->depth;
}

static int index_of(const struct tx_rt *rt, const struct jc_func *f)
{
	for (int i = 0; i < rt->prog->nfn; i++)
		if (rt->prog->fn[i] == f)
			return i;
	return -1;
}

static void expr(struct bc *b, const struct jc_node *n)
{
	static const struct { int op; enum tx_op tx; } binops[] = {
		{ '+', TX_ADD }, { '-', TX_SUB }, { '*', TX_MUL }, { '/', TX_DIV }, { '%', TX_MOD },
		{ '<', TX_LT }, { '>', TX_GT }, { JC_OP_LE, TX_LE }, { JC_OP_GE, TX_GE },
		{ JC_OP_EQ, TX_EQ }, { JC_OP_NE, TX_NE },
	};

	switch (n->kind) {
	case JC_NUM:
		op(b, TX_PUSH, 1);
		put(b, n->num);
		break;
	case JC_VAR:
		op(b, TX_LOAD, 1);
		put(b, n->slot);
		break;
	case JC_UNARY:
		expr(b, n->a);
		op(b, n->op == '-' ? TX_NEG : TX_NOT, 0);
		break;
	case JC_BINARY:
		expr(b, n->a);
		expr(b, n->b);
		for (size_t i = 0; i < sizeof(binops) / sizeof(binops[0]); i++)
			if (binops[i].op == n->op)
				op(b, binops[i].tx, -1);
		break;
	case JC_CALL:
		for (int i = 0; i < n->nargs; i++)
			expr(b, n->args[i]);
		op(b, TX_CALL, 1 - n->nargs);
		put(b, index_of(b->rt, n->callee));
		put(b, n->nargs);
		break;
	default:
		break;
	}
}

static void statement(struct bc *b, const struct jc_node *n)
{
	size_t at, top, skip;

	switch (n->kind) {
	case JC_BLOCK:
		for (int i = 0; i < n->nargs; i++)
			statement(b, n->args[i]);
		break;
	case JC_EXPR:
		expr(b, n->a);
		op(b, TX_POP, -1);
		break;
	case JC_ASSIGN:
		expr(b, n->a);
		op(b, TX_STORE, -1);
		put(b, n->slot);
		break;
	case JC_IF:
		expr(b, n->a);
		op(b, TX_JZ, -1);
		at = put(b, 0);
		statement(b, n->b);
		if (n->c) {
			op(b, TX_JMP, 0);
			skip = put(b, 0);
			if (!b->err)
				b->w[at] = (int64_t)b->n;
			statement(b, n->c);
			at = skip;
		}
		if (!b->err)
			b->w[at] = (int64_t)b->n;
		break;
	case JC_WHILE:
		top = b->n;
		expr(b, n->a);
		op(b, TX_JZ, -1);
		at = put(b, 0);
		statement(b, n->b);
		op(b, TX_JMP, 0);
		put(b, (int64_t)top);
		if (!b->err)
			b->w[at] = (int64_t)b->n;
		break;
	case JC_RETURN:
		expr(b, n->a);
		op(b, TX_RET, -1);
		break;
	default:            /* probes are the native tier's */
		break;
	}
}

int tx_bytecode(struct tx_rt *rt, struct tx_fn *f)
{
	struct jc_prog *p = rt->prog;
	struct bc b = { .rt = rt, .f = f };

	if (f->ir->nslots > TX_MAX_SLOTS) {
		snprintf(p->err, sizeof(p->err), "%s:%d: %s has over %d variables", f->ir->file,
			 f->ir->line, f->ir->name, TX_MAX_SLOTS);
		return -EINVAL;
	}
	statement(&b, f->ir->body);
	if (!b.err && b.max_depth > TX_MAX_STACK) {
		snprintf(p->err, sizeof(p->err), "%s:%d: %s nests expressions over %d deep",
			 f->ir->file, f->ir->line, f->ir->name, TX_MAX_STACK);
		b.err = -EINVAL;
	}
	if (b.err) {
		if (b.err == -ENOMEM)
			snprintf(p->err, sizeof(p->err), "bytecode of %s: out of memory", f->ir->name);
		free(b.w);
		return b.err;
	}
	f->code = b.w;
	f->ncode = b.n;
	return 0;
}
