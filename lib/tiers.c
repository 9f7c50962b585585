/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tiers and compiles: jitperf_tier_name, _tier_request, _compile_begin,
 * _compile_end, and the install of code a compile made (doc/tiers.md).
 *
 * - The session lock orders everything: the compile table, the tier tags,
 *   and the records, each stamped under it, so an install carries its
 *   CODE_LOAD's time.
 * - Each write() (jp_write_whole) on an O_APPEND descriptor holds whole
 *   records: in the page cache when the call returns, whole or not at
 *   all, as the jitdump's records are (doc/registration.md).
 * - A compile's BEGIN is written with the first record that names it (its
 *   END, an INSTALL of its code, the BEGIN of a compile nested in it), or
 *   at close: a begin and end pair costs one write().  So a record that
 *   names a compile always follows its BEGIN, but the file is not in time
 *   order, and a killed process loses the compiles it had open.
 * - The file is made beside the jitdump when the first record is written:
 *   a JIT that uses no tiers leaves none.  Without a jitdump (perfmap only)
 *   nothing is written, but compiles are known and code is named.  In
 *   standby the records are held back in memory and written at the wake.
 * - A compile's entry stays until the session closes: its code may be
 *   loaded after it ended.  Entries live in blocks, function names in an
 *   arena: nothing moves as the table grows.
 * - Nesting: each thread knows its innermost open compile; a compile
 *   begun on it nests in the first of that one and its parents that is
 *   still open (a compile may end on another thread).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "core.h"
#include "format/tiers.h"

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)
#define BLOCK 256               /* compiles per block */
#define CHUNK_SIZE (16 * 1024)  /* function names per arena chunk */

struct compile {
	const char *func;       /* in the arena */
	uint64_t    parent;
	uint64_t    begin_ts;
	uint32_t    tier;
	uint32_t    tid;        /* that began it */
	unsigned    open : 1;
	unsigned    written : 1;        /* its BEGIN is in the file (or held back) */
};

struct chunk {
	struct chunk *prev;
	size_t        used, cap;
	char          text[];
};

struct jp_tiers {
	uint64_t         serial;       /* tells this table apart in a thread's innermost compile */
	char             tags[JPTIERS_TIERS][JPTIERS_TAG_MAX + 1];
	uint64_t         n;            /* compiles 1..n */
	uint64_t         nblocks, dircap;
	struct compile **blocks;
	struct chunk    *names;
	int              fd;           /* jit-<pid>.tiers, -1 until the first record */
	uint64_t         size;         /* its size: where a failed write is cut back to */
	char            *path;
	int              announce;     /* a fork child: its file starts with the tags set */
	uint64_t         forked_n;     /* a fork child: compiles 1..forked_n are the parent's */
	unsigned char   *scratch;      /* the records of one write, kept for the next */
	size_t           scratch_len, scratch_cap;
	unsigned char   *held;         /* standby: the records, until the wake */
	size_t           held_len, held_cap;
};

/* This thread's innermost open compile, of the table whose serial it names. */
static __thread struct {
	uint64_t serial;
	uint64_t id;
} innermost;

static uint64_t serials;

static unsigned outputs_of(const jitperf *jp)
{
	return __atomic_load_n(&jp->outputs, __ATOMIC_RELAXED);
}

/* jp->lock held: the table, made at first use. */
static struct jp_tiers *tiers_of(struct jitperf *jp)
{
	struct jp_tiers *t = jp->tiers;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < JPTIERS_TIERS; i++)
		snprintf(t->tags[i], sizeof(t->tags[i]), "tier%u", i);
	t->fd = -1;
	return jp->tiers = t;
}

static struct compile *compile_get(const struct jp_tiers *t, uint64_t id)
{
	if (!t || id == 0 || id > t->n)
		return NULL;
	id--;
	return &t->blocks[id / BLOCK][id % BLOCK];
}

