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
#include "lib/codebatch.h"
#include "format/jitdump.h"

/* Read without the lock (jitperf_close may clear it): an atomic load. */
static unsigned outputs_of(const jitperf *jp)
{
	return __atomic_load_n(&jp->outputs, __ATOMIC_RELAXED);
}

/* c's fields as jitperf_code_load_ex checks them: 0 or -EINVAL */
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

/* Room on the stack for a typical load; bigger ones are malloc'ed. */
#define UNIT_SPACE 8192
#define LINE_SPACE 512
#define HDR_SPACE  256

/*
 * c's jitdump unit (its .eh_frame_hdr built on the way), in space when it
 * fits, else malloc'ed (u->heap).  0 or -errno.
 */
static int prepare_unit(const struct jitperf_code *c, struct jp_jitdump_unit *u, void *space,
			size_t space_len)
{
	unsigned char hdr_space[HDR_SPACE], *hdr = NULL;
	struct jp_jitdump_load ld;
	size_t hdr_len = 0;
	int err;

	if (c->eh_frame_len) {
		err = jp_ehframe_hdr(c->eh_frame, c->eh_frame_len, (uintptr_t)c->addr, c->len,
				     hdr_space, sizeof(hdr_space), &hdr, &hdr_len);
		if (err)
			return err;
	}
	memset(&ld, 0, sizeof(ld));
	ld.name = c->name;
	ld.addr = (uintptr_t)c->addr;
	ld.len = c->len;
	ld.lines = c->lines;
	ld.nlines = c->nlines;
	ld.eh_frame = c->eh_frame;
	ld.eh_frame_len = c->eh_frame_len;
	ld.eh_hdr = hdr;
	ld.eh_hdr_len = hdr_len;
	err = jp_jitdump_prepare(u, &ld, space, space_len);
	if (hdr != hdr_space)
		free(hdr);      /* copied into the unit */
	return err;
}

/*
 * Everything that needs no lock is done first: the perf map line and the
 * jitdump unit (the code copied and hashed) are made in the caller's stack.
 * Under the lock: the index, the timestamp, and one write() per output.
 * The perf map goes first: its system call gives the twin-table prefetch
 * time to land before the jitdump is stamped.  When load returns 0 both
 * records are in their files (doc/registration.md).
 */
