/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_llvm_instrument_module: the instrumentation pass in LLVM IR (the
 * shape of Nautilus' ProfilingIRPass).  Each defined function gets
 *
 *	%on = load volatile i32, ptr @jitperf__probe_active
 *	br (%on != 0), label %probe, label %go      ; weighted: rarely taken
 *   probe:
 *	call void @jitperf_enter(i32 ID)
 *
 * after the allocas of its entry block, and the same with jitperf_exit
 * before each return.  That is the test jitperf.h's inline probes make:
 * when nothing records, one load and one predictable branch per probe.
 * jitperf_enter/jitperf_exit do the rest (sampling, the trace, statistics)
 * as exported functions, so the generated code depends on two function
 * names and one variable name only.
 */
#include "config.h"

#include <errno.h>
#include <string>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "llvm/jitperf-llvm.h"
#include "llvm/llvm.h"

namespace {

/* The flag jitperf.h's inline probes test: non-zero while a session traces or counts calls. */
const char active_flag[] = "jitperf__probe_active";
/* A function attribute that marks what this pass instrumented (value: the id). */
const char done_attr[] = "jitperf-fn";

struct probes {
	llvm::Type          *i32;
	llvm::FunctionCallee enter, exit;
	llvm::Value         *flag;
	llvm::MDNode        *unlikely;
};

/* if (jitperf__probe_active) callee(id); before the instruction at. */
void guarded_call(const probes &p, llvm::Instruction *at, llvm::FunctionCallee callee,
		  uint32_t id, const llvm::DebugLoc &loc)
{
	llvm::IRBuilder<> b(at);

	b.SetCurrentDebugLocation(loc);
	llvm::Value *on = b.CreateICmpNE(b.CreateLoad(p.i32, p.flag, true, "jitperf.on"),
					 b.getInt32(0));
	llvm::Instruction *then = llvm::SplitBlockAndInsertIfThen(on, at, false, p.unlikely);
	llvm::IRBuilder<> t(then);

	t.SetCurrentDebugLocation(loc);
	t.CreateCall(callee, { t.getInt32(id) });
}

/* Where the exit probe of the return ret goes: before a musttail call that must stay next to it. */
llvm::Instruction *exit_point(llvm::ReturnInst *ret)
{
	llvm::Instruction *prev = ret->getPrevNode();

	if (prev && llvm::isa<llvm::BitCastInst>(prev))
		prev = prev->getPrevNode();
	if (auto *call = llvm::dyn_cast_or_null<llvm::CallInst>(prev))
		if (call->isMustTailCall())
			return call;
	return ret;
}

void instrument(const probes &p, llvm::Function &f, uint32_t id)
{
	llvm::BasicBlock &entry = f.getEntryBlock();
	llvm::Instruction *first = &*entry.getFirstInsertionPt();
	llvm::SmallVector<llvm::ReturnInst *, 8> rets;
	llvm::DebugLoc loc;

	for (llvm::BasicBlock &bb : f)
		if (auto *ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator()))
			rets.push_back(ret);
	/* after the entry block's allocas, which must stay static */
	while (llvm::isa<llvm::AllocaInst>(first) && !first->isTerminator())
		first = first->getNextNode();
	loc = first->getDebugLoc();
	if (!loc && f.getSubprogram())
		loc = llvm::DILocation::get(f.getContext(), f.getSubprogram()->getLine(), 0,
					    f.getSubprogram());
	guarded_call(p, first, p.enter, id, loc);
	for (llvm::ReturnInst *ret : rets)
		guarded_call(p, exit_point(ret), p.exit, id, ret->getDebugLoc());
}

} /* namespace */

int jitperf_llvm_instrument_module(jitperf *jp, LLVMModuleRef mod)
{
	if (!mod)
		return -EINVAL;
	if (!jp)
		jp = jitperf_default();

	llvm::Module *m = llvm::unwrap(mod);
	llvm::LLVMContext &ctx = m->getContext();
	probes p;
	int n = 0;

	p.i32 = llvm::Type::getInt32Ty(ctx);
	llvm::FunctionType *ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), { p.i32 }, false);
	p.enter = m->getOrInsertFunction("jitperf_enter", ty);
	p.exit = m->getOrInsertFunction("jitperf_exit", ty);
	p.flag = m->getOrInsertGlobal(active_flag, p.i32);
	p.unlikely = llvm::MDBuilder(ctx).createBranchWeights(1, 1u << 20);

	for (llvm::Function &f : *m) {
		if (f.isDeclaration() || f.hasFnAttribute(done_attr))
			continue;
		std::string name = f.getName().str();
		jitperf_fn id = jitperf_fn_register(jp, name.c_str(), nullptr, 0);

		if (!id)
			return errno ? -errno : -ENOMEM;
		instrument(p, f, id);
		f.addFnAttr(done_attr, std::to_string(id));
		n++;
	}
	return n;
}