static const char *arena_copy(struct chunk **top, const char *s, size_t len)
{
	struct chunk *c = *top;
	char *p;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > CHUNK_SIZE ? len + 1 : CHUNK_SIZE;

		if (!(c = malloc(sizeof(*c) + cap)))
			return NULL;
		c->prev = *top;
		c->used = 0;
		c->cap = cap;
		*top = c;
	}
	p = c->text + c->used;
	memcpy(p, s, len + 1);
	c->used += len + 1;
	return p;
}

/* A new compile, id t->n + 1 (not yet counted: compile_commit does). */
static struct compile *compile_new(struct jp_tiers *t, const char *func, size_t flen)
{
	struct compile *c;

	if (t->n == t->nblocks * BLOCK) {
		if (t->nblocks == t->dircap) {
			uint64_t cap = t->dircap ? 2 * t->dircap : 16;
			struct compile **d = realloc(t->blocks, cap * sizeof(*d));

			if (!d)
				return NULL;
			t->blocks = d;
			t->dircap = cap;
		}
		if (!(t->blocks[t->nblocks] = malloc(BLOCK * sizeof(struct compile))))
			return NULL;
		t->nblocks++;
	}
	c = &t->blocks[t->n / BLOCK][t->n % BLOCK];
	if (!(c->func = arena_copy(&t->names, func, flen)))
		return NULL;
	return c;
}

/* The first of id and its parents that is still open, or 0. */
static uint64_t open_ancestor(const struct jp_tiers *t, uint64_t id)
{
	const struct compile *c;

	while ((c = compile_get(t, id)) && !c->open)
		id = c->parent;
	return c ? id : 0;
}

/* ---- the records of one write, gathered in t->scratch */

static void *scratch_add(struct jp_tiers *t, size_t n)
{
	void *p;

	if (t->scratch_cap - t->scratch_len < n) {
		size_t cap = 2 * (t->scratch_len + n) + 256;
		unsigned char *q = realloc(t->scratch, cap);

		if (!q)
			return NULL;
		t->scratch = q;
		t->scratch_cap = cap;
	}
	p = t->scratch + t->scratch_len;
	t->scratch_len += n;
	return p;
}

/* The length of a record: its fixed part and s, NUL-terminated, padded to 8. */
static int record_len(size_t size, const char *s, size_t *total)
{
	size_t slen = s ? strlen(s) + 1 : 0;

	if (slen > UINT32_MAX - size - 8)
		return -E2BIG;
	*total = ALIGN8(size + slen);
	return 0;
}

/* The record (total bytes, from record_len) at dst; its size into the header. */
static void record_put(unsigned char *dst, size_t total, void *fixed, size_t size, const char *s)
{
	size_t slen = s ? strlen(s) + 1 : 0;

	((struct jptiers_record_header *)fixed)->size = (uint32_t)total;
	memcpy(dst, fixed, size);
	if (slen)
		memcpy(dst + size, s, slen);
	memset(dst + size + slen, 0, total - size - slen);
}

static int scratch_record(struct jp_tiers *t, void *fixed, size_t size, const char *s)
{
	unsigned char *p;
	size_t total;
	int err;

	if ((err = record_len(size, s, &total)))
		return err;
	if (!(p = scratch_add(t, total)))
		return -ENOMEM;
	record_put(p, total, fixed, size, s);
	return 0;
}

static int scratch_begin(struct jp_tiers *t, uint64_t id)
{
	const struct compile *c = compile_get(t, id);
	struct jptiers_compile_begin r;

	memset(&r, 0, sizeof(r));
	r.h.type = JPTIERS_COMPILE_BEGIN;
	r.h.timestamp = c->begin_ts;
	r.id = id;
	r.parent = c->parent;
	r.tier = c->tier;
	r.tid = c->tid;
	return scratch_record(t, &r, sizeof(r), c->func);
}

/*
 * The BEGINs not yet written of id and the compiles it nests in, outermost
 * first.  They are the nearest ones: a BEGIN is written after its parent's.
 */
