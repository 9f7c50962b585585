/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * llvm_ir.c - jitcalc's tree IR (jit.h) to LLVM IR through LLVM's C API,
 * with the same meaning as codegen_x86_64.c: 64-bit wrapping arithmetic,
 * x / 0 = x % 0 = 0, INT64_MIN / -1 = INT64_MIN, comparisons give 0 or 1.
 * Every variable is a stack slot (alloca), as a simple front end emits
 * them; each statement carries the debug location of its source line, so
 * the object's DWARF line table maps the code back to the .jc file.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>

#include "examples/llvm_ir.h"

struct unit {                   /* a compile unit: one per source file */
	const char     *path;
	LLVMMetadataRef file;
};

struct gen {
	struct jc_prog      *p;
	LLVMContextRef       ctx;
	LLVMModuleRef        mod;
	LLVMBuilderRef       b;
	LLVMDIBuilderRef     di;
	LLVMTypeRef          i64;
	LLVMMetadataRef      di_i64;
	struct unit         *units;
	int                  nunits;
	int                  dwarf;   /* DWARF version, 0: no debug info */
	/* the function being compiled */
	struct jc_func      *f;
	LLVMValueRef         fn;
	LLVMValueRef        *slots;
	LLVMMetadataRef      scope;   /* its DISubprogram, or NULL */
};

static LLVMTypeRef fn_type(struct gen *g, const struct jc_func *f)
{
	LLVMTypeRef params[JC_MAX_PARAMS];

	for (int i = 0; i < f->nparams; i++)
		params[i] = g->i64;
	return LLVMFunctionType(g->i64, params, (unsigned)f->nparams, 0);
}

/* The function's declaration in this module, added on first use. */
static LLVMValueRef function_of(struct gen *g, const struct jc_func *f)
{
	LLVMValueRef fn = LLVMGetNamedFunction(g->mod, f->name);

	return fn ? fn : LLVMAddFunction(g->mod, f->name, fn_type(g, f));
}

static void at_line(struct gen *g, int line)
{
	if (g->scope && line > 0)
		LLVMSetCurrentDebugLocation2(g->b, LLVMDIBuilderCreateDebugLocation(
			g->ctx, (unsigned)line, 0, g->scope, NULL));
}

static LLVMBasicBlockRef block(struct gen *g, const char *name)
{
	return LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
}

/* Code after a return or a jump goes to a block of its own (unreachable). */
static void reachable(struct gen *g)
{
	if (LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
		LLVMPositionBuilderAtEnd(g->b, block(g, "dead"));
}

static LLVMValueRef expr(struct gen *g, const struct jc_node *n);

static LLVMValueRef bool64(struct gen *g, LLVMValueRef cond)
{
	return LLVMBuildZExt(g->b, cond, g->i64, "");
}

/* a / b or a % b without the traps of sdiv/srem (jitcalc defines both). */
static LLVMValueRef division(struct gen *g, int op, LLVMValueRef a, LLVMValueRef b)
{
	LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
	LLVMBasicBlockRef minus1 = block(g, "div.m1"), div = block(g, "div");
	LLVMBasicBlockRef end = block(g, "div.end");
	LLVMValueRef zero = LLVMConstInt(g->i64, 0, 0), q, neg, phi;
	LLVMValueRef vals[3];
	LLVMBasicBlockRef froms[3];

	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, b, zero, ""), end, minus1);
	LLVMPositionBuilderAtEnd(g->b, minus1);
	neg = op == '/' ? LLVMBuildSub(g->b, zero, a, "") : zero;
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, b,
					    LLVMConstInt(g->i64, (unsigned long long)-1, 1), ""),
			end, div);
	LLVMPositionBuilderAtEnd(g->b, div);
	q = op == '/' ? LLVMBuildSDiv(g->b, a, b, "") : LLVMBuildSRem(g->b, a, b, "");
	LLVMBuildBr(g->b, end);
	LLVMPositionBuilderAtEnd(g->b, end);
	phi = LLVMBuildPhi(g->b, g->i64, "");
	vals[0] = zero, froms[0] = from;
	vals[1] = neg, froms[1] = minus1;
	vals[2] = q, froms[2] = div;
	LLVMAddIncoming(phi, vals, froms, 3);
	return phi;
}