static int load(jitperf *jp, const struct jitperf_code *c, uint64_t *index)
{
	unsigned char space[UNIT_SPACE];
	char small[LINE_SPACE], *line = NULL, tier_space[LINE_SPACE], *tier_name = NULL;
	struct jp_jitdump_unit u = { 0 };
	struct jitperf_code named;
	struct jp_keep *keep = NULL;
	size_t nlen, line_len = 0;
	uint64_t idx = 0, map_mark = 0, dump_mark = 0, ts;
	unsigned outputs;
	int err = 0;

	if (c->compile) {
		/* code of a compile: without a name of its own, func[tag] */
		err = jp_tiers_code_name(jp, c->compile, tier_space, sizeof(tier_space),
					 c->name ? NULL : &tier_name);
		if (err)
			goto out;
		if (!c->name) {
			named = *c;
			named.name = tier_name;
			c = &named;
		}
	}
	err = check_code(c);
	if (err)
		goto out;
	nlen = strlen(c->name);
again:
	outputs = outputs_of(jp);
	if (outputs & JITPERF_STANDBY) {
		/* nothing written: what a recorder attaching later needs is kept */
		err = jp_keep_make(c, &keep);
		if (err)
			goto out;
	} else if (outputs & JITPERF_JITDUMP) {
		err = prepare_unit(c, &u, space, sizeof(space));
		if (err)
			goto out;
	}
	if ((outputs & (JITPERF_PERFMAP | JITPERF_STANDBY)) == JITPERF_PERFMAP) {
		line = small;
		if (nlen + JP_PERFMAP_LINE_EXTRA > sizeof(small) &&
		    !(line = malloc(nlen + JP_PERFMAP_LINE_EXTRA))) {
			err = -ENOMEM;
			goto out;
		}
		line_len = jp_perfmap_line(line, (uintptr_t)c->addr, c->len, c->name, nlen);
	}

	pthread_mutex_lock(&jp->lock);
	if (!jp->outputs)               /* closed meanwhile */
		goto unlock;
	if ((jp->outputs ^ outputs) & JITPERF_STANDBY) {
		/* a recorder woke the session meanwhile: made again, to be written */
		pthread_mutex_unlock(&jp->lock);
		free(keep);
		keep = NULL;
		goto again;
	}
	if (jp->jitdump && u.buf)
		jp_jitdump_prefetch(jp->jitdump, &u);
	err = jp_codetab_add(&jp->codes, (uintptr_t)c->addr, c->len, c->name, nlen, &idx);
	if (err)
		goto unlock;
	/* the one clock read: under the lock, so records are in time order */
	ts = jp_monotonic_ns();
	if (keep) {
		keep->ts = ts;          /* under the lock: the wake writes in this order */
		keep->tid = (uint32_t)jp_gettid();
		jp_codetab_get(jp->codes, idx)->keep = keep;
		keep = NULL;
	}
	if (jp->perfmap && line) {
		map_mark = jp_perfmap_mark(jp->perfmap);
		err = jp_perfmap_append(jp->perfmap, line, line_len);
	}
	if (!err && jp->jitdump && u.buf) {
		dump_mark = jp_jitdump_mark(jp->jitdump);
		err = jp_jitdump_commit(jp->jitdump, &u, idx, ts);
		if (err && jp->perfmap && line)
			jp_perfmap_rollback(jp->perfmap, map_mark);
	}
	/* the tier's install, last: its failure takes the others back */
	if (!err && c->compile &&
	    (err = jp_tiers_install(jp, c->compile, idx, (uintptr_t)c->addr, c->len, ts))) {
		if (jp->jitdump && u.buf)
			jp_jitdump_rollback(jp->jitdump, dump_mark);
		if (jp->perfmap && line)
			jp_perfmap_rollback(jp->perfmap, map_mark);
	}
	if (err)
		jp_codetab_undo(jp->codes);
unlock:
	pthread_mutex_unlock(&jp->lock);
out:
	free(keep);
	jp_jitdump_unit_free(&u);
	if (line != small)
		free(line);
	if (!err && idx)
		jp_instr_code_event(jp, JPT_CODE_LOAD, idx, (uintptr_t)c->addr, c->len, c->name);
	if (err)
		jp_debug("cannot register %s: %s", c->name ? c->name : "code without a name",
			 jitperf_strerror(err));
	if (tier_name != tier_space)
		free(tier_name);
	if (err)
		return err;
	if (index)
		*index = idx;   /* 0: the session was closed */
	return 0;
}

int jitperf_code_load(jitperf *jp, const char *name, const void *addr, size_t len,
		      uint64_t *index)
{
	struct jitperf_code c = { .size = sizeof(c), .name = name, .addr = addr, .len = len };

	if (index)
		*index = 0;
	if (!jp)
		jp = jitperf_default();
	if (!outputs_of(jp))
		return 0;       /* inactive: a cheap no-op */
	return load(jp, &c, index);
}

int jitperf_code_load_ex(jitperf *jp, const struct jitperf_code *code, uint64_t *index)
{
	struct jitperf_code c;
	int err;

	if (index)
		*index = 0;
	if (!code)
		return -EINVAL;
	if (!jp)
		jp = jitperf_default();
	if (!outputs_of(jp))
		return 0;       /* inactive: a cheap no-op */
	if (code->size == sizeof(c))
		return load(jp, code, index);     /* this library's struct: nothing to convert */
	err = jp_opts_copy(&c, sizeof(c), code, code->size);
	if (err)
		return err;
	return load(jp, &c, index);
}

/*
 * The batch (lib/codebatch.h): the same records as n loads, made before
 * the lock into two buffers, the perf map lines back to back and the
 * jitdump units back to back, and written under it with one write() each.
 * A typical object's records fit on the stack; bigger ones grow on the heap.
 */
#define BATCH_META  4096
#define BATCH_DUMP  12288

struct batch {
	struct jp_jitdump_unit *u;
	struct iovec           *iov;
	char                   *lines;
	size_t                  lines_len;
	unsigned char          *dump, *dump_heap;
	size_t                  dump_len, dump_cap;
	void                   *meta_heap;
};

