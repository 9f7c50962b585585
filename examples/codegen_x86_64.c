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
 * are direct "call rel32".  %rsp is 16-byte aligned at every call.
 *
 * Probes (jitperf_enter(3), GENERATED CODE): by default the code tests
 * jitperf__probe_active inline and, when a session counts calls, counts
 * the call itself, in code placed after the body, out of the way; only a
 * call the library must see (one to time, a thread's first) calls it,
 * through jitperf__enter_framed, and a byte of the function's frame
 * remembers that, so that its exit calls jitperf__exit_slow.  With nothing
 * recording a probe costs a load and a branch not taken at entry and a
 * compare and a branch at exit.  JC_PROBES_CHECK calls
 * jitperf_enter/jitperf_exit after the same inline test; JC_PROBES_CALL
 * calls them unconditionally, as a JIT that cannot do better would.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

struct probe_tail {              /* out-of-line part of a probe site */
	size_t on;                  /* rel32 of the "jnz" that goes there */
	size_t back;                /* where it returns to */
	int    exit;
};

struct cg {
	struct jc_prog *p;
	struct jc_func *f;
	struct jc_buf  *out;
	int             depth;      /* 8-byte pushes outstanding since the prologue */
	size_t         *rets;       /* rel32 of each "jmp epilogue" */
	size_t          nrets, caprets;
	int             last_line;
	int             oom;
	struct probe_tail *tails;
	size_t          ntails;
	int32_t         tls;        /* jitperf__tls from the thread pointer */
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

/* The 4 bytes emitted next become id * mul + add at link time. */
static void id32(struct cg *g, uint32_t mul, uint32_t add)
{
	struct jc_probe_fix fx = { here(g) - g->f->off, mul, add };

	append(g, (void **)&g->f->probe_fix, &g->f->nprobe_fix, sizeof(fx), &fx);
	emit32(g, 0);
}

/* mov $id,%edi; movabs $fn,%rax; call *%rax */
static void probe_call(struct cg *g, void (*fn)(jitperf_fn))
{
	EMIT(g, 0xbf);
	id32(g, 1, 0);
	EMIT(g, 0x48, 0xb8);
	emit64(g, (uint64_t)(uintptr_t)fn);
	EMIT(g, 0xff, 0xd0);
}

/* An instruction with an %fs:disp32 operand (a field of jitperf__tls):
 * 64 [REX] op modrm(reg, SIB) SIB(no base, no index) disp32. */
static void fs_op(struct cg *g, uint8_t rex, uint8_t op, uint8_t reg, int32_t field)
{
	uint8_t b[5] = { 0x64, rex, op, (uint8_t)(reg << 3 | 4), 0x25 };

	if (rex)
		emit(g, b, 5);
	else {
		b[1] = op;
		b[2] = (uint8_t)(reg << 3 | 4);
		b[3] = 0x25;
		emit(g, b, 4);
	}
	emit32(g, (uint32_t)(g->tls + field));
}

/* The byte of the frame that says "the entry probe called the library". */
static int flag_disp(struct cg *g)
{
	return -8 * (g->f->nslots + 2);
}

/* jcc rel32 to be landed later */
static size_t jcc(struct cg *g, uint8_t cc)
{
	uint8_t b[2] = { 0x0f, cc };

	emit(g, b, 2);
	emit32(g, 0);
	return here(g) - 4;
}

/* jmp rel32, landed later */
static size_t jmp_fwd(struct cg *g)
{
	EMIT(g, 0xe9);
	emit32(g, 0);
	return here(g) - 4;
}

static void jmp_back(struct cg *g, size_t to)
{
	EMIT(g, 0xe9);
	emit32(g, (uint32_t)(to - (here(g) + 4)));
}

/*
 * The result of a return (%rax) to the scratch slot (save) or back from it,
 * around a call of the library at exit.  Only where the call is made: in
 * the path every return takes, a store and a reload of the result would
 * put a store-to-load forwarding on the chain that carries it to the
 * caller (in fib, every addition waits for it).
 */
static void save_result(struct cg *g, int save)
{
	uint8_t b[3] = { 0x48, save ? 0x89 : 0x8b, 0x85 };    /* mov %rax,scratch(%rbp) or back */

	emit(g, b, 3);
	emit32(g, (uint32_t)slot_disp(g, g->f->nslots));
}

/* movabs $&jitperf__probe_active,%rax; mov (%rax),%eax; test %eax,%eax;
 * jnz to a tail, which comes back here */
static void test_active(struct cg *g, int exit)
{
	struct probe_tail t = { 0, 0, exit };

	EMIT(g, 0x48, 0xb8);
	emit64(g, (uint64_t)(uintptr_t)&jitperf__probe_active);
	EMIT(g, 0x8b, 0x00, 0x85, 0xc0);
	t.on = jcc(g, 0x85);
	t.back = here(g);
	append(g, (void **)&g->tails, &g->ntails, sizeof(t), &t);
}

/*
 * A probe site.  JC_PROBES_CALL: a call.  JC_PROBES_CHECK: the inline
 * test, the call out of line.  JC_PROBES_INLINE: at entry, clear the
 * frame's flag and test; at exit, test the flag (set only when the entry
 * called the library).  Nothing but a return's result (%rax) is live in
 * registers at a probe.
 */
static void probe(struct cg *g, int exit)
{
	struct probe_tail t = { 0, 0, exit };

	switch (g->p->probe_code) {
	case JC_PROBES_CALL:
		probe_call(g, exit ? jitperf_exit : jitperf_enter);
		break;
	case JC_PROBES_CHECK:
		test_active(g, exit);
		break;
	case JC_PROBES_INLINE:
		if (!exit) {
			EMIT(g, 0xc6, 0x85);            /* movb $0,flag(%rbp) */
			emit32(g, (uint32_t)flag_disp(g));
			EMIT(g, 0x00);
			test_active(g, 0);
			break;
		}
		EMIT(g, 0x80, 0xbd);                    /* cmpb $0,flag(%rbp) */
		emit32(g, (uint32_t)flag_disp(g));
		EMIT(g, 0x00);
		t.on = jcc(g, 0x85);                    /* jne tail */
		t.back = here(g);
		append(g, (void **)&g->tails, &g->ntails, sizeof(t), &t);
		break;
	}
}

/*
 * The counting part of an entry probe, out of line; %eax holds
 * jitperf__probe_active (not 0): count the call in the thread's counter of
 * the function unless it is the one to time (jitperf.h's
 * jitperf__enter_fast without the stack).  Returns the rel32 of its jump
 * back; when it cannot count it falls through to the call of the library.
 */
static size_t tail_count(struct cg *g)
{
	size_t slow[2], back;

	fs_op(g, 0, 0x3b, 0, 0);                    /* cmp %fs:gen,%eax */
	slow[0] = jcc(g, 0x85);                     /* jne slow: not counting for it yet */
	fs_op(g, 0x48, 0x8b, 2, 16);                /* mov %fs:count,%rdx */
	EMIT(g, 0x48, 0x8b, 0xb2);                  /* mov 16*id(%rdx),%rsi: calls */
	id32(g, 16, 0);
	EMIT(g, 0x48, 0xff, 0xc6);                  /* inc %rsi */
	EMIT(g, 0x48, 0x3b, 0xb2);                  /* cmp 16*id+8(%rdx),%rsi: next */
	id32(g, 16, 8);
	slow[1] = jcc(g, 0x83);                     /* jae slow: a call to time */
	EMIT(g, 0x48, 0xff, 0x82);                  /* incq 16*id(%rdx) */
	id32(g, 16, 0);
	fs_op(g, 0x48, 0xff, 0, 40);                /* incq %fs:framed_calls */
	back = jmp_fwd(g);
	for (int i = 0; i < 2; i++)
		land(g, slow[i]);
	EMIT(g, 0xc6, 0x85);                        /* movb $1,flag(%rbp) */
	emit32(g, (uint32_t)flag_disp(g));
	EMIT(g, 0x01);
	return back;
}

/* The out-of-line parts of the probe sites, between the body (whose last
 * statement jumps to the epilogue) and the epilogue: inside the frame, so
 * the unwind table's row for the body describes them too. */
static void probe_tails(struct cg *g)
{
	for (size_t i = 0; i < g->ntails; i++) {
		struct probe_tail t = g->tails[i];
		size_t back = 0;

		land(g, t.on);
		if (t.exit && g->p->probe_code == JC_PROBES_INLINE)
			save_result(g, 1);
		if (g->p->probe_code == JC_PROBES_CHECK)
			probe_call(g, t.exit ? jitperf_exit : jitperf_enter);
		else if (t.exit)
			probe_call(g, jitperf__exit_slow);
		else {
			back = tail_count(g);
			probe_call(g, jitperf__enter_framed);
		}
		if (t.exit && g->p->probe_code == JC_PROBES_INLINE)
			save_result(g, 0);
		jmp_back(g, t.back);
		if (back)
			put32(g, back, (uint32_t)(t.back - (back + 4)));
	}
}

/*
 * Start a loop on a cache line (64 bytes; offsets in the code buffer,
 * which starts on a page), with long NOPs: how the hot loops lie then does
 * not depend on how many bytes the probes before them took, and a profile
 * of instrumented code compares with one of code without probes.  At 32
 * bytes the loops of demo.jc still ran at speeds that depended on where
 * the probes had moved them (bench/ranking.sh).
 */
static void align_loop(struct cg *g)
{
	static const uint8_t nop[][9] = {
		{ 0x90 }, { 0x66, 0x90 }, { 0x0f, 0x1f, 0x00 }, { 0x0f, 0x1f, 0x40, 0x00 },
		{ 0x0f, 0x1f, 0x44, 0x00, 0x00 }, { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
		{ 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};
	size_t pad = (64 - here(g) % 64) % 64;

	while (pad) {
		size_t n = pad > 9 ? 9 : pad;

		emit(g, nop[n - 1], n);
		pad -= n;
	}
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
		align_loop(g);
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
		if (n->probe && g->p->probe_code != JC_PROBES_INLINE) {
			save_result(g, 1);  /* the test or the call uses %rax */
			probe(g, 1);
			save_result(g, 0);
		} else if (n->probe) {
			probe(g, 1);        /* its tail keeps the result */
		}
		EMIT(g, 0xe9);                      /* jmp epilogue */
		at = here(g);
		append(g, (void **)&g->rets, &g->nrets, sizeof(at), &at);
		emit32(g, 0);
		break;
	case JC_PROBE_ENTER:
		probe(g, 0);
		break;
	default:
		break;
	}
}

/* DWARF: %rsp 7, %rbp 6, return address column 16; a call pushed it */
const struct jc_target jc_target = {
	.code_align = 1, .data_align = -8, .sp = 7, .fp = 6, .ra = 16,
	.cfa_entry = 8, .ra_saved = 0, .fill = 0xcc,   /* int3 */
};

/* A call's rel32 (at points just after the 0xe8) to target. */
void jc_link_call(uint8_t *code, size_t at, size_t target)
{
	int32_t rel = (int32_t)(target - (at + 4));

	memcpy(code + at, &rel, 4);
}

/* The immediates and displacements of the probes are plain 4-byte fields. */
void jc_link_imm(uint8_t *code, size_t at, uint32_t v)
{
	memcpy(code + at, &v, 4);
}

/* Where jitperf__tls lies from the thread pointer (%fs:0): libjitperf's
 * TLS is static (initial-exec), so this is the same in every thread. */
static int32_t tls_offset(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (int32_t)((uintptr_t)&jitperf__tls - tp);
}

int jc_codegen(struct jc_prog *p, struct jc_func *f, struct jc_buf *out)
{
	static const uint8_t store_arg[JC_MAX_PARAMS][3] = {
		{ 0x48, 0x89, 0xbd }, { 0x48, 0x89, 0xb5 }, { 0x48, 0x89, 0x95 },
		{ 0x48, 0x89, 0x8d }, { 0x4c, 0x89, 0x85 }, { 0x4c, 0x89, 0x8d },
	};
	struct cg g = { .p = p, .f = f, .out = out, .last_line = -1, .tls = tls_offset() };
	/* slots, the scratch slot of a return, the probes' flag */
	uint32_t frame = (uint32_t)((8 * (f->nslots + 2) + 15) & ~15);

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
	probe_tails(&g);
	for (size_t i = 0; i < g.nrets; i++)
		land(&g, g.rets[i]);
	EMIT(&g, 0xc9);                             /* leave */
	f->frame.leave_end = here(&g) - f->off;
	EMIT(&g, 0xc3);                             /* ret */
	f->len = here(&g) - f->off;
	free(g.rets);
	free(g.tails);
	return g.oom || out->oom ? -ENOMEM : 0;
}
