/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * codegen_x86_64.c - tree IR to x86-64 machine code.
 *
 * A plain stack machine: every expression leaves its value in %rax,
 * binary operators park the left operand on the stack.  Variables live in
 * the frame at -8*(slot+1)(%rbp).  Every function keeps a frame pointer
 * (push %rbp; mov %rsp,%rbp) so perf -g walks through it, and has a single
 * epilogue (leave; ret) at its end that every return jumps to, which keeps
 * the unwind table in ehframe.c to four rows.  Calls between JIT functions
 * are direct "call rel32"; probes call the exported jitperf_enter /
 * jitperf_exit through %rax.  %rsp is 16-byte aligned at every call.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

struct cg {
	struct jc_prog *p;
	struct jc_func *f;
	struct jc_buf  *out;
	int             depth;      /* 8-byte pushes outstanding since the prologue */
	size_t         *rets;       /* rel32 of each "jmp epilogue" */
	size_t          nrets, caprets;
	int             last_line;
	int             oom;
};

static void emit(struct cg *g, const void *bytes, size_t n)
{
	struct jc_buf *o = g->out;

	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;
		uint8_t *b;

		while (cap < o->len + n)
			cap *= 2;
		if (!(b = realloc(o->b, cap))) {
			g->oom = 1;
			return;
		}
		o->b = b;
		o->cap = cap;
	}
	memcpy(o->b + o->len, bytes, n);
	o->len += n;
}

#define EMIT(g, ...) do { static const uint8_t b_[] = { __VA_ARGS__ }; emit(g, b_, sizeof(b_)); } while (0)

static void emit32(struct cg *g, uint32_t v)
{
	uint8_t b[4] = { v, v >> 8, v >> 16, v >> 24 };

	emit(g, b, 4);
}

static void emit64(struct cg *g, uint64_t v)
{
	emit32(g, (uint32_t)v);
	emit32(g, (uint32_t)(v >> 32));
}

static void put32(struct cg *g, size_t at, uint32_t v)
{
	if (g->oom)
		return;
	for (int i = 0; i < 4; i++)
		g->out->b[at + i] = (uint8_t)(v >> (8 * i));
}

/* Point the rel32 at `at` to the current position. */
static void land(struct cg *g, size_t at)
{
	put32(g, at, (uint32_t)(g->out->len - (at + 4)));
}

static size_t here(struct cg *g)
{
	return g->out->len;
}

static int slot_disp(struct cg *g, int slot)
{
	return -8 * (slot + 1);
}

static void append(struct cg *g, void **arr, size_t *n, size_t elem, const void *v)
{
	void *a = realloc(*arr, (*n + 1) * elem);

	if (!a) {
		g->oom = 1;
		return;
	}
	memcpy((char *)a + *n * elem, v, elem);
	*arr = a;
	(*n)++;
}

static void mark_line(struct cg *g, int line)
{
	struct jc_line_mark m = { here(g) - g->f->off, line };

	if (line == g->last_line)
		return;
	g->last_line = line;
	append(g, (void **)&g->f->lines, &g->f->nlines, sizeof(m), &m);
}

/* mov $id,%edi (patched at link time); mov $fn,%rax; call *%rax */
static void probe_call(struct cg *g, void (*fn)(jitperf_fn))
{
	size_t at;

	EMIT(g, 0xbf);
	at = here(g) - g->f->off;
	append(g, (void **)&g->f->probe_ids, &g->f->nprobe_ids, sizeof(at), &at);
	emit32(g, 0);
	EMIT(g, 0x48, 0xb8);
	emit64(g, (uint64_t)(uintptr_t)fn);
	EMIT(g, 0xff, 0xd0);
}

static void push_rax(struct cg *g)
{
	EMIT(g, 0x50);
	g->depth++;
}

static void pop_rax(struct cg *g)
{
	EMIT(g, 0x58);
	g->depth--;
}

static void expr(struct cg *g, const struct jc_node *n);

