/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * codegen_aarch64.c - tree IR to AArch64 (A64) machine code.
 *
 * The same stack machine as codegen_x86_64.c: every expression leaves its
 * value in x0, binary operators park the left operand on the stack (16
 * bytes a push, so sp stays 16-byte aligned, as AAPCS64 requires at every
 * access).  Variables live in the frame at x29 - 8*(slot+1).  Every
 * function keeps a frame record (stp x29, x30, [sp, #-16]!; mov x29, sp)
 * so perf -g walks through it, and has a single epilogue (mov sp, x29;
 * ldp x29, x30, [sp], #16; ret) that every return branches to, which
 * keeps ehframe.c's table to four rows.  Calls between JIT functions are
 * direct "bl"; calls of the library load its address into x16 (ip0).
 *
 * Probes (jitperf_enter(3)): JC_PROBES_INLINE and JC_PROBES_CHECK both
 * test jitperf__probe_active inline and call jitperf_enter/jitperf_exit
 * out of line, after the body; the counting path that x86-64 inlines
 * needs the thread pointer's TLS layout and is not emitted here.
 * JC_PROBES_CALL calls them unconditionally.  The id sits in a
 * movz/movk pair that jc_link_imm fills in.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

/* DWARF for AArch64: sp 31, x29 the frame pointer, x30 the return
 * address; instructions are 4 bytes; udf #0 between functions */
const struct jc_target jc_target = {
	.code_align = 4, .data_align = -8, .sp = 31, .fp = 29, .ra = 30,
	.cfa_entry = 0, .ra_saved = 1, .fill = 0x00,
};

enum { X0 = 0, X1 = 1, X2 = 2, X9 = 9, X16 = 16, X17 = 17, FP = 29, SP = 31, XZR = 31 };

/* condition codes */
enum { EQ = 0x0, NE = 0x1, GE = 0xa, LT = 0xb, GT = 0xc, LE = 0xd };

struct probe_tail {              /* out-of-line part of a probe site */
	size_t on;                  /* the "cbnz" that goes there */
	size_t back;                /* where it returns to */
	int    exit;
};

struct cg {
	struct jc_prog *p;
	struct jc_func *f;
	struct jc_buf  *out;
	size_t         *rets;       /* the "b epilogue" of each return */
	size_t          nrets;
	int             last_line;
	int             oom;
	struct probe_tail *tails;
	size_t          ntails;
};

static void ins(struct cg *g, uint32_t v)
{
	struct jc_buf *o = g->out;

	if (o->len + 4 > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;
		uint8_t *b = realloc(o->b, cap);

		if (!b) {
			g->oom = 1;
			return;
		}
		o->b = b;
		o->cap = cap;
	}
	for (int i = 0; i < 4; i++)
		o->b[o->len++] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void set32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static size_t here(struct cg *g)
{
	return g->out->len;
}

/* Set the offset of the branch at `at` (b, bl: imm26; cbz, cbnz: imm19) to `to`. */
static void patch_branch(uint8_t *code, size_t at, size_t to)
{
	uint32_t insn = get32(code + at);
	uint32_t words = (uint32_t)((int64_t)(to - at) / 4);

	if ((insn & 0x7c000000) == 0x14000000)
		insn = (insn & 0xfc000000) | (words & 0x3ffffff);
	else
		insn = (insn & 0xff00001f) | (words & 0x7ffff) << 5;
	set32(code + at, insn);
}

/* Point the branch at `at` to the current position. */
static void land(struct cg *g, size_t at)
{
	if (!g->oom)
		patch_branch(g->out->b, at, here(g));
}

void jc_link_call(uint8_t *code, size_t at, size_t target)
{
	patch_branch(code, at, target);
}

/* The id's movz at `at` gets its low half, the movk after it the high half. */
void jc_link_imm(uint8_t *code, size_t at, uint32_t v)
{
	for (int i = 0; i < 2; i++) {
		uint32_t insn = get32(code + at + 4 * i);

		set32(code + at + 4 * i, (insn & 0xffe0001f) | ((v >> (16 * i)) & 0xffff) << 5);
	}
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

/* mov xd, #v: movz (movn when most halves are 0xffff) of the first half
 * that is not the filler, then movk for the other such halves */
static void mov_imm(struct cg *g, int rd, uint64_t v)
{
	int ones = 0, start = 0;
	uint16_t skip;

	for (int i = 0; i < 4; i++)
		ones += (uint16_t)(v >> (16 * i)) == 0xffff;
	skip = ones >= 2 ? 0xffff : 0;
	while (start < 3 && (uint16_t)(v >> (16 * start)) == skip)
		start++;
	if ((uint16_t)(v >> (16 * start)) == skip)
		start = 0;                                  /* v is 0 or -1 */
	for (int i = start; i < 4; i++) {
		uint16_t h = (uint16_t)(v >> (16 * i));

		if (i == start && skip)                     /* movn xd, #~h, lsl 16*i */
			ins(g, 0x92800000 | (uint32_t)i << 21 | (uint32_t)(uint16_t)~h << 5 | rd);
		else if (i == start)                        /* movz xd, #h, lsl 16*i */
			ins(g, 0xd2800000 | (uint32_t)i << 21 | (uint32_t)h << 5 | rd);
		else if (h != skip)                         /* movk xd, #h, lsl 16*i */
			ins(g, 0xf2800000 | (uint32_t)i << 21 | (uint32_t)h << 5 | rd);
	}
}

/* ldr/str xt at x29 - 8*(slot+1): ldur/stur when it fits 9 bits, else through x9 */
static void slot_mem(struct cg *g, int slot, int load, int rt)
{
	uint32_t off = 8 * (uint32_t)(slot + 1);

	if (off <= 256) {
		ins(g, (load ? 0xf8400000 : 0xf8000000) | ((0u - off) & 0x1ff) << 12 | FP << 5 | rt);
		return;
	}
	mov_imm(g, X9, off);
	ins(g, 0xcb000000 | X9 << 16 | FP << 5 | X9);      /* sub x9, x29, x9 */
	ins(g, (load ? 0xf9400000 : 0xf9000000) | X9 << 5 | rt);
}

static void push_x0(struct cg *g)
{
	ins(g, 0xf81f0fe0);                                 /* str x0, [sp, #-16]! */
}

static void pop(struct cg *g, int rt)
{
	ins(g, 0xf84107e0 | rt);                            /* ldr xt, [sp], #16 */
}

static void cset(struct cg *g, int cond)
{
	ins(g, 0x9a9f07e0 | (uint32_t)(cond ^ 1) << 12);   /* cset x0, cond */
}

static size_t branch(struct cg *g, uint32_t insn)
{
	size_t at = here(g);

	ins(g, insn);
	return at;
}

/* The id of the function into w0: movz/movk, filled in at link time. */
static void id_w0(struct cg *g)
{
	struct jc_probe_fix fx = { here(g) - g->f->off, 1, 0 };

	append(g, (void **)&g->f->probe_fix, &g->f->nprobe_fix, sizeof(fx), &fx);
	ins(g, 0x52800000 | X0);                            /* movz w0, #id_lo */
	ins(g, 0x72a00000 | X0);                            /* movk w0, #id_hi, lsl 16 */
}

/* w0 = id; x16 = fn; blr x16 */
static void probe_call(struct cg *g, void (*fn)(jitperf_fn))
{
	id_w0(g);
	mov_imm(g, X16, (uint64_t)(uintptr_t)fn);
	ins(g, 0xd63f0200);                                 /* blr x16 */
}

/* x17 = &jitperf__probe_active; ldr w17, [x17]; cbnz w17 to a tail that
 * comes back here.  x0 (a return's result) is left alone. */
static void test_active(struct cg *g, int exit)
{
	struct probe_tail t = { 0, 0, exit };

	mov_imm(g, X17, (uint64_t)(uintptr_t)&jitperf__probe_active);
	ins(g, 0xb9400000 | X17 << 5 | X17);               /* ldr w17, [x17] */
	t.on = branch(g, 0x35000000 | X17);                 /* cbnz w17, tail */
	t.back = here(g);
	append(g, (void **)&g->tails, &g->ntails, sizeof(t), &t);
}

/* A probe site: the call itself (JC_PROBES_CALL) or the inline test. */
static void probe(struct cg *g, int exit)
{
	if (g->p->probe_code != JC_PROBES_CALL) {
		test_active(g, exit);
		return;
	}
	if (exit)
		slot_mem(g, g->f->nslots, 0, X0);           /* the result around the call */
	probe_call(g, exit ? jitperf_exit : jitperf_enter);
	if (exit)
		slot_mem(g, g->f->nslots, 1, X0);
}

/* The out-of-line calls of the probe sites, inside the frame (between the
 * body and the epilogue), so the unwind table's body row covers them. */
static void probe_tails(struct cg *g)
{
	for (size_t i = 0; i < g->ntails; i++) {
		struct probe_tail t = g->tails[i];

		land(g, t.on);
		if (t.exit)
			slot_mem(g, g->f->nslots, 0, X0);
		probe_call(g, t.exit ? jitperf_exit : jitperf_enter);
		if (t.exit)
			slot_mem(g, g->f->nslots, 1, X0);
		if (!g->oom)
			patch_branch(g->out->b, branch(g, 0x14000000), t.back);   /* b back */
	}
}

/* Start a loop on a cache line with NOPs, as the x86-64 backend does. */
static void align_loop(struct cg *g)
{
	while (here(g) % 64)
		ins(g, 0xd503201f);                         /* nop */
}

static void expr(struct cg *g, const struct jc_node *n);

static void binary(struct cg *g, const struct jc_node *n)
{
	expr(g, n->a);
	push_x0(g);
	expr(g, n->b);
	pop(g, X1);                                         /* x1 = left, x0 = right */
	switch (n->op) {
	case '+': ins(g, 0x8b000020); return;               /* add x0, x1, x0 */
	case '-': ins(g, 0xcb000020); return;               /* sub x0, x1, x0 */
	case '*': ins(g, 0x9b007c20); return;               /* mul x0, x1, x0 */
	/* sdiv gives x / 0 = 0 and INT64_MIN / -1 = INT64_MIN, without a trap:
	 * the language's definition */
	case '/': ins(g, 0x9ac00c20); return;               /* sdiv x0, x1, x0 */
	case '%':
		ins(g, 0x9ac00c22);                         /* sdiv x2, x1, x0 */
		ins(g, 0x9b008442);                         /* msub x2, x2, x0, x1 */
		ins(g, 0xf100001f);                         /* cmp x0, #0 */
		ins(g, 0x9a9f1040);                         /* csel x0, x2, xzr, ne: x % 0 = 0 */
		return;
	}
	ins(g, 0xeb00003f);                                 /* cmp x1, x0 */
	switch (n->op) {
	case '<': cset(g, LT); break;
	case '>': cset(g, GT); break;
	case JC_OP_LE: cset(g, LE); break;
	case JC_OP_GE: cset(g, GE); break;
	case JC_OP_EQ: cset(g, EQ); break;
	case JC_OP_NE: cset(g, NE); break;
	}
}

static void call(struct cg *g, const struct jc_node *n)
{
	struct jc_fixup fx;

	for (int i = 0; i < n->nargs; i++) {
		expr(g, n->args[i]);
		push_x0(g);
	}
	for (int i = n->nargs - 1; i >= 0; i--)
		pop(g, i);
	fx.off = here(g) - g->f->off;
	fx.callee = n->callee;
	append(g, (void **)&g->f->calls, &g->f->ncalls, sizeof(fx), &fx);
	ins(g, 0x94000000);                                 /* bl callee */
}

static void expr(struct cg *g, const struct jc_node *n)
{
	switch (n->kind) {
	case JC_NUM:
		mov_imm(g, X0, (uint64_t)n->num);
		break;
	case JC_VAR:
		slot_mem(g, n->slot, 1, X0);
		break;
	case JC_UNARY:
		expr(g, n->a);
		if (n->op == '-') {
			ins(g, 0xcb0003e0);                 /* neg x0, x0 */
		} else {
			ins(g, 0xf100001f);                 /* cmp x0, #0 */
			cset(g, EQ);
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
	size_t at, top, skip;

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
		slot_mem(g, n->slot, 0, X0);
		break;
	case JC_IF:
		expr(g, n->a);
		at = branch(g, 0xb4000000 | X0);            /* cbz x0, else */
		statement(g, n->b);
		if (n->c) {
			skip = branch(g, 0x14000000);       /* b end */
			land(g, at);
			statement(g, n->c);
			land(g, skip);
		} else {
			land(g, at);
		}
		break;
	case JC_WHILE:
		align_loop(g);
		top = here(g);
		expr(g, n->a);
		at = branch(g, 0xb4000000 | X0);            /* cbz x0, end */
		statement(g, n->b);
		if (!g->oom)
			patch_branch(g->out->b, branch(g, 0x14000000), top);   /* b top */
		land(g, at);
		break;
	case JC_RETURN:
		expr(g, n->a);
		if (n->probe)
			probe(g, 1);
		at = branch(g, 0x14000000);                 /* b epilogue */
		append(g, (void **)&g->rets, &g->nrets, sizeof(at), &at);
		break;
	case JC_PROBE_ENTER:
		probe(g, 0);
		break;
	default:
		break;
	}
}

int jc_codegen(struct jc_prog *p, struct jc_func *f, struct jc_buf *out)
{
	struct cg g = { .p = p, .f = f, .out = out, .last_line = -1 };
	/* slots and the scratch slot of a return, 16-byte aligned */
	uint32_t frame = (uint32_t)((8 * (f->nslots + 2) + 15) & ~15);

	f->off = out->len;
	mark_line(&g, f->line);
	ins(&g, 0xa9bf7bfd);                                /* stp x29, x30, [sp, #-16]! */
	f->frame.push_end = here(&g) - f->off;
	ins(&g, 0x910003fd);                                /* mov x29, sp */
	f->frame.mov_end = here(&g) - f->off;
	if (frame < 4096) {
		ins(&g, 0xd10003ff | frame << 10);          /* sub sp, sp, #frame */
	} else {
		mov_imm(&g, X9, frame);
		ins(&g, 0xcb2963ff);                        /* sub sp, sp, x9 */
	}
	for (int i = 0; i < f->nparams; i++)                /* spill the arguments */
		slot_mem(&g, i, 0, i);
	statement(&g, f->body);
	probe_tails(&g);
	for (size_t i = 0; i < g.nrets; i++)
		land(&g, g.rets[i]);
	ins(&g, 0x910003bf);                                /* mov sp, x29 */
	ins(&g, 0xa8c17bfd);                                /* ldp x29, x30, [sp], #16 */
	f->frame.leave_end = here(&g) - f->off;
	ins(&g, 0xd65f03c0);                                /* ret */
	f->len = here(&g) - f->off;
	free(g.rets);
	free(g.tails);
	return g.oom || out->oom ? -ENOMEM : 0;
}