static LLVMValueRef binary(struct gen *g, const struct jc_node *n)
{
	LLVMValueRef a = expr(g, n->a), b = expr(g, n->b);
	LLVMIntPredicate pred;

	switch (n->op) {
	case '+': return LLVMBuildAdd(g->b, a, b, "");
	case '-': return LLVMBuildSub(g->b, a, b, "");
	case '*': return LLVMBuildMul(g->b, a, b, "");
	case '/': case '%': return division(g, n->op, a, b);
	case '<': pred = LLVMIntSLT; break;
	case '>': pred = LLVMIntSGT; break;
	case JC_OP_LE: pred = LLVMIntSLE; break;
	case JC_OP_GE: pred = LLVMIntSGE; break;
	case JC_OP_EQ: pred = LLVMIntEQ; break;
	default: pred = LLVMIntNE; break;
	}
	return bool64(g, LLVMBuildICmp(g->b, pred, a, b, ""));
}

static LLVMValueRef expr(struct gen *g, const struct jc_node *n)
{
	LLVMValueRef args[JC_MAX_PARAMS], v;

	switch (n->kind) {
	case JC_NUM:
		return LLVMConstInt(g->i64, (unsigned long long)n->num, 1);
	case JC_VAR:
		return LLVMBuildLoad2(g->b, g->i64, g->slots[n->slot], "");
	case JC_UNARY:
		v = expr(g, n->a);
		if (n->op == '-')
			return LLVMBuildSub(g->b, LLVMConstInt(g->i64, 0, 0), v, "");
		return bool64(g, LLVMBuildICmp(g->b, LLVMIntEQ, v, LLVMConstInt(g->i64, 0, 0), ""));
	case JC_BINARY:
		return binary(g, n);
	case JC_CALL:
		for (int i = 0; i < n->nargs; i++)
			args[i] = expr(g, n->args[i]);
		return LLVMBuildCall2(g->b, fn_type(g, n->callee), function_of(g, n->callee),
				      args, (unsigned)n->nargs, "");
	default:
		return LLVMConstInt(g->i64, 0, 0);
	}
}

static void statement(struct gen *g, const struct jc_node *n)
{
	LLVMBasicBlockRef then, other, end, top;

	if (n->kind == JC_BLOCK) {
		for (int i = 0; i < n->nargs; i++)
			statement(g, n->args[i]);
		return;
	}
	reachable(g);
	at_line(g, n->line);
	switch (n->kind) {
	case JC_EXPR:
		expr(g, n->a);
		break;
	case JC_ASSIGN:
		LLVMBuildStore(g->b, expr(g, n->a), g->slots[n->slot]);
		break;
	case JC_IF:
		then = block(g, "then");
		other = n->c ? block(g, "else") : NULL;
		end = block(g, "endif");
		LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, expr(g, n->a),
						    LLVMConstInt(g->i64, 0, 0), ""),
				then, other ? other : end);
		LLVMPositionBuilderAtEnd(g->b, then);
		statement(g, n->b);
		if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
			LLVMBuildBr(g->b, end);
		if (other) {
			LLVMPositionBuilderAtEnd(g->b, other);
			statement(g, n->c);
			if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
				LLVMBuildBr(g->b, end);
		}
		LLVMPositionBuilderAtEnd(g->b, end);
		break;
	case JC_WHILE:
		top = block(g, "while");
		then = block(g, "body");
		end = block(g, "endwhile");
		LLVMBuildBr(g->b, top);
		LLVMPositionBuilderAtEnd(g->b, top);
		LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, expr(g, n->a),
						    LLVMConstInt(g->i64, 0, 0), ""),
				then, end);
		LLVMPositionBuilderAtEnd(g->b, then);
		statement(g, n->b);
		if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b))) {
			at_line(g, n->line);    /* the jump back belongs to the loop's line */
			LLVMBuildBr(g->b, top);
		}
		LLVMPositionBuilderAtEnd(g->b, end);
		break;
	case JC_RETURN:
		LLVMBuildRet(g->b, expr(g, n->a));
		break;
	default:                /* JC_PROBE_ENTER: the LLVM pass adds probes */
		break;
	}
}

