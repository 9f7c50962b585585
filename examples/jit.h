/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jit.h - jitcalc, the example JIT: a tiny language compiled to x86-64 or
 * AArch64 machine code.
 *
 * Pipeline: parse.c turns source text into a tree IR (struct jc_node, in
 * prog.c's arena), probes.c optionally adds entry and exit probes, the
 * backend (codegen_x86_64.c or codegen_aarch64.c, chosen at build time)
 * emits machine code (probes included), ehframe.c describes its frames
 * from the backend's struct jc_target, jit.c places everything in
 * executable memory and registers it with libjitperf.
 */
#ifndef JITCALC_JIT_H
#define JITCALC_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "jitperf.h"

#define JC_MAX_PARAMS 6   /* System V integer argument registers (AAPCS64 has 8) */

enum jc_kind {
	JC_NUM,          /* num */
	JC_VAR,          /* slot */
	JC_UNARY,        /* op ('-' or '!'), a */
	JC_BINARY,       /* op, a, b */
	JC_CALL,         /* callee, args[nargs] */
	JC_ASSIGN,       /* slot = a (also "var x = a") */
	JC_EXPR,         /* a; */
	JC_IF,           /* if (a) b else c (c may be NULL) */
	JC_WHILE,        /* while (a) b */
	JC_RETURN,       /* return a; with probe set, the exit probe first */
	JC_BLOCK,        /* args[nargs] */
	JC_PROBE_ENTER,  /* the entry probe of this function; inserted by jc_instrument */
};

/* Binary operators besides + - * / %: two-character comparisons. */
enum { JC_OP_EQ = 256, JC_OP_NE, JC_OP_LE, JC_OP_GE };

struct jc_func;

struct jc_node {
	enum jc_kind     kind;
	int              line;     /* source line of the construct */
	int              op;
	int64_t          num;
	int              slot;     /* variable slot in the frame */
	struct jc_node  *a, *b, *c;
	struct jc_node **args;     /* call arguments or block statements */
	int              nargs;
	char            *callee_name;
	struct jc_func  *callee;   /* resolved by jc_parse_finish */
	int              probe;    /* JC_RETURN: the exit probe before returning */
};

/* Where ehframe.c needs to know the prologue and epilogue are. */
struct jc_frame_layout {
	size_t push_end;   /* just after "push %rbp" / "stp x29, x30, [sp, #-16]!" */
	size_t mov_end;    /* just after "mov %rsp,%rbp" / "mov x29, sp" */
	size_t leave_end;  /* just after the single "leave" / "ldp x29, x30, [sp], #16" */
};

/*
 * What differs between the backends outside the code generator: the DWARF
 * numbers and factors of the frame ehframe.c describes, and the filler
 * between functions.  Each backend defines jc_target.
 */
struct jc_target {
	uint8_t code_align;   /* CIE code alignment factor (instruction size unit) */
	int8_t  data_align;   /* CIE data alignment factor */
	uint8_t sp, fp, ra;   /* DWARF numbers: stack pointer, frame pointer, return address */
	uint8_t cfa_entry;    /* CFA - sp at the first instruction */
	uint8_t ra_saved;     /* the prologue's push saves ra at CFA-8 (else a call did) */
	uint8_t fill;         /* byte between functions: traps if executed */
};
extern const struct jc_target jc_target;

struct jc_line_mark { size_t off; int line; };
/* off: where jc_link_call patches the call (backend-defined) */
struct jc_fixup { size_t off; struct jc_func *callee; };

struct jc_func {
	char            *name;
	const char      *file;      /* source file, for error messages and line info */
	int              line;
	int              nparams;
	int              nslots;    /* params + locals + scratch */
	char           **slot_names;
	struct jc_node  *body;      /* JC_BLOCK; ends with an implicit "return 0" */
	int              instrumented;   /* set by jc_instrument */
	jitperf_fn       probe;          /* id from jitperf_fn_register */
	/* filled in by code generation (offsets in the program's code buffer) */
	size_t           off, len;       /* the function's machine code */
	size_t           eh_off, eh_len;  /* its .eh_frame, right after the code */
	struct jc_frame_layout frame;
	struct jc_line_mark *lines;     /* offset of each source line's first instruction */
	size_t           nlines;
	struct jc_fixup *calls;         /* rel32 of each call, patched at link time */
	size_t           ncalls;
	struct jc_probe_fix *probe_fix; /* immediates and displacements made of the id */
	size_t           nprobe_fix;
};

/* At link time the immediate at off becomes id * mul + add (id: jitperf_fn),
 * by jc_link_imm. */
struct jc_probe_fix { size_t off; uint32_t mul, add; };

/* What the code generator emits for a probe (jitperf_enter(3)). */
enum jc_probe_code {
	JC_PROBES_INLINE,    /* the counting path of jitperf.h inline (the default) */
	JC_PROBES_CHECK,     /* the inactive check inline, then a call of the probe */
	JC_PROBES_CALL,      /* a call of jitperf_enter/jitperf_exit, nothing else */
};

struct jc_prog {
	struct jc_func **fn;
	int              nfn;
	char            *path;      /* absolute path of the main source file */
	struct jc_arena *arena;
	enum jc_probe_code probe_code;   /* read by the code generator */
	/* after jc_compile */
	uint8_t         *code;      /* executable mapping */
	size_t           code_size, map_size;
	char             err[512];  /* "file:line: what is wrong" */
};

/* prog.c: program, IR arena, function lookup; parse.c: source text to IR */
struct jc_prog *jc_prog_new(void);
void jc_prog_free(struct jc_prog *p);
int jc_parse(struct jc_prog *p, const char *text, const char *file);
int jc_parse_expr(struct jc_prog *p, const char *name, const char *text, const char *file);
int jc_parse_finish(struct jc_prog *p);
struct jc_func *jc_find(const struct jc_prog *p, const char *name);
void *jc_alloc(struct jc_prog *p, size_t size);

/* cli.c: the whole file, NUL-terminated (NULL with errno set; *len gets its
 * length); a positive int-sized option value, else exit(2) after a message
 * naming prog */
char *jc_slurp(const char *path, size_t *len);
long jc_number(const char *prog, const char *s, const char *what);

/* probes.c: the instrumentation pass over the IR */
int jc_instrument(struct jc_prog *p);

/* codegen_x86_64.c / codegen_aarch64.c: append one function's code to out;
 * 0 or -ENOMEM.  At link time, jc_link_call points the call at `at` (a
 * jc_fixup's offset in code) to `target`, and jc_link_imm sets the
 * immediate a jc_probe_fix names to v. */
struct jc_buf { uint8_t *b; size_t len, cap; int oom; };
int jc_codegen(struct jc_prog *p, struct jc_func *f, struct jc_buf *out);
void jc_link_call(uint8_t *code, size_t at, size_t target);
void jc_link_imm(uint8_t *code, size_t at, uint32_t v);

/*
 * ehframe.c: .eh_frame (one CIE, one FDE, terminator) for a function at
 * code_addr, as if placed at eh_addr.  Returns its size (0 if cap is too small).
 */
size_t jc_ehframe(uint8_t *out, size_t cap, uint64_t code_addr, size_t code_len,
		  const struct jc_frame_layout *fl, uint64_t eh_addr);
/* Where perf's injected ELF puts the .eh_frame of code_len bytes of code. */
uint64_t jc_ehframe_addr(uint64_t code_addr, size_t code_len);

/* jit.c: code generation for all functions, executable memory, registration */
int jc_compile(struct jc_prog *p, jitperf *jp);
typedef int64_t (*jc_entry)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
jc_entry jc_entry_of(const struct jc_prog *p, const struct jc_func *f);

#endif /* JITCALC_JIT_H */
