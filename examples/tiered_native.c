/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tiered_native.c - tier 1: one function compiled by jitcalc's backend
 * for the host (codegen_<arch>.c, ehframe.c) into a mapping of its own, and
 * installed as the code of its compile, so libjitperf names it func[opt].
 *
 * The code is laid out as jit.c lays out a program: the function, then
 * its .eh_frame where perf inject --jit puts it.  Only calls of the
 * function itself are supported (they stay direct calls); a function
 * that calls another one stays in tier 0.
 *
 * A function may ask for more code generation passes (tx_fn.passes): the
 * backend then runs that many times more, the output thrown away.  It is
 * the example's stand-in for an expensive optimizing backend, real work
 * on the compiler thread whose cost grows with the function's size.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tiered.h"

#define HDR_ROOM 32   /* .eh_frame_hdr libjitperf adds: 20 bytes for one FDE */

/* One pass of the backend over f into b, from scratch. */
static int codegen(struct tx_rt *rt, struct jc_func *f, struct jc_buf *b)
{
	free(f->lines);
	free(f->calls);
	f->lines = NULL;
	f->calls = NULL;
	f->nlines = f->ncalls = 0;
	b->len = 0;
	return jc_codegen(rt->prog, f, b);
}

static int load(struct tx_rt *rt, struct jc_func *f, uint8_t *code, uint64_t compile)
{
	struct jitperf_line *lines = NULL;
	struct jitperf_code c = {
		/* no session, no compile id: name it plainly */
		.size = sizeof(c), .name = compile ? NULL : f->name, .addr = code, .len = f->len,
		.compile = compile,
		.eh_frame = code + f->eh_off, .eh_frame_len = f->eh_len,
	};
	int err;

	if (f->file[0] == '/' && f->nlines) {
		if (!(lines = calloc(f->nlines, sizeof(*lines))))
			return -ENOMEM;
		for (size_t k = 0; k < f->nlines; k++) {
			lines[k].addr = (uint64_t)(uintptr_t)(code + f->lines[k].off);
			lines[k].line = (uint32_t)f->lines[k].line;
			lines[k].file = f->file;
		}
		c.lines = lines;
		c.nlines = f->nlines;
	}
	err = jitperf_code_load_ex(rt->jp, &c, NULL);
	free(lines);
	return err;
}

int tx_native(struct tx_rt *rt, struct tx_fn *tf)
{
	struct jc_func *f = tf->ir;
	struct jc_buf b = { 0 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size;
	uint8_t eh[256], *code;
	int err = 0;

	for (int pass = 0; !err && pass <= tf->passes; pass++)
		err = codegen(rt, f, &b);
	for (size_t k = 0; !err && k < f->ncalls; k++)
		if (f->calls[k].callee != f)
			err = -EOPNOTSUPP;
	if (!err) {
		f->eh_off = jc_ehframe_addr(0, f->len);
		f->eh_len = jc_ehframe(eh, sizeof(eh), 0, f->len, &f->frame, f->eh_off);
		if (!f->eh_len)
			err = -ENOBUFS;
	}
	if (err) {
		free(b.b);
		return err;
	}
	size = (f->eh_off + f->eh_len + HDR_ROOM + page - 1) & ~(page - 1);
	code = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		free(b.b);
		return -errno;
	}
	memcpy(code, b.b, f->len);
	memcpy(code + f->eh_off, eh, f->eh_len);
	free(b.b);
	for (size_t k = 0; k < f->ncalls; k++)          /* recursive calls */
		jc_link_call(code, f->calls[k].off, 0);
	/* W^X: never writable and executable at once */
	if (mprotect(code, size, PROT_READ | PROT_EXEC)) {
		err = -errno;
		munmap(code, size);
		return err;
	}
	/* AArch64's instruction cache does not see the data stores (a no-op on x86-64) */
	__builtin___clear_cache((char *)code, (char *)code + f->len);
	tf->native_map = code;
	tf->native_size = size;
	return 0;
}

int tx_native_install(struct tx_rt *rt, struct tx_fn *tf, uint64_t compile, jc_entry *entry)
{
	int err = load(rt, tf->ir, tf->native_map, compile);

	void *code;

	if (!err) {
		code = tx_counted(rt, tf, "opt", tf->native_map, tf->ir->len);
		memcpy(entry, &code, sizeof(*entry));   /* object to function pointer */
	}
	return err;
}