static int scratch_unwritten(struct jp_tiers *t, uint64_t id)
{
	uint64_t depth = 0, top;
	const struct compile *c;
	int err;

	for (top = id; (c = compile_get(t, top)) && !c->written; top = c->parent)
		depth++;
	while (depth--) {
		top = id;
		for (uint64_t i = 0; i < depth; i++)
			top = compile_get(t, top)->parent;
		if ((err = scratch_begin(t, top)))
			return err;
	}
	return 0;
}

/* After the write: the BEGINs scratch_unwritten gathered are written. */
static void mark_written(struct jp_tiers *t, uint64_t id)
{
	struct compile *c;

	for (; (c = compile_get(t, id)) && !c->written; id = c->parent)
		c->written = 1;
}

/* ---- the file */

/* jit-<pid>.dump -> jit-<pid>.tiers, beside it */
static char *tiers_path(const char *dump)
{
	size_t n = strlen(dump);
	char *p = malloc(n + 2);

	if (!p)
		return NULL;
	memcpy(p, dump, n + 1);
	if (n > 5 && !strcmp(p + n - 5, ".dump"))
		n -= 5;
	strcpy(p + n, ".tiers");
	return p;
}

static int put_tag(struct iovec *iov, unsigned char *buf, unsigned tier, const char *tag,
		   uint64_t ts);

/*
 * jp->lock held: make the file with its header and what comes first
 * (lead: the records held back), and in a fork child the tags in force.
 * Each write is whole; the file is removed again if the first fails.
 */
static int file_open(struct jitperf *jp, struct jp_tiers *t, const void *lead, size_t lead_len)
{
	struct jptiers_file_header h;
	unsigned char tagbuf[JPTIERS_TIERS][sizeof(struct jptiers_tier_name) + JPTIERS_TAG_MAX + 8];
	struct iovec iov[2 + JPTIERS_TIERS];
	uint64_t ts = jp_monotonic_ns();
	int n = 0, err;

	if (!(t->path = tiers_path(jp_jitdump_path(jp->jitdump))))
		return -ENOMEM;
	err = jp_create_fresh(t->path, O_WRONLY | O_APPEND, &t->fd);
	if (err)
		goto fail;
	t->size = 0;
	memset(&h, 0, sizeof(h));
	h.magic = JPTIERS_MAGIC;
	h.version = JPTIERS_VERSION;
	h.header_size = sizeof(h);
	h.pid = (uint32_t)jp->pid;
	h.timestamp = ts;
	h.clock = JPTIERS_CLOCK_MONOTONIC;
	iov[n].iov_base = &h;
	iov[n++].iov_len = sizeof(h);
	if (t->announce)
		for (unsigned i = 0; i < JPTIERS_TIERS; i++) {
			char dflt[16];

			snprintf(dflt, sizeof(dflt), "tier%u", i);
			if (strcmp(t->tags[i], dflt))
				n += put_tag(&iov[n], tagbuf[i], i, t->tags[i], ts);
		}
	if (lead_len) {
		iov[n].iov_base = (void *)lead;
		iov[n++].iov_len = lead_len;
	}
	err = jp_write_whole(t->fd, iov, n, &t->size);
	if (err) {
		jp_debug("cannot write %s: %s", t->path, strerror(-err));
		jp_remove_own(t->path, t->fd);
		close(t->fd);
		t->fd = -1;
		goto fail;
	}
	t->announce = 0;
	return 0;
fail:
	free(t->path);
	t->path = NULL;
	return err;
}

/*
 * jp->lock held: one record of n bytes, into the file (made when this is
 * its first), held back in standby, or nowhere without a jitdump.
 */
static int emit(struct jitperf *jp, struct jp_tiers *t, const void *rec, size_t n)
{
	struct iovec iov = { (void *)rec, n };

	if (jp->outputs & JITPERF_STANDBY) {
		if (t->held_cap - t->held_len < n) {
			size_t cap = 2 * (t->held_len + n) + 4096;
			unsigned char *p = realloc(t->held, cap);

			if (!p)
				return -ENOMEM;
			t->held = p;
			t->held_cap = cap;
		}
		memcpy(t->held + t->held_len, rec, n);
		t->held_len += n;
		return 0;
	}
	if (!jp->jitdump)
		return 0;
	if (t->fd < 0)
		return file_open(jp, t, rec, n);
	return jp_write_whole(t->fd, &iov, 1, &t->size);
}

