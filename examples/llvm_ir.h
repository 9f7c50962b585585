/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * llvm_ir.h - jitcalc's language compiled to LLVM IR with DWARF line info,
 * for examples/llvm-orc and bench/llvm_listener: the functions jitcalc's
 * parser built (jit.h) become LLVM functions i64(i64, ...) whose debug
 * locations name the .jc source lines.
 */
#ifndef JITCALC_LLVM_IR_H
#define JITCALC_LLVM_IR_H

#include <llvm-c/Core.h>

#include "examples/jit.h"

/*
 * A module named name holding the n functions fns of p (other functions
 * they call are declared, for the JIT to resolve from other modules), with
 * a compile unit per source file and DWARF version dwarf (4 or 5; 0: no
 * debug information).
 * NULL with p->err set when LLVM's verifier rejects the result.
 */
LLVMModuleRef jc_llvm_module(struct jc_prog *p, LLVMContextRef ctx, const char *name,
			     struct jc_func *const *fns, int n, int dwarf);

#endif /* JITCALC_LLVM_IR_H */