/* Room for need more bytes of jitdump units (and a twin's tail after them). */
static int dump_room(struct batch *b, size_t need)
{
	size_t cap;
	unsigned char *p;

	need += JP_TWIN_TAIL;
	if (b->dump_cap - b->dump_len >= need)
		return 0;
	if (need > SIZE_MAX / 2 - b->dump_len)
		return -ENOMEM;
	cap = 2 * (b->dump_len + need);
	if (!(p = malloc(cap)))
		return -ENOMEM;
	memcpy(p, b->dump, b->dump_len);
	free(b->dump_heap);
	b->dump = b->dump_heap = p;
	b->dump_cap = cap;
	return 0;
}

/* Code c's jitdump unit at the end of b->dump; its buf is set once all are made. */
static int batch_unit(struct batch *b, const struct jitperf_code *c, struct jp_jitdump_unit *u)
{
	int err = prepare_unit(c, u, b->dump + b->dump_len, b->dump_cap - b->dump_len);

	if (!err && u->heap) {
		/* it did not fit: the buffer grows, and the unit moves in */
		err = dump_room(b, u->len);
		if (!err)
			memcpy(b->dump + b->dump_len, u->heap, u->len);
		jp_jitdump_unit_free(u);
	}
	if (!err)
		b->dump_len += u->len;
	return err;
}

/*
 * About the size of c's jitdump unit, without walking its lines: the
 * buffer of a big object is sized once, not grown and copied over and
 * over.  Rows mostly name the file of the first.
 */
static size_t unit_estimate(const struct jitperf_code *c)
{
	size_t n = sizeof(struct jitdump_code_load) + strlen(c->name) + 1 + c->len + JP_TWIN_TAIL;

	if (c->nlines)
		n += sizeof(struct jitdump_debug_info) + 8 +
		     c->nlines * (sizeof(struct jitdump_debug_entry) + 1 +
				  (c->lines[0].file ? strlen(c->lines[0].file) : 0));
	if (c->eh_frame_len)
		n += sizeof(struct jitdump_unwinding_info) + 8 + 2 * c->eh_frame_len + 16;
	return n;
}

/* Both outputs' records of the n functions, in b. */
static int batch_prepare(struct batch *b, const struct jitperf_code *c, size_t n,
			 unsigned outputs, unsigned char *meta, unsigned char *dump)
{
	size_t map_need = 0, need, at = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		if (c[i].size != sizeof(c[i]))
			return -EINVAL;
		err = check_code(&c[i]);
		if (err)
			return err;
		if (outputs & JITPERF_PERFMAP)
			map_need += strlen(c[i].name) + JP_PERFMAP_LINE_EXTRA;
	}
	need = n * sizeof(*b->u) + (2 * n + 1) * sizeof(*b->iov) + map_need;
	if (need > BATCH_META && !(meta = b->meta_heap = malloc(need)))
		return -ENOMEM;
	b->u = (struct jp_jitdump_unit *)meta;
	b->iov = (struct iovec *)(b->u + n);
	b->lines = (char *)(b->iov + 2 * n + 1);
	if (outputs & JITPERF_PERFMAP)
		for (size_t i = 0; i < n; i++)
			b->lines_len += jp_perfmap_line(b->lines + b->lines_len,
							(uintptr_t)c[i].addr, c[i].len, c[i].name,
							strlen(c[i].name));
	if (!(outputs & JITPERF_JITDUMP))
		return 0;
	b->dump = dump;
	b->dump_cap = BATCH_DUMP;
	if (n > 1) {
		size_t est = 0;

		for (size_t i = 0; i < n; i++)
			est += unit_estimate(&c[i]);
		if (est > BATCH_DUMP && (b->dump_heap = malloc(est))) {
			b->dump = b->dump_heap;
			b->dump_cap = est;
		}
	}
	for (size_t i = 0; i < n; i++) {
		err = batch_unit(b, &c[i], &b->u[i]);
		if (err)
			return err;
	}
	/* the buffer may have moved while it grew */
	for (size_t i = 0; i < n; i++) {
		b->u[i].buf = b->dump + at;
		at += b->u[i].len;
	}
	return 0;
}

/*
 * In standby nothing is written: each load keeps, with its own time, what
 * the wake needs (jitperf_code_load_ex).  All or nothing, as a batch.
 */
static int load_each(jitperf *jp, const struct jitperf_code *c, size_t n, uint64_t *index)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err; i++)
		err = jitperf_code_load_ex(jp, &c[i], &index[i]);
	if (err) {
		for (i = 0; i < n; i++)
			if (index[i])
				jitperf_code_unload(jp, index[i]);
		memset(index, 0, n * sizeof(*index));
	}
	return err;
}