static void division(struct cg *g, int op)
{
	size_t to_zero, to_div, to_end1, to_end2;

	/* x / 0 = x % 0 = 0, and INT64_MIN / -1 must not trap: test both first */
	EMIT(g, 0x48, 0x85, 0xc9);              /* test %rcx,%rcx */
	EMIT(g, 0x74, 0);                       /* jz zero */
	to_zero = here(g);
	EMIT(g, 0x48, 0x83, 0xf9, 0xff);        /* cmp $-1,%rcx */
	EMIT(g, 0x75, 0);                       /* jne div */
	to_div = here(g);
	if (op == '/')
		EMIT(g, 0x48, 0xf7, 0xd8);      /* neg %rax */
	else
		EMIT(g, 0x31, 0xc0);            /* xor %eax,%eax */
	EMIT(g, 0xeb, 0);                       /* jmp end */
	to_end1 = here(g);
	if (!g->oom)
		g->out->b[to_div - 1] = (uint8_t)(here(g) - to_div);
	EMIT(g, 0x48, 0x99);                    /* cqo */
	EMIT(g, 0x48, 0xf7, 0xf9);              /* idiv %rcx */
	if (op == '%')
		EMIT(g, 0x48, 0x89, 0xd0);      /* mov %rdx,%rax */
	EMIT(g, 0xeb, 0);                       /* jmp end */
	to_end2 = here(g);
	if (!g->oom)
		g->out->b[to_zero - 1] = (uint8_t)(here(g) - to_zero);
	EMIT(g, 0x31, 0xc0);                    /* zero: xor %eax,%eax */
	if (!g->oom) {
		g->out->b[to_end1 - 1] = (uint8_t)(here(g) - to_end1);
		g->out->b[to_end2 - 1] = (uint8_t)(here(g) - to_end2);
	}
}

static void binary(struct cg *g, const struct jc_node *n)
{
	uint8_t setcc = 0;

	expr(g, n->a);
	push_rax(g);
	expr(g, n->b);
	EMIT(g, 0x48, 0x89, 0xc1);              /* mov %rax,%rcx */
	pop_rax(g);                             /* %rax = left, %rcx = right */
	switch (n->op) {
	case '+': EMIT(g, 0x48, 0x01, 0xc8); return;        /* add %rcx,%rax */
	case '-': EMIT(g, 0x48, 0x29, 0xc8); return;        /* sub %rcx,%rax */
	case '*': EMIT(g, 0x48, 0x0f, 0xaf, 0xc1); return;  /* imul %rcx,%rax */
	case '/': case '%': division(g, n->op); return;
	case '<': setcc = 0x9c; break;
	case '>': setcc = 0x9f; break;
	case JC_OP_LE: setcc = 0x9e; break;
	case JC_OP_GE: setcc = 0x9d; break;
	case JC_OP_EQ: setcc = 0x94; break;
	case JC_OP_NE: setcc = 0x95; break;
	}
	EMIT(g, 0x48, 0x39, 0xc8);              /* cmp %rcx,%rax */
	{
		uint8_t b[3] = { 0x0f, setcc, 0xc0 };   /* setcc %al */

		emit(g, b, 3);
	}
	EMIT(g, 0x0f, 0xb6, 0xc0);              /* movzbl %al,%eax */
}

static void call(struct cg *g, const struct jc_node *n)
{
	static const uint8_t pop_arg[JC_MAX_PARAMS][2] = {
		{ 0x5f }, { 0x5e }, { 0x5a }, { 0x59 }, { 0x41, 0x58 }, { 0x41, 0x59 },
	};
	int pad = g->depth % 2;
	struct jc_fixup fx;

	if (pad) {
		EMIT(g, 0x48, 0x83, 0xec, 0x08);    /* sub $8,%rsp: align the call */
		g->depth++;
	}
	for (int i = 0; i < n->nargs; i++) {
		expr(g, n->args[i]);
		push_rax(g);
	}
	for (int i = n->nargs - 1; i >= 0; i--) {
		emit(g, pop_arg[i], i >= 4 ? 2 : 1);
		g->depth--;
	}
	EMIT(g, 0xe8);                          /* call rel32 */
	fx.off = here(g) - g->f->off;
	fx.callee = n->callee;
	append(g, (void **)&g->f->calls, &g->f->ncalls, sizeof(fx), &fx);
	emit32(g, 0);
	if (pad) {
		EMIT(g, 0x48, 0x83, 0xc4, 0x08);    /* add $8,%rsp */
		g->depth--;
	}
}

static void expr(struct cg *g, const struct jc_node *n)
{
	switch (n->kind) {
	case JC_NUM:
		if (n->num >= INT32_MIN && n->num <= INT32_MAX) {
			EMIT(g, 0x48, 0xc7, 0xc0);  /* mov $simm32,%rax */
			emit32(g, (uint32_t)n->num);
		} else {
			EMIT(g, 0x48, 0xb8);        /* movabs $imm64,%rax */
			emit64(g, (uint64_t)n->num);
		}
		break;
	case JC_VAR:
		EMIT(g, 0x48, 0x8b, 0x85);          /* mov disp32(%rbp),%rax */
		emit32(g, (uint32_t)slot_disp(g, n->slot));
		break;
	case JC_UNARY:
		expr(g, n->a);
		if (n->op == '-') {
			EMIT(g, 0x48, 0xf7, 0xd8);  /* neg %rax */
		} else {
			EMIT(g, 0x48, 0x85, 0xc0);  /* test %rax,%rax */
			EMIT(g, 0x0f, 0x94, 0xc0);  /* sete %al */
			EMIT(g, 0x0f, 0xb6, 0xc0);  /* movzbl %al,%eax */
		}
		break;
	case JC_BINARY:
		binary(g, n);
		break;
	case JC_CALL:
		call(g, n);
		break;
	default:
		break;
	}
}

