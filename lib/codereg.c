/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Code registration: jitperf_code_load/_ex/_move/_unload.  One lock per
 * session orders the index, the timestamps and the records of every output;
 * a load either lands in every output or (on error) in none.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* Read without the lock (jitperf_close may clear it): an atomic load. */
static unsigned outputs_of(const jitperf *jp)
{
	return __atomic_load_n(&jp->outputs, __ATOMIC_RELAXED);
}

static int check_code(const struct jitperf_code *c)
{
	uint64_t start = (uintptr_t)c->addr, i;

	if (!c->name || !c->addr || !c->len)
		return -EINVAL;
	if (c->nlines && !c->lines)
		return -EINVAL;
	for (i = 0; i < c->nlines; i++)
		/* absolute run-time addresses inside the code (offsets are a common mistake) */
		if (c->lines[i].addr < start || c->lines[i].addr - start >= c->len) {
			jp_debug("%s: line %llu address %#llx is outside the code [%#llx, +%zu)",
				 c->name, (unsigned long long)i, (unsigned long long)c->lines[i].addr,
				 (unsigned long long)start, c->len);
			return -EINVAL;
		}
	if (c->eh_frame_len && !c->eh_frame)
		return -EINVAL;
	return 0;
}

int jitperf_code_load(jitperf *jp, const char *name, const void *addr, size_t len,
		      uint64_t *index)
{
	struct jitperf_code c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.name = name;
	c.addr = addr;
	c.len = len;
	return jitperf_code_load_ex(jp, &c, index);
}

int jitperf_code_load_ex(jitperf *jp, const struct jitperf_code *code, uint64_t *index)
{
	struct jitperf_code c;
	struct jp_jitdump_load ld;
	unsigned char *hdr = NULL;
	size_t hdr_len = 0;
	uint64_t idx = 0, dump_mark = 0, hash;
	int err;

	if (index)
		*index = 0;
	if (!jp || !code)
		return -EINVAL;
	if (!outputs_of(jp))
		return 0;       /* inactive: a cheap no-op */
	err = jp_opts_copy(&c, sizeof(c), code, code->size);
	if (!err)
		err = check_code(&c);
	if (err)
		return err;
	if (c.eh_frame_len && (outputs_of(jp) & JITPERF_JITDUMP)) {
		err = jp_ehframe_hdr(c.eh_frame, c.eh_frame_len, (uintptr_t)c.addr, c.len,
				     &hdr, &hdr_len);
		if (err)
			return err;
	}

	/* hashing the code (for twins) needs no lock */
	hash = outputs_of(jp) & JITPERF_JITDUMP ? jp_code_hash(c.addr, c.len) : 0;

	pthread_mutex_lock(&jp->lock);
	if (!jp->outputs) {             /* closed meanwhile */
		pthread_mutex_unlock(&jp->lock);
		free(hdr);
		return 0;
	}
	err = jp_codetab_add(&jp->codes, (uintptr_t)c.addr, c.len, c.name, &idx);
	if (err)
		goto out;
	if (jp->jitdump) {
		memset(&ld, 0, sizeof(ld));
		ld.name = c.name;
		ld.addr = (uintptr_t)c.addr;
		ld.len = c.len;
		ld.index = idx;
		ld.lines = c.lines;
		ld.nlines = c.nlines;
		ld.eh_frame = c.eh_frame;
		ld.eh_frame_len = c.eh_frame_len;
		ld.eh_hdr = hdr;
		ld.eh_hdr_len = hdr_len;
		ld.code_hash = hash;
		dump_mark = jp_jitdump_mark(jp->jitdump);
		err = jp_jitdump_load(jp->jitdump, &ld);
	}
	if (!err && jp->perfmap) {
		err = jp_perfmap_write(jp->perfmap, (uintptr_t)c.addr, c.len, c.name);
		if (err && jp->jitdump)
			jp_jitdump_rollback(jp->jitdump, dump_mark);
	}
	if (err)
		jp_codetab_undo(jp->codes);
out:
	pthread_mutex_unlock(&jp->lock);
	free(hdr);
	if (err) {
		jp_debug("cannot register %s: %s", c.name, jitperf_strerror(err));
		return err;
	}
	jp_instr_code_event(jp, 0, idx, (uintptr_t)c.addr, c.len, c.name);
	if (index)
		*index = idx;
	return 0;
}

int jitperf_code_move(jitperf *jp, uint64_t index, const void *new_addr)
{
	struct jp_code_entry *e;
	uint64_t old, len, dump_mark = 0;
	int err = 0;

	if (!jp || !new_addr)
		return -EINVAL;
	if (!outputs_of(jp))
		return 0;
	pthread_mutex_lock(&jp->lock);
	e = jp_codetab_get(jp->codes, index);
	if (!e || !e->live) {
		pthread_mutex_unlock(&jp->lock);
		return -ENOENT;
	}
	old = e->addr;
	len = e->len;
	if (jp->jitdump) {
		dump_mark = jp_jitdump_mark(jp->jitdump);
		err = jp_jitdump_move(jp->jitdump, index, old, (uintptr_t)new_addr, len);
	}
	/* perf maps have no move: the name at the new address is a new line */
	if (!err && jp->perfmap) {
		err = jp_perfmap_write(jp->perfmap, (uintptr_t)new_addr, len, e->name);
		if (err && jp->jitdump)
			jp_jitdump_rollback(jp->jitdump, dump_mark);
	}
	if (!err)
		e->addr = (uintptr_t)new_addr;
	pthread_mutex_unlock(&jp->lock);
	if (!err)
		jp_instr_code_event(jp, 1, index, (uintptr_t)new_addr, len, NULL);
	return err;
}

int jitperf_code_unload(jitperf *jp, uint64_t index)
{
	struct jp_code_entry *e;
	uint64_t addr = 0, len = 0;
	int err = 0;

	if (!jp)
		return -EINVAL;
	if (!outputs_of(jp))
		return 0;
	pthread_mutex_lock(&jp->lock);
	e = jp_codetab_get(jp->codes, index);
	if (!e || !e->live) {
		err = -ENOENT;
	} else {
		/* no jitdump record exists for this; a later load at addr wins by time */
		e->live = 0;
		addr = e->addr;
		len = e->len;
	}
	pthread_mutex_unlock(&jp->lock);
	if (!err)
		jp_instr_code_event(jp, 2, index, addr, len, NULL);
	return err;
}
