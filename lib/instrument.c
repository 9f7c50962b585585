/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Instrumentation side of the session: replaced by the real implementation. */
#include "config.h"
#include "session.h"

int jp_instr_open(struct jitperf *jp) { (void)jp; return 0; }
int jp_instr_close(struct jitperf *jp) { (void)jp; return 0; }
void jp_instr_atfork_child(struct jitperf *jp) { (void)jp; }
void jp_instr_code_event(struct jitperf *jp, int kind, uint64_t index,
			 uint64_t addr, uint64_t len, const char *name)
{ (void)jp; (void)kind; (void)index; (void)addr; (void)len; (void)name; }