static void statement(struct cg *g, const struct jc_node *n)
{
	size_t at, top;

	if (n->kind != JC_BLOCK)
		mark_line(g, n->line);
	switch (n->kind) {
	case JC_BLOCK:
		for (int i = 0; i < n->nargs; i++)
			statement(g, n->args[i]);
		break;
	case JC_EXPR:
		expr(g, n->a);
		break;
	case JC_ASSIGN:
		expr(g, n->a);
		EMIT(g, 0x48, 0x89, 0x85);          /* mov %rax,disp32(%rbp) */
		emit32(g, (uint32_t)slot_disp(g, n->slot));
		break;
	case JC_IF:
		expr(g, n->a);
		EMIT(g, 0x48, 0x85, 0xc0, 0x0f, 0x84); /* test %rax,%rax; jz else */
		at = here(g);
		emit32(g, 0);
		statement(g, n->b);
		if (n->c) {
			size_t skip;

			EMIT(g, 0xe9);              /* jmp end */
			skip = here(g);
			emit32(g, 0);
			land(g, at);
			statement(g, n->c);
			land(g, skip);
		} else {
			land(g, at);
		}
		break;
	case JC_WHILE:
		top = here(g);
		expr(g, n->a);
		EMIT(g, 0x48, 0x85, 0xc0, 0x0f, 0x84); /* test %rax,%rax; jz end */
		at = here(g);
		emit32(g, 0);
		statement(g, n->b);
		EMIT(g, 0xe9);                      /* jmp top */
		emit32(g, (uint32_t)(top - (here(g) + 4)));
		land(g, at);
		break;
	case JC_RETURN:
		expr(g, n->a);
		if (n->probe) {
			/* keep the result in the scratch slot across jitperf_exit */
			int scratch = slot_disp(g, g->f->nslots);

			EMIT(g, 0x48, 0x89, 0x85);
			emit32(g, (uint32_t)scratch);
			probe_call(g, jitperf_exit);
			EMIT(g, 0x48, 0x8b, 0x85);
			emit32(g, (uint32_t)scratch);
		}
		EMIT(g, 0xe9);                      /* jmp epilogue */
		at = here(g);
		append(g, (void **)&g->rets, &g->nrets, sizeof(at), &at);
		emit32(g, 0);
		break;
	case JC_PROBE_ENTER:
		probe_call(g, jitperf_enter);
		break;
	default:
		break;
	}
}

int jc_codegen(struct jc_prog *p, struct jc_func *f, struct jc_buf *out)
{
	static const uint8_t store_arg[JC_MAX_PARAMS][3] = {
		{ 0x48, 0x89, 0xbd }, { 0x48, 0x89, 0xb5 }, { 0x48, 0x89, 0x95 },
		{ 0x48, 0x89, 0x8d }, { 0x4c, 0x89, 0x85 }, { 0x4c, 0x89, 0x8d },
	};
	struct cg g = { .p = p, .f = f, .out = out, .last_line = -1 };
	uint32_t frame = (uint32_t)((8 * (f->nslots + 1) + 15) & ~15);

	f->off = out->len;
	mark_line(&g, f->line);
	EMIT(&g, 0x55);                             /* push %rbp */
	f->frame.push_end = here(&g) - f->off;
	EMIT(&g, 0x48, 0x89, 0xe5);                 /* mov %rsp,%rbp */
	f->frame.mov_end = here(&g) - f->off;
	EMIT(&g, 0x48, 0x81, 0xec);                 /* sub $frame,%rsp */
	emit32(&g, frame);
	for (int i = 0; i < f->nparams; i++) {      /* spill the arguments */
		emit(&g, store_arg[i], 3);
		emit32(&g, (uint32_t)slot_disp(&g, i));
	}
	statement(&g, f->body);
	for (size_t i = 0; i < g.nrets; i++)
		land(&g, g.rets[i]);
	EMIT(&g, 0xc9);                             /* leave */
	f->frame.leave_end = here(&g) - f->off;
	EMIT(&g, 0xc3);                             /* ret */
	f->len = here(&g) - f->off;
	free(g.rets);
	return g.oom || out->oom ? -ENOMEM : 0;
}