static int put_tag(struct iovec *iov, unsigned char *buf, unsigned tier, const char *tag,
		   uint64_t ts)
{
	struct jptiers_tier_name r;
	size_t len;

	memset(&r, 0, sizeof(r));
	r.h.type = JPTIERS_TIER_NAME;
	r.h.timestamp = ts;
	r.tier = tier;
	if (record_len(sizeof(r), tag, &len))
		return 0;                       /* a checked tag: it fits buf */
	record_put(buf, len, &r, sizeof(r), tag);
	iov->iov_base = buf;
	iov->iov_len = len;
	return 1;
}

/* ---- the API */

static int check_tag(const char *tag)
{
	size_t n = strlen(tag);

	if (n == 0 || n > JPTIERS_TAG_MAX)
		return -EINVAL;
	for (const unsigned char *p = (const unsigned char *)tag; *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '[' || *p == ']')
			return -EINVAL;
	return 0;
}

/*
 * Under the lock, the session still open: the table, or NULL with *err
 * (-ENOMEM) or without (closed meanwhile: nothing to do).
 */
static struct jp_tiers *lock_tiers(struct jitperf *jp, int *err)
{
	struct jp_tiers *t;

	*err = 0;
	pthread_mutex_lock(&jp->lock);
	if (!jp->outputs) {
		pthread_mutex_unlock(&jp->lock);
		return NULL;
	}
	if (!(t = tiers_of(jp))) {
		pthread_mutex_unlock(&jp->lock);
		*err = -ENOMEM;
	}
	return t;
}

/* jp->lock held: the records gathered in t->scratch, in one write(). */
static int emit_scratch(struct jitperf *jp, struct jp_tiers *t)
{
	return emit(jp, t, t->scratch, t->scratch_len);
}

int jitperf_tier_name(jitperf *jp, unsigned tier, const char *tag)
{
	struct jptiers_tier_name r;
	struct jp_tiers *t;
	char dflt[16];
	int err;

	if (tier >= JPTIERS_TIERS || (tag && check_tag(tag)))
		return -EINVAL;
	if (!jp)
		jp = jitperf_default();
	if (!outputs_of(jp))
		return 0;
	snprintf(dflt, sizeof(dflt), "tier%u", tier);
	if (!tag)
		tag = dflt;
	if (!(t = lock_tiers(jp, &err)))
		return err;
	if (strcmp(t->tags[tier], tag)) {
		memset(&r, 0, sizeof(r));
		r.h.type = JPTIERS_TIER_NAME;
		r.h.timestamp = jp_monotonic_ns();
		r.tier = tier;
		t->scratch_len = 0;
		err = scratch_record(t, &r, sizeof(r), tag);
		if (!err)
			err = emit_scratch(jp, t);
		if (!err)
			strcpy(t->tags[tier], tag);
	}
	pthread_mutex_unlock(&jp->lock);
	return err;
}

int jitperf_tier_request(jitperf *jp, const char *func, unsigned tier)
{
	struct jptiers_tier_request r;
	struct jp_tiers *t;
	int err;

	if (!func || tier >= JPTIERS_TIERS)
		return -EINVAL;
	if (!jp)
		jp = jitperf_default();
	if (!outputs_of(jp))
		return 0;
	memset(&r, 0, sizeof(r));
	r.h.type = JPTIERS_TIER_REQUEST;
	r.tier = tier;
	r.tid = (uint32_t)jp_gettid();
	if (!(t = lock_tiers(jp, &err)))
		return err;
	r.h.timestamp = jp_monotonic_ns();
	t->scratch_len = 0;
	err = scratch_record(t, &r, sizeof(r), func);
	if (!err)
		err = emit_scratch(jp, t);
	pthread_mutex_unlock(&jp->lock);
	return err;
}