static LLVMMetadataRef unit_file(struct gen *g, const char *path)
{
	const char *slash = strrchr(path, '/');
	struct unit *u;

	for (int i = 0; i < g->nunits; i++)
		if (!strcmp(g->units[i].path, path))
			return g->units[i].file;
	u = realloc(g->units, (size_t)(g->nunits + 1) * sizeof(*u));
	if (!u)
		return NULL;
	g->units = u;
	u += g->nunits++;
	u->path = path;
	u->file = LLVMDIBuilderCreateFile(g->di, slash + 1, strlen(slash + 1), path,
					  (size_t)(slash - path));
	LLVMDIBuilderCreateCompileUnit(g->di, LLVMDWARFSourceLanguageC, u->file,
				       "jitperf llvm-orc", 16, 0, "", 0, 0, "", 0,
				       LLVMDWARFEmissionFull, 0, 0, 0, "", 0, "", 0);
	return u->file;
}

/* Debug info for f when its source is a real file (perf shows its lines). */
static LLVMMetadataRef subprogram(struct gen *g, const struct jc_func *f)
{
	LLVMMetadataRef file, types[1 + JC_MAX_PARAMS], sig;

	if (!g->dwarf || f->file[0] != '/' || !(file = unit_file(g, f->file)))
		return NULL;
	for (int i = 0; i <= f->nparams; i++)
		types[i] = g->di_i64;
	sig = LLVMDIBuilderCreateSubroutineType(g->di, file, types, (unsigned)f->nparams + 1,
						LLVMDIFlagZero);
	return LLVMDIBuilderCreateFunction(g->di, file, f->name, strlen(f->name), f->name,
					   strlen(f->name), file, (unsigned)f->line, sig, 0, 1,
					   (unsigned)f->line, LLVMDIFlagZero, 0);
}

static int function(struct gen *g, struct jc_func *f)
{
	LLVMValueRef fn = function_of(g, f);

	g->f = f;
	g->fn = fn;
	g->slots = calloc((size_t)f->nslots + 1, sizeof(*g->slots));
	if (!g->slots)
		return -1;
	g->scope = subprogram(g, f);
	if (g->scope)
		LLVMSetSubprogram(fn, g->scope);
	LLVMPositionBuilderAtEnd(g->b, block(g, "entry"));
	at_line(g, f->line);
	for (int i = 0; i < f->nslots; i++)
		g->slots[i] = LLVMBuildAlloca(g->b, g->i64, f->slot_names[i] ? f->slot_names[i] : "");
	for (int i = 0; i < f->nparams; i++)
		LLVMBuildStore(g->b, LLVMGetParam(fn, (unsigned)i), g->slots[i]);
	statement(g, f->body);
	/* the body ends with "return 0": only an empty dead block can follow */
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
		LLVMBuildUnreachable(g->b);
	LLVMSetCurrentDebugLocation2(g->b, NULL);
	free(g->slots);
	g->slots = NULL;
	return 0;
}

LLVMModuleRef jc_llvm_module(struct jc_prog *p, LLVMContextRef ctx, const char *name,
			     struct jc_func *const *fns, int n, int dwarf)
{
	struct gen g = { .p = p, .ctx = ctx, .dwarf = dwarf };
	LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
	char *msg = NULL;
	int err = 0;

	g.mod = LLVMModuleCreateWithNameInContext(name, ctx);
	g.b = LLVMCreateBuilderInContext(ctx);
	g.di = LLVMCreateDIBuilder(g.mod);
	g.i64 = LLVMInt64TypeInContext(ctx);
	g.di_i64 = LLVMDIBuilderCreateBasicType(g.di, "int", 3, 64, 0x05 /* DW_ATE_signed */,
						LLVMDIFlagZero);
	if (dwarf) {
		LLVMAddModuleFlag(g.mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
				  LLVMValueAsMetadata(LLVMConstInt(i32, LLVMDebugMetadataVersion(), 0)));
		LLVMAddModuleFlag(g.mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
				  LLVMValueAsMetadata(LLVMConstInt(i32, (unsigned)dwarf, 0)));
	}
	for (int i = 0; i < n && !err; i++)
		err = function(&g, fns[i]);
	LLVMDIBuilderFinalize(g.di);
	LLVMDisposeDIBuilder(g.di);
	LLVMDisposeBuilder(g.b);
	free(g.units);
	if (err) {
		snprintf(p->err, sizeof(p->err), "%s: out of memory", name);
	} else if (LLVMVerifyModule(g.mod, LLVMReturnStatusAction, &msg)) {
		snprintf(p->err, sizeof(p->err), "%s: invalid LLVM IR: %s", name, msg);
		err = -1;
	}
	LLVMDisposeMessage(msg);
	if (err) {
		LLVMDisposeModule(g.mod);
		return NULL;
	}
	return g.mod;
}
