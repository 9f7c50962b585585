/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probes.c - the instrumentation pass (the shape of Nautilus'
 * ProfilingIRPass): every function gets an entry probe as its first
 * statement and an exit probe before each of its returns.  The code
 * generator (codegen_x86_64.c) turns them into machine code with the
 * function's jitperf_fn id as an immediate: by default an inline test of
 * jitperf__probe_active that costs a load and a branch when nothing
 * records, and the count of the call itself, out of line, when a session
 * counts (jitperf_enter(3), GENERATED CODE); or calls of the exported
 * jitperf_enter/jitperf_exit (--probes=check|call).  Without this pass no
 * probe code exists at all.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "jit.h"

static void mark_returns(struct jc_node *n)
{
	if (!n)
		return;
	if (n->kind == JC_RETURN)
		n->probe = 1;
	for (int i = 0; i < n->nargs; i++)
		mark_returns(n->args[i]);
	/* expressions hold no returns; statements keep theirs in b and c */
	if (n->kind == JC_IF || n->kind == JC_WHILE) {
		mark_returns(n->b);
		mark_returns(n->c);
	}
}

static int instrument(struct jc_prog *p, struct jc_func *f)
{
	struct jc_node *enter, **stmts;
	struct jc_node *body = f->body;

	if (f->instrumented)
		return 0;
	enter = jc_alloc(p, sizeof(*enter));
	stmts = jc_alloc(p, (body->nargs + 1) * sizeof(*stmts));
	if (!enter || !stmts)
		return -ENOMEM;
	enter->kind = JC_PROBE_ENTER;
	enter->line = f->line;
	stmts[0] = enter;
	memcpy(stmts + 1, body->args, body->nargs * sizeof(*stmts));
	body->args = stmts;
	body->nargs++;
	mark_returns(body);
	f->instrumented = 1;
	return 0;
}

int jc_instrument(struct jc_prog *p)
{
	for (int i = 0; i < p->nfn; i++) {
		int err = instrument(p, p->fn[i]);

		if (err)
			return err;
	}
	return 0;
}