/* Writes nothing: the BEGIN goes out with the first record that names the compile. */
int jitperf_compile_begin(jitperf *jp, const char *func, unsigned tier, uint64_t *compile)
{
	struct jp_tiers *t;
	struct compile *c;
	size_t flen;
	int err;

	if (compile)
		*compile = 0;
	if (!func || !compile || tier >= JPTIERS_TIERS)
		return -EINVAL;
	if (!jp)
		jp = jitperf_default();
	if (!outputs_of(jp))
		return 0;
	flen = strlen(func);
	if (flen > UINT32_MAX - sizeof(struct jptiers_compile_begin) - 8)
		return -E2BIG;          /* its BEGIN could never be written */
	if (!(t = lock_tiers(jp, &err)))
		return err;
	if (!(c = compile_new(t, func, flen))) {
		pthread_mutex_unlock(&jp->lock);
		return -ENOMEM;
	}
	c->parent = innermost.serial == t->serial ? open_ancestor(t, innermost.id) : 0;
	c->tier = tier;
	c->tid = (uint32_t)jp_gettid();
	c->open = 1;
	c->written = 0;
	c->begin_ts = jp_monotonic_ns();
	*compile = ++t->n;
	innermost.serial = t->serial;
	innermost.id = t->n;
	pthread_mutex_unlock(&jp->lock);
	return 0;
}

int jitperf_compile_end(jitperf *jp, uint64_t compile, int status)
{
	struct jptiers_compile_end r;
	struct jp_tiers *t;
	struct compile *c;
	int err;

	if (status > 0)
		return -EINVAL;
	if (!jp)
		jp = jitperf_default();
	if (!outputs_of(jp))
		return 0;
	memset(&r, 0, sizeof(r));
	r.h.type = JPTIERS_COMPILE_END;
	r.id = compile;
	r.status = status;
	r.tid = (uint32_t)jp_gettid();
	if (!(t = lock_tiers(jp, &err)))
		return err;
	c = compile_get(t, compile);
	if (!c || !c->open) {
		err = -ENOENT;
		goto unlock;
	}
	r.h.timestamp = jp_monotonic_ns();
	t->scratch_len = 0;
	err = scratch_unwritten(t, compile);
	if (!err)
		err = scratch_record(t, &r, sizeof(r), NULL);
	if (!err)
		err = emit_scratch(jp, t);
	if (err)
		goto unlock;            /* nothing written: the compile stays open */
	mark_written(t, compile);
	c->open = 0;
	if (innermost.serial == t->serial && innermost.id == compile)
		innermost.id = open_ancestor(t, c->parent);
unlock:
	pthread_mutex_unlock(&jp->lock);
	if (err == -ENOENT)
		jp_debug("jitperf_compile_end: no open compile %llu", (unsigned long long)compile);
	return err;
}

/* ---- what code registration and the session call */

/* jp->lock held: func[tag], or func with tags off, in space or malloc'ed. */
static int tier_name(struct jitperf *jp, const char *func, const char *tag, char *space,
		     size_t len, char **name)
{
	size_t need = strlen(func) + strlen(tag) + 3;

	*name = space;
	if (need > len && !(*name = malloc(need)))
		return -ENOMEM;
	if (jp->tier_tags)
		snprintf(*name, need, "%s[%s]", func, tag);
	else
		snprintf(*name, need, "%s", func);
	return 0;
}

int jp_tiers_name(struct jitperf *jp, const char *func, unsigned tier, char *space, size_t len,
		  char **name)
{
	struct jp_tiers *t;
	int err;

	if (!(t = lock_tiers(jp, &err)))
		return err ? err : -EBADF;      /* closed meanwhile */
	err = tier_name(jp, func, t->tags[tier], space, len, name);
	pthread_mutex_unlock(&jp->lock);
	return err;
}

