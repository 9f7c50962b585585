/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jit.c - lay out, load and register the generated code.
 *
 * Each function is followed by its .eh_frame (and room for the
 * .eh_frame_hdr libjitperf adds), exactly where perf inject --jit places
 * them in the ELF image it writes.  So the address range perf gives a
 * function (code plus unwind info) covers memory that really belongs to
 * it and never overlaps the next function.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit.h"

#define HDR_ROOM 32   /* .eh_frame_hdr for one FDE is 20 bytes */

static int pad(struct jc_buf *b, size_t to)
{
	if (to > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *n;

		while (cap < to)
			cap *= 2;
		if (!(n = realloc(b->b, cap)))
			return -ENOMEM;
		b->b = n;
		b->cap = cap;
	}
	if (to > b->len)
		memset(b->b + b->len, jc_target.fill, to - b->len);
	b->len = to;
	return 0;
}

static int generate(struct jc_prog *p, struct jc_buf *b)
{
	for (int i = 0; i < p->nfn; i++) {
		struct jc_func *f = p->fn[i];
		uint8_t eh[256];
		int err;

		/* each function on a cache line, as its loops (the backends) */
		if ((err = pad(b, (b->len + 63) & ~(size_t)63)) ||
		    (err = jc_codegen(p, f, b)))
			return err;
		f->eh_off = jc_ehframe_addr(f->off, f->len);
		f->eh_len = jc_ehframe(eh, sizeof(eh), f->off, f->len, &f->frame, f->eh_off);
		if (!f->eh_len)
			return -ENOBUFS;
		if ((err = pad(b, f->eh_off + f->eh_len + HDR_ROOM)))
			return err;
		memcpy(b->b + f->eh_off, eh, f->eh_len);
	}
	/* direct calls between functions */
	for (int i = 0; i < p->nfn; i++) {
		struct jc_func *f = p->fn[i];

		for (size_t k = 0; k < f->ncalls; k++)
			jc_link_call(b->b, f->off + f->calls[k].off, f->calls[k].callee->off);
	}
	return 0;
}

/* Give each instrumented function its jitperf_fn and bake it into the code. */
static int bind_probes(struct jc_prog *p, jitperf *jp)
{
	for (int i = 0; i < p->nfn; i++) {
		struct jc_func *f = p->fn[i];

		if (!f->instrumented)
			continue;
		f->probe = jitperf_fn_register(jp, f->name, p->code + f->off, f->len);
		if (!f->probe)
			return snprintf(p->err, sizeof(p->err), "jitperf_fn_register(%s): %s",
					f->name, jitperf_strerror(-errno)), -errno;
		for (size_t k = 0; k < f->nprobe_fix; k++) {
			uint32_t v = f->probe * f->probe_fix[k].mul + f->probe_fix[k].add;

			jc_link_imm(p->code, f->off + f->probe_fix[k].off, v);
		}
	}
	return 0;
}

static int register_code(struct jc_prog *p, jitperf *jp, struct jc_func *f)
{
	struct jitperf_line *lines = NULL;
	struct jitperf_code c = {
		.size = sizeof(c), .name = f->name, .addr = p->code + f->off, .len = f->len,
		.eh_frame = p->code + f->eh_off, .eh_frame_len = f->eh_len,
	};
	int err;

	/* source lines only when they name a real file perf can show */
	if (f->file[0] == '/' && f->nlines) {
		if (!(lines = calloc(f->nlines, sizeof(*lines))))
			return -ENOMEM;
		for (size_t k = 0; k < f->nlines; k++) {
			lines[k].addr = (uint64_t)(uintptr_t)(p->code + f->off + f->lines[k].off);
			lines[k].line = (uint32_t)f->lines[k].line;
			lines[k].file = f->file;
		}
		c.lines = lines;
		c.nlines = f->nlines;
	}
	err = jitperf_code_load_ex(jp, &c, NULL);
	free(lines);
	if (err)
		snprintf(p->err, sizeof(p->err), "jitperf_code_load_ex(%s): %s",
			 f->name, jitperf_strerror(err));
	return err;
}

int jc_compile(struct jc_prog *p, jitperf *jp)
{
	struct jc_buf b = { 0 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m;
	int err;

	if ((err = generate(p, &b))) {
		free(b.b);
		snprintf(p->err, sizeof(p->err), "code generation: %s", strerror(-err));
		return err;
	}
	p->code_size = b.len;
	p->map_size = (b.len + page - 1) & ~(page - 1);
	m = mmap(NULL, p->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		free(b.b);
		snprintf(p->err, sizeof(p->err), "mmap: %s", strerror(errno));
		return -errno;
	}
	p->code = m;
	memcpy(p->code, b.b, b.len);
	free(b.b);
	if ((err = bind_probes(p, jp)))
		return err;
	/* W^X: the code is never writable and executable at once */
	if (mprotect(p->code, p->map_size, PROT_READ | PROT_EXEC)) {
		snprintf(p->err, sizeof(p->err), "mprotect: %s", strerror(errno));
		return -errno;
	}
	/* AArch64's instruction cache does not see the data stores (a no-op on x86-64) */
	__builtin___clear_cache((char *)p->code, (char *)p->code + p->code_size);
	for (int i = 0; i < p->nfn; i++)
		if ((err = register_code(p, jp, p->fn[i])))
			return err;
	return 0;
}

jc_entry jc_entry_of(const struct jc_prog *p, const struct jc_func *f)
{
	jc_entry e;
	void *addr = p->code + f->off;

	memcpy(&e, &addr, sizeof(e));   /* object to function pointer, without a cast warning */
	return e;
}