int jitperf__code_load_batch(jitperf *jp, const struct jitperf_code *c, size_t n,
			     uint64_t *index)
{
	unsigned char meta[BATCH_META] __attribute__((aligned(16))), dump[BATCH_DUMP];
	struct batch b = { 0 };
	uint64_t map_mark = 0;
	unsigned outputs;
	size_t added = 0;
	int err;

	if (!jp || (n && (!c || !index)))
		return -EINVAL;         /* not API: its caller has the session */
	if (n > JITPERF__BATCH_MAX)
		return -E2BIG;
	if (n)
		memset(index, 0, n * sizeof(*index));
	outputs = outputs_of(jp);
	if (!outputs || !n)
		return 0;       /* inactive: a cheap no-op */
	if (outputs & JITPERF_STANDBY)
		return load_each(jp, c, n, index);
	for (size_t i = 0; i < n; i++)
		if (c[i].size == sizeof(c[i]) && c[i].compile)
			return load_each(jp, c, n, index);     /* code of compiles: named one by one */
	err = batch_prepare(&b, c, n, outputs, meta, dump);
	if (err)
		goto out;

	pthread_mutex_lock(&jp->lock);
	if (!jp->outputs)               /* closed meanwhile */
		goto unlock;
	for (; added < n && !err; added++) {
		if (jp->jitdump && b.dump)
			jp_jitdump_prefetch(jp->jitdump, &b.u[added]);
		err = jp_codetab_add(&jp->codes, (uintptr_t)c[added].addr, c[added].len,
				     c[added].name, strlen(c[added].name), &index[added]);
	}
	if (err)
		added--;                /* the failed one added nothing */
	if (!err && jp->perfmap && b.lines_len) {
		map_mark = jp_perfmap_mark(jp->perfmap);
		err = jp_perfmap_append(jp->perfmap, b.lines, b.lines_len);
	}
	if (!err && jp->jitdump && b.dump) {
		/* one clock read for the object: its records share one time */
		err = jp_jitdump_commit_many(jp->jitdump, b.u, n, index, jp_monotonic_ns(), b.iov);
		if (err && jp->perfmap && b.lines_len)
			jp_perfmap_rollback(jp->perfmap, map_mark);
	}
	if (err) {
		while (added--)
			jp_codetab_undo(jp->codes);
		memset(index, 0, n * sizeof(*index));
	}
unlock:
	pthread_mutex_unlock(&jp->lock);
out:
	free(b.meta_heap);
	free(b.dump_heap);
	if (err) {
		jp_debug("cannot register a batch of %zu functions: %s", n, jitperf_strerror(err));
		return err;
	}
	for (size_t i = 0; i < n && index[i]; i++)
		jp_instr_code_event(jp, JPT_CODE_LOAD, index[i], (uintptr_t)c[i].addr, c[i].len,
				    c[i].name);
	return 0;
}

int jitperf_code_move(jitperf *jp, uint64_t index, const void *new_addr)
{
	struct jp_code_entry *e;
	uint64_t old, len, dump_mark = 0;
	int err = 0;

	if (!new_addr)
		return -EINVAL;
	if (!jp)
		jp = jitperf_default();
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
		jp_instr_code_event(jp, JPT_CODE_MOVE, index, (uintptr_t)new_addr, len, NULL);
	return err;
}

int jitperf_code_unload(jitperf *jp, uint64_t index)
{
	struct jp_code_entry *e;
	uint64_t addr = 0, len = 0;
	int err = 0;

	if (!jp)
		jp = jitperf_default();
	if (!outputs_of(jp))
		return 0;
	pthread_mutex_lock(&jp->lock);
	e = jp_codetab_get(jp->codes, index);
	if (!e || !e->live) {
		err = -ENOENT;
	} else {
		/* no jitdump record exists for this; a later load at addr wins by time */
		e->live = 0;
		free(e->keep);          /* standby: unloaded code is not written at the wake */
		e->keep = NULL;
		addr = e->addr;
		len = e->len;
	}
	pthread_mutex_unlock(&jp->lock);
	if (!err)
		jp_instr_code_event(jp, JPT_CODE_UNLOAD, index, addr, len, NULL);
	return err;
}