int jp_tiers_code_name(struct jitperf *jp, uint64_t compile, char *space, size_t len,
		       char **name)
{
	const struct compile *c;
	int err = 0;

	pthread_mutex_lock(&jp->lock);
	c = compile_get(jp->tiers, compile);
	if (!c) {
		err = -ENOENT;
		goto unlock;
	}
	if (name)
		err = tier_name(jp, c->func, jp->tiers->tags[c->tier], space, len, name);
unlock:
	pthread_mutex_unlock(&jp->lock);
	if (err == -ENOENT)
		jp_debug("code of compile %llu: no such compile", (unsigned long long)compile);
	return err;
}

int jp_tiers_install(struct jitperf *jp, uint64_t compile, uint64_t index, uint64_t addr,
		     uint64_t len, uint64_t ts)
{
	struct jp_tiers *t = jp->tiers;
	struct jptiers_install r;
	int err;

	if (!compile_get(t, compile))
		return -ENOENT;
	memset(&r, 0, sizeof(r));
	r.h.type = JPTIERS_INSTALL;
	r.h.timestamp = ts;
	r.compile = compile;
	r.code_index = index;
	r.code_addr = addr;
	r.code_size = len;
	r.tid = (uint32_t)jp_gettid();
	t->scratch_len = 0;
	err = scratch_unwritten(t, compile);
	if (!err)
		err = scratch_record(t, &r, sizeof(r), NULL);
	if (!err)
		err = emit_scratch(jp, t);
	if (!err)
		mark_written(t, compile);
	return err;
}

int jp_tiers_wake(struct jitperf *jp)
{
	struct jp_tiers *t = jp->tiers;
	int err;

	if (!t || !t->held_len)
		return 0;
	err = file_open(jp, t, t->held, t->held_len);
	if (err)
		return err;
	free(t->held);
	t->held = NULL;
	t->held_len = t->held_cap = 0;
	return 0;
}

/* The BEGINs of the compiles still open (a fork child's own only), and CLOSE. */
static int write_close(struct jitperf *jp, struct jp_tiers *t)
{
	struct jptiers_record_header h;
	size_t opens = 0;
	int err = 0;

	t->scratch_len = 0;
	for (uint64_t id = t->forked_n + 1; id <= t->n && !err; id++)
		if (compile_get(t, id)->open && !compile_get(t, id)->written) {
			err = scratch_unwritten(t, id);
			mark_written(t, id);
			opens++;
		}
	if (err || (t->fd < 0 && !opens))
		return err;             /* no file: a CLOSE alone makes none */
	memset(&h, 0, sizeof(h));
	h.type = JPTIERS_CLOSE;
	h.timestamp = jp_monotonic_ns();
	err = scratch_record(t, &h, sizeof(h), NULL);
	return err ? err : emit_scratch(jp, t);
}

int jp_tiers_close(struct jitperf *jp)
{
	struct jp_tiers *t = jp->tiers;
	struct chunk *c, *prev;
	int err;

	if (!t)
		return 0;
	err = write_close(jp, t);
	if (t->fd >= 0)
		close(t->fd);
	for (c = t->names; c; c = prev) {
		prev = c->prev;
		free(c);
	}
	for (uint64_t i = 0; i < t->nblocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	free(t->held);
	free(t->scratch);
	free(t->path);
	free(t);
	jp->tiers = NULL;
	return err;
}

void jp_tiers_atfork_child(struct jitperf *jp)
{
	struct jp_tiers *t = jp->tiers;

	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);           /* the parent's: neither written nor cut */
	t->fd = -1;
	free(t->path);
	t->path = NULL;
	t->forked_n = t->n;     /* the parent writes those still open at its close */
	/* in standby the records held back name the tags already */
	t->announce = !(jp->outputs & JITPERF_STANDBY);
}

int jp_parse_tier_tags(const char *s, int *tags)
{
	*tags = 1;
	if (!s || !strcmp(s, "1"))
		return 0;
	if (!strcmp(s, "0")) {
		*tags = 0;
		return 0;
	}
	jp_env_error("JITPERF_TIER_TAGS", "'%s' is neither '0' nor '1'", s);
	return -EINVAL;
}
