/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf.data samples as perf script prints them (comm, pid/tid, time,
 * period, event; then one "ip sym (dso)" per callchain entry) and as
 * stackcollapse-perf.pl reads that text, without the text:
 *
 *  - the callchain is walked as perf's thread__resolve_callchain_sample
 *    walks it: context markers switch between kernel and user maps, an
 *    unknown marker drops the whole chain, at most 127 entries are kept
 *    (perf script's default --max-stack);
 *  - an entry without a map is "[unknown] ([unknown])", with a map but no
 *    symbol "[unknown] (dso)", its address map-relative as perf prints it;
 *  - names are then split at "->", tidied and annotated by the same code
 *    that reads perf script text (read/stackframe.c).
 *
 * A frame's tidied pieces are kept per symbol, so a symbol met again costs
 * one hash lookup.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pdscript.h"
#include "pdsession.h"
#include "perfdata.h"
#include "stackframe.h"
#include "util.h"

#define MAX_STACK 127          /* perf script's default --max-stack */
#define PRELOAD_MIN (16u << 20)   /* records from which kallsyms is read by a thread */

static inline int is_blank(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

struct piece {
	const char *p;             /* NULL: off is in the scratch buffer */
	size_t      off, len;
};

/* tidied pieces of one symbol (for one value of the java rule) */
struct cached {
	const struct pd_sym *sym;
	int                  java;
	uint32_t             first, n;  /* in pieces[] */
};

/* small: one is made for every callchain met, and fresh memory is dear */
struct stack_ent {
	uint64_t                 hash, gen;
	const struct pd_thread  *t;
	const unsigned char     *ips;        /* the callchain, NULL if none */
	uint64_t                 nr;         /* its entries; without: the sample's ip */
	const struct folded_ent *fold;
	uint32_t                 mode;       /* without a callchain: the cpu mode */
	uint32_t                 skip;       /* the process name "0": no sample */
};

#define STACK_CACHE_MAX (256u << 20)
#define STACK_CHUNK     4096u
#define STACK(r, i)     (&(r)->stacks[(i) / STACK_CHUNK][(i) % STACK_CHUNK])

/*
 * Folded frames met before, whatever callchain made them: raw callchains
 * differ in every return address, so many fold alike, and they share one
 * copy (and one ps_sample.stack_id, which spares the writers work too),
 * kept in the blocks: stack entries point at them.
 */
struct folded_ent {
	uint64_t             hash;
	struct ps_str        pname, comm;
	const struct ps_str *frames;
	size_t               nframes;
	uint64_t             id;
};

struct reader {
	unsigned              flags;
	struct pd_session    *s;
	ps_sample_fn          fn;
	pd_raw_fn             rawfn;
	void                 *arg;
	struct pd_script_info *info;

	char                 *event;    /* filter: the first sample's event */
	struct ps_sample      cur;
	char                 *pname;
	size_t                pname_cap;

	struct pd_frame      *locs;     /* the sample's places, leaf first */
	size_t                nlocs, cap_locs;
	struct piece         *frames;   /* leaf first while built */
	size_t                nframes, cap_frames;
	size_t               *groups;   /* first piece of each callchain entry */
	size_t                ngroups, cap_groups;
	struct ps_str        *out;
	size_t                cap_out;
	char                 *scratch;
	size_t                scratch_len, scratch_cap;

	struct cached        *cache;    /* open addressing on the symbol pointer */
	size_t                cache_mask, cache_n;
	struct piece         *cpieces;
	size_t                ncpieces, cap_cpieces;
	/* whole stacks met before: a sample of the same thread and callchain
	 * under the same maps folds to the same frames */
	struct stack_ent    **stacks;    /* in chunks of STACK_CHUNK: never moved or copied */
	size_t                nstacks, nchunks;
	uint32_t             *stack_index;   /* entry + 1, 0 = empty */
	size_t                stack_mask;
	size_t                stack_bytes;   /* kept in blocks; the cache is dropped past a limit */
	struct folded_ent   **folded;        /* open addressing on the contents' hash */
	size_t                folded_mask, nfolded;
	const struct pd_attr *event_attr;    /* the attribute of the kept event */
	uint64_t              last_stack_id;

	char                **blocks;   /* names of cached pieces, never moved */
	size_t                nblocks;
	size_t                block_used, block_size;
};

/* room for len more bytes in the scratch buffer */
static char *scratch_room(struct reader *r, size_t len)
{
	if (rd_grow((void **)&r->scratch, &r->scratch_cap, r->scratch_len + len, 1))
		return NULL;
	return r->scratch + r->scratch_len;
}

static char *block_room(struct reader *r, size_t len)
{
	if (r->nblocks == 0 || r->block_size - r->block_used < len) {
		size_t size = len > (1u << 20) ? len : (1u << 20);
		char **b = realloc(r->blocks, (r->nblocks + 1) * sizeof(*b));

		if (!b)
			return NULL;
		r->blocks = b;
		b[r->nblocks] = malloc(size);
		if (!b[r->nblocks])
			return NULL;
		r->nblocks++;
		r->block_used = 0;
		r->block_size = size;
	}
	return r->blocks[r->nblocks - 1] + r->block_used;
}

/*
 * The frames of one "ip name (mod)" line by stackcollapse's rules, appended
 * to out (pieces in the order the names come); into the never-moving
 * blocks when keep, else the scratch buffer.
 */
static int tidy_pieces(struct reader *r, const char *f, size_t n, const char *pc, size_t pcn,
		       const char *mod, size_t modn, int keep, struct piece **out, size_t *nout,
		       size_t *capout)
{
	int inl = 0;
	struct sf_ctx ctx = {
		.flags = r->flags, .pc = pc, .pcn = pcn, .mod = mod, .modn = modn,
		.java = r->cur.pname.len == 4 && !memcmp(r->pname, "java", 4),
	};

	if (n > 0 && f[0] == '(')          /* process names such as "(/usr/bin/foo)" */
		return 0;
	/* split /->/: empty trailing pieces are dropped, inner ones kept */
	while (n > 0) {
		const char *arrow = memmem(f, n, "->", 2), *rp;
		size_t len = arrow ? (size_t)(arrow - f) : n, rest = arrow ? n - len - 2 : 0, rn;
		struct piece *pc_;
		char *d;

		if (arrow) {
			for (rp = arrow + 2, rn = rest; rn >= 2 && rp[0] == '-' && rp[1] == '>';)
				rp += 2, rn -= 2;
			if (rn == 0)
				rest = 0;
		}
		if (len == 0 && (!arrow || rest == 0))
			break;
		d = keep ? block_room(r, SF_MAX(len, &ctx)) : scratch_room(r, SF_MAX(len, &ctx));
		if (!d || rd_grow((void **)out, capout, *nout + 1, sizeof(**out)))
			return -ENOMEM;
		pc_ = &(*out)[(*nout)++];
		pc_->len = sf_tidy(d, f, len, &ctx, inl);
		if (keep) {
			pc_->p = d;
			r->block_used += pc_->len;
		} else {
			pc_->p = NULL;
			pc_->off = r->scratch_len;
			r->scratch_len += pc_->len;
		}
		inl = 1;
		if (!arrow || rest == 0)
			break;
		f = arrow + 2;
		n = rest;
	}
	return 0;
}


/* the printed line would not split into name and dso where they meet */
static int odd_line(const char *name, const char *mod)
{
	return !name[0] || is_blank(name[0]) || strstr(mod, " (");
}

/*
 * A line the regular expression splits elsewhere, such as a dso named
 * "/memfd:x (deleted)": print it as perf does (with the symbol offset) and
 * read it back as stackcollapse-perf.pl does.
 */
static int odd_entry(struct reader *r, const char *name, uint64_t symoff, int has_sym,
		     const char *pc, const char *mod)
{
	struct ps_stackline st;
	size_t need = strlen(name) + strlen(pc) + strlen(mod) + 40, n, b;
	const char *e;
	char *l;
	int len;

	l = scratch_room(r, need);
	if (!l)
		return -ENOMEM;
	len = has_sym ? snprintf(l, need, "%s %s+0x%" PRIx64 " (%s)", pc, name, symoff, mod)
		      : snprintf(l, need, "%s %s (%s)", pc, name, mod);
	/* the line stays in the scratch buffer, which tidy_pieces may move */
	b = r->scratch_len;
	r->scratch_len += len;
	if (!ps_match_stack(r->scratch + b, len, &st)) {
		r->scratch_len = b;
		return 0;          /* "Unrecognized line": no frame */
	}
	/* s/\+0x[\da-f]+$// */
	for (e = st.func + st.funcn; e > st.func && ((e[-1] >= '0' && e[-1] <= '9') ||
						      (e[-1] >= 'a' && e[-1] <= 'f')); e--)
		;
	n = st.funcn;
	if (e < st.func + st.funcn && e - st.func >= 3 && !memcmp(e - 3, "+0x", 3))
		n = e - 3 - st.func;
	{
		size_t fo = st.func - (r->scratch + b), po = st.pc - (r->scratch + b);
		size_t mo = st.mod - (r->scratch + b), pcn = st.pcn, modn = st.modn;
		char *copy = malloc(len);
		int ret;

		if (!copy)
			return -ENOMEM;
		memcpy(copy, r->scratch + b, len);
		r->scratch_len = b;
		ret = tidy_pieces(r, copy + fo, n, copy + po, pcn, copy + mo, modn, 0, &r->frames,
				  &r->nframes, &r->cap_frames);
		free(copy);
		return ret;
	}
}

static int tidy_line(struct reader *r, const char *name, const char *pc, const char *mod,
		     int keep, struct piece **out, size_t *nout, size_t *capout)
{
	return tidy_pieces(r, name, strlen(name), pc, strlen(pc), mod, strlen(mod), keep, out,
			   nout, capout);
}

static int cache_grow(struct reader *r)
{
	size_t mask = r->cache_mask ? r->cache_mask * 2 + 1 : 255, i;
	struct cached *c = calloc(mask + 1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	for (i = 0; r->cache && i <= r->cache_mask; i++) {
		size_t j;

		if (!r->cache[i].sym)
			continue;
		j = ((uintptr_t)r->cache[i].sym >> 4) * 2 + r->cache[i].java;
		for (j &= mask; c[j].sym; j = (j + 1) & mask)
			;
		c[j] = r->cache[i];
	}
	free(r->cache);
	r->cache = c;
	r->cache_mask = mask;
	return 0;
}

/* the address perf prints for a frame, in hex: made only when a name needs it */
static const char *frame_pc(const struct pd_frame *fr, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	uint64_t v = fr->relative ? fr->loc.addr : fr->ip;
	char tmp[17];
	int n = 0, i;

	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = 0;
	return buf;
}

static const struct cached *cache_get(struct reader *r, const struct pd_sym *sym,
				      const struct pd_map *map, const struct pd_frame *fr)
{
	char pc[24];
	int java = r->cur.pname.len == 4 && !memcmp(r->pname, "java", 4);
	size_t j;
	struct cached *c;

	if ((r->cache_n + 1) * 2 > r->cache_mask && cache_grow(r))
		return NULL;
	j = (((uintptr_t)sym >> 4) * 2 + java) & r->cache_mask;
	for (; r->cache[j].sym; j = (j + 1) & r->cache_mask)
		if (r->cache[j].sym == sym && r->cache[j].java == java)
			return &r->cache[j];
	c = &r->cache[j];
	c->first = (uint32_t)r->ncpieces;
	if (tidy_line(r, sym->name, frame_pc(fr, pc), map->dso->name, 1, &r->cpieces,
		      &r->ncpieces, &r->cap_cpieces))
		return NULL;
	c->n = (uint32_t)(r->ncpieces - c->first);
	c->sym = sym;
	c->java = java;
	r->cache_n++;
	return c;
}

/* a new piece in the scratch buffer: the bytes of a, b and c one after another */
static int scratch_piece(struct reader *r, const char *a, size_t an, const char *b, size_t bn,
			 const char *c, size_t cn)
{
	char *d = scratch_room(r, an + bn + cn);
	struct piece *p;

	if (!d || rd_grow((void **)&r->frames, &r->cap_frames, r->nframes + 1, sizeof(*r->frames)))
		return -ENOMEM;
	memcpy(d, a, an);
	memcpy(d + an, b, bn);
	memcpy(d + an + bn, c, cn);
	p = &r->frames[r->nframes++];
	p->p = NULL;
	p->off = r->scratch_len;
	p->len = an + bn + cn;
	r->scratch_len += p->len;
	return 0;
}

/*
 * What stackcollapse-perf.pl --srcline appends to a frame: the line perf
 * script -F+srcline prints under it, "file.c:12".  Where no line is known
 * perf prints nothing (6.1) or "dso[addr]" (older), which that script
 * reads as the next frame or as "dso": nothing is appended.
 */
static size_t srcline(const struct pd_loc *l, char *buf, size_t size)
{
	const char *file;
	int line, ret;

	if (pd_lines_find(pd_dso_lines(l->map->dso), l->addr, &file, &line))
		return 0;
	ret = snprintf(buf, size, "%s:%d", file, line);
	return ret < 0 ? 0 : (size_t)ret < size ? (size_t)ret : size - 1;
}

/*
 * stackcollapse-perf.pl --inline: addr2line -i names the functions inlined
 * at the address, outermost first; not for perf maps, the kernel and
 * "[...]" objects.  1 when the entry became those frames, 0 when it stays
 * one frame (no DWARF function there).
 */
static int inline_entry(struct reader *r, const struct pd_loc *l)
{
	struct pd_inl inl[16];
	const char *name = l->map->dso->name;
	int n, i, ret;

	if (l->map->dso->kind != PD_DSO_ELF || strstr(name, "kernel.") || name[0] == '[')
		return 0;
	n = pd_lines_inline(pd_dso_lines(l->map->dso), l->addr, inl, 16);
	if (n <= 0)
		return n;
	if (n == 1 && !strcmp(inl[0].name, "??"))
		return 0;
	for (i = n - 1; i >= 0; i--) {
		char ctx[300] = "";
		int cn = 0;

		/* --srcline too: each function with its place, as --context does */
		if (r->flags & PS_SRCLINE)
			cn = snprintf(ctx, sizeof(ctx), ":%s:%d", inl[i].file, inl[i].line);
		if (cn < 0 || (size_t)cn >= sizeof(ctx))
			cn = 0;
		ret = scratch_piece(r, inl[i].name, strlen(inl[i].name), ctx, cn, "", 0);
		if (ret)
			return ret;
	}
	return 1;
}

/* --srcline: each piece of the entry made since first gets ":" and its source line */
static int add_srcline(struct reader *r, const struct pd_loc *l, size_t first)
{
	char sl[PATH_MAX + 24];
	size_t n = srcline(l, sl, sizeof(sl)), i, end = r->nframes;
	int ret;

	if (n == 0)
		return 0;
	for (i = first; i < end; i++) {
		struct piece p = r->frames[i];
		size_t at = r->nframes;

		/* the copy goes to the end, then takes the piece's place */
		if (!p.p) {
			/* scratch_room may move the buffer the piece lies in */
			if (!scratch_room(r, p.len + 1 + n))
				return -ENOMEM;
			ret = scratch_piece(r, r->scratch + p.off, p.len, ":", 1, sl, n);
		} else {
			ret = scratch_piece(r, p.p, p.len, ":", 1, sl, n);
		}
		if (ret)
			return ret;
		r->frames[i] = r->frames[at];
		r->nframes--;
	}
	return 0;
}

static int add_entry_pieces(struct reader *r, const struct pd_frame *fr);

/* one callchain entry (or the sample's ip) as frames */
static int add_entry(struct reader *r, const struct pd_frame *fr)
{
	const struct pd_loc *l = &fr->loc;
	size_t first = r->nframes;
	int ret;

	if (rd_grow((void **)&r->groups, &r->cap_groups, r->ngroups + 1, sizeof(*r->groups)))
		return -ENOMEM;
	r->groups[r->ngroups++] = r->nframes;
	if ((r->flags & PS_INLINE) && l->map) {
		ret = inline_entry(r, l);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	ret = add_entry_pieces(r, fr);
	/* an entry without a map is "[unknown] ([unknown])": no source line */
	if (!ret && (r->flags & PS_SRCLINE) && l->map)
		ret = add_srcline(r, l, first);
	return ret;
}

static int add_entry_pieces(struct reader *r, const struct pd_frame *fr)
{
	const struct pd_loc *l = &fr->loc;
	const char *mod = l->map ? l->map->dso->name : "[unknown]";
	char pc[24];
	size_t i;

	if (odd_line(l->sym ? l->sym->name : "[unknown]", mod))
		return odd_entry(r, l->sym ? l->sym->name : "[unknown]",
				 l->sym ? l->addr - l->sym->start : 0, l->sym != NULL,
				 frame_pc(fr, pc), mod);
	if (l->sym) {
		const struct cached *c = cache_get(r, l->sym, l->map, fr);

		if (!c || rd_grow((void **)&r->frames, &r->cap_frames, r->nframes + c->n,
			       sizeof(*r->frames)))
			return -ENOMEM;
		for (i = 0; i < c->n; i++)
			r->frames[r->nframes++] = r->cpieces[c->first + i];
		return 0;
	}
	return tidy_line(r, "[unknown]", frame_pc(fr, pc), mod, 0, &r->frames, &r->nframes,
			 &r->cap_frames);
}

static int push_loc(struct reader *r, struct pd_thread *t, int kernel, uint64_t ip, int relative)
{
	struct pd_frame *fr;

	if (rd_grow((void **)&r->locs, &r->cap_locs, r->nlocs + 1, sizeof(*r->locs)))
		return -ENOMEM;
	fr = &r->locs[r->nlocs++];
	fr->ip = ip;
	fr->relative = relative;
	fr->kernel = kernel > 0;
	if (kernel < 0) {              /* the hypervisor: nothing names it */
		memset(&fr->loc, 0, sizeof(fr->loc));
		fr->loc.addr = ip;
	} else {
		pd_session_resolve(r->s, t, kernel, ip, &fr->loc);
	}
	return 0;
}

/*
 * The places of a sample, leaf first, as perf's thread__resolve_callchain
 * finds them: context markers switch between kernel and user maps, an
 * unknown marker drops the whole chain, at most MAX_STACK entries.
 */
static int resolve(struct reader *r, struct pd_thread *t, const struct pd_event *ev)
{
	const struct pd_sample *smp = &ev->sample;
	uint64_t i, kept = 0;
	int kernel = 0, mode, ret;

	r->nlocs = 0;
	if (!smp->has_callchain) {
		mode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
		return push_loc(r, mode == PERF_RECORD_MISC_USER ? t : NULL,
				mode == PERF_RECORD_MISC_KERNEL, smp->ip, 0);
	}
	for (i = 0; i < smp->nr && kept < MAX_STACK; i++) {
		uint64_t ip = pd_chain_ip(smp, i);

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL) {
				kernel = 1;
			} else if (ip == (uint64_t)PERF_CONTEXT_USER) {
				kernel = 0;
			} else if (ip == (uint64_t)PERF_CONTEXT_HV) {
				kernel = -1;
			} else {
				/* perf: a corrupted callchain is discarded whole */
				r->nlocs = 0;
				return 0;
			}
			continue;
		}
		kept++;
		ret = push_loc(r, t, kernel, ip, 1);
		if (ret)
			return ret;
	}
	return 0;
}

/* $pname: "comm", "comm-PID" or "comm-PID/TID", read from the header as stackcollapse does */
static int set_pname(struct reader *r, const char *comm, uint32_t pid, uint32_t tid)
{
	char head[128];
	struct ps_header h;
	size_t cl = strlen(comm), n, i;
	int hn;
	char *d;

	hn = snprintf(head, sizeof(head), "%s %u/%u 0.0: ", comm, pid, tid);
	if (hn < 0 || (size_t)hn >= sizeof(head) || !ps_match_header(head, hn, &h)) {
		h.comm = comm;
		h.comm_len = cl;
		h.pid = h.tid = "";
		h.pid_len = h.tid_len = 0;
	}
	n = h.comm_len + h.pid_len + h.tid_len + 4;
	if (rd_grow((void **)&r->pname, &r->pname_cap, n, 1))
		return -ENOMEM;
	d = r->pname;
	memcpy(d, h.comm, h.comm_len);
	d += h.comm_len;
	/* `if (not $tid) { $tid = $pid; $pid = "?" }` */
	int no_tid = h.tid_len == 0 || (h.tid_len == 1 && h.tid[0] == '0');
	if (r->flags & (PS_PID | PS_TID)) {
		*d++ = '-';
		if (no_tid) {
			*d++ = '?';
		} else {
			memcpy(d, h.pid, h.pid_len);
			d += h.pid_len;
		}
	}
	if (r->flags & PS_TID) {
		*d++ = '/';
		memcpy(d, no_tid ? h.pid : h.tid, no_tid ? h.pid_len : h.tid_len);
		d += no_tid ? h.pid_len : h.tid_len;
	}
	r->cur.pname.s = r->pname;
	r->cur.pname.len = d - r->pname;
	for (i = 0; i < r->cur.pname.len; i++)
		if (r->pname[i] == ' ')
			r->pname[i] = '_';
	r->cur.comm.s = r->pname;
	r->cur.comm.len = h.comm_len;
	return 0;
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	__uint128_t m = (__uint128_t)(h ^ v) * 0x9e3779b97f4a7c15ull;

	return (uint64_t)m ^ (uint64_t)(m >> 64);
}

static uint64_t stack_hash(const struct pd_thread *t, const struct pd_event *ev)
{
	const struct pd_sample *smp = &ev->sample;
	uint64_t h = mix((uintptr_t)t, 0x51), v;

	if (!smp->has_callchain)
		return mix(mix(h, smp->ip), ev->misc & PERF_RECORD_MISC_CPUMODE_MASK);
	h = mix(h, smp->nr);
	for (uint64_t i = 0; i < smp->nr; i++) {
		memcpy(&v, smp->chain + 8 * i, 8);
		h = mix(h, v);
	}
	return h;
}

static int stack_same(const struct stack_ent *e, uint64_t h, const struct pd_thread *t,
		      const struct pd_event *ev)
{
	const struct pd_sample *smp = &ev->sample;

	if (e->hash != h || e->t != t)
		return 0;
	if (!smp->has_callchain)
		return !e->ips && e->nr == smp->ip &&
		       e->mode == (ev->misc & PERF_RECORD_MISC_CPUMODE_MASK);
	return e->ips && e->nr == smp->nr && !memcmp(e->ips, smp->chain, 8 * smp->nr);
}

/*
 * The entry of this thread and callchain, or NULL (*slot: where a new one
 * goes).  An entry of an older generation is still right unless a change
 * since touched one of its addresses or its thread: then it is forgotten.
 */
static struct stack_ent *stack_find(struct reader *r, uint64_t h, const struct pd_thread *t,
				    const struct pd_event *ev, uint64_t gen, size_t *slot)
{
	const struct pd_sample *smp = &ev->sample;
	size_t j;

	if (!r->stack_index)
		return *slot = 0, NULL;
	for (j = h & r->stack_mask; r->stack_index[j]; j = (j + 1) & r->stack_mask) {
		struct stack_ent *e = STACK(r, r->stack_index[j] - 1);

		if (!stack_same(e, h, t, ev))
			continue;
		if (e->gen != gen) {
			uint64_t ip = smp->ip;

			if (smp->has_callchain ?
			    pd_session_changed(r->s, e->gen, t, smp->chain, smp->nr) :
			    pd_session_changed(r->s, e->gen, t, (const unsigned char *)&ip, 1)) {
				e->hash = ~e->hash;     /* never matches again */
				continue;
			}
			e->gen = gen;
		}
		return e;
	}
	*slot = j;
	return NULL;
}

static void stack_drop(struct reader *r)
{
	/* the blocks stay (symbol pieces live there too); only the index goes */
	free(r->stack_index);
	r->stack_index = NULL;
	r->stack_mask = 0;
	r->nstacks = 0;
	r->stack_bytes = 0;
	free(r->folded);
	r->folded = NULL;
	r->folded_mask = r->nfolded = 0;
}

static char *keep_bytes(struct reader *r, const void *p, size_t n)
{
	char *d;

	/* frame arrays are kept here too: 8-byte aligned */
	r->block_used = (r->block_used + 7) & ~(size_t)7;
	if (r->nblocks && r->block_used > r->block_size)
		r->block_used = r->block_size;
	d = block_room(r, n ? n : 1);

	if (!d)
		return NULL;
	memcpy(d, p, n);
	r->block_used += n;
	r->stack_bytes += n;
	return d;
}

static uint64_t folded_hash(const struct ps_sample *c)
{
	uint64_t h = mix(c->pname.len, c->comm.len), v;
	size_t i, k;

	for (i = 0; i <= c->nframes; i++) {
		const struct ps_str *p = i ? &c->frames[i - 1] : &c->pname;

		h = mix(h, p->len);
		for (k = 0; k + 8 <= p->len; k += 8) {
			memcpy(&v, p->s + k, 8);
			h = mix(h, v);
		}
		if (k < p->len) {
			v = 0;
			memcpy(&v, p->s + k, p->len - k);
			h = mix(h, v);
		}
	}
	return h;
}

static int folded_same(const struct folded_ent *f, const struct ps_sample *c)
{
	if (f->nframes != c->nframes || f->pname.len != c->pname.len ||
	    f->comm.len != c->comm.len || memcmp(f->pname.s, c->pname.s, c->pname.len))
		return 0;
	for (size_t i = 0; i < c->nframes; i++)
		if (f->frames[i].len != c->frames[i].len ||
		    (f->frames[i].s != c->frames[i].s &&
		     memcmp(f->frames[i].s, c->frames[i].s, c->frames[i].len)))
			return 0;
	return 1;
}

/* the kept copy of the frames just folded (r->cur), made on first sight; NULL = ENOMEM */
static const struct folded_ent *folded_get(struct reader *r)
{
	uint64_t h = folded_hash(&r->cur);
	struct folded_ent *f, k;
	struct ps_str *fr;
	size_t i, j;

	if ((r->nfolded + 1) * 2 > r->folded_mask) {
		size_t mask = r->folded_mask ? r->folded_mask * 2 + 1 : 1023;
		struct folded_ent **n = calloc(mask + 1, sizeof(*n));

		if (!n)
			return NULL;
		for (i = 0; r->folded && i <= r->folded_mask; i++) {
			if (!r->folded[i])
				continue;
			for (j = r->folded[i]->hash & mask; n[j]; j = (j + 1) & mask)
				;
			n[j] = r->folded[i];
		}
		free(r->folded);
		r->folded = n;
		r->folded_mask = mask;
	}
	for (j = h & r->folded_mask; r->folded[j]; j = (j + 1) & r->folded_mask)
		if (r->folded[j]->hash == h && folded_same(r->folded[j], &r->cur))
			return r->folded[j];
	k.pname.s = keep_bytes(r, r->cur.pname.s, r->cur.pname.len);
	k.pname.len = r->cur.pname.len;
	k.comm = (struct ps_str){ k.pname.s, r->cur.comm.len };
	fr = (struct ps_str *)keep_bytes(r, r->cur.frames, r->cur.nframes * sizeof(*fr) + 8);
	if (!k.pname.s || !fr)
		return NULL;
	/* pieces from the scratch buffer move to the blocks too */
	for (i = 0; i < r->cur.nframes; i++) {
		if (fr[i].s >= r->scratch && fr[i].s < r->scratch + r->scratch_cap) {
			fr[i].s = keep_bytes(r, fr[i].s, fr[i].len);
			if (!fr[i].s)
				return NULL;
		}
	}
	k.frames = fr;
	k.nframes = r->cur.nframes;
	k.hash = h;
	k.id = r->last_stack_id + 1;
	f = (struct folded_ent *)keep_bytes(r, &k, sizeof(k));
	if (!f)
		return NULL;
	r->last_stack_id++;
	r->folded[j] = f;
	r->nfolded++;
	return f;
}

/* remember the sample just folded (r->cur) under its thread, callchain and generation */
static int stack_add(struct reader *r, uint64_t h, const struct pd_thread *t,
		     const struct pd_event *ev, uint64_t gen, int skip)
{
	const struct pd_sample *smp = &ev->sample;
	struct stack_ent *e;
	const struct folded_ent *f;
	size_t i, slot;

	if (r->stack_bytes > STACK_CACHE_MAX)
		stack_drop(r);
	if ((r->nstacks + 1) * 2 > r->stack_mask) {
		size_t mask = r->stack_mask ? r->stack_mask * 2 + 1 : 4095;
		uint32_t *ix = calloc(mask + 1, sizeof(*ix));

		if (!ix)
			return -ENOMEM;
		for (i = 0; i < r->nstacks; i++) {
			size_t j;

			for (j = STACK(r, i)->hash & mask; ix[j]; j = (j + 1) & mask)
				;
			ix[j] = (uint32_t)i + 1;
		}
		free(r->stack_index);
		r->stack_index = ix;
		r->stack_mask = mask;
	}
	if (r->nstacks == r->nchunks * STACK_CHUNK) {
		struct stack_ent **c = realloc(r->stacks, (r->nchunks + 1) * sizeof(*c));

		if (!c)
			return -ENOMEM;
		r->stacks = c;
		c[r->nchunks] = malloc(STACK_CHUNK * sizeof(**c));
		if (!c[r->nchunks])
			return -ENOMEM;
		r->nchunks++;
	}
	e = STACK(r, r->nstacks);
	memset(e, 0, sizeof(*e));
	e->hash = h;
	e->gen = gen;
	e->t = t;
	if (smp->has_callchain) {
		e->nr = smp->nr;
		e->ips = smp->chain;     /* in the file, mapped until the reader ends */
	} else {
		e->nr = smp->ip;
		e->mode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	}
	e->skip = skip;
	f = folded_get(r);
	if (!f)
		return -ENOMEM;
	e->fold = f;
	r->cur.stack_id = f->id;
	stack_find(r, h, t, ev, gen, &slot);
	r->stack_index[slot] = (uint32_t)++r->nstacks;
	return 0;
}

static void fill_common(struct reader *r, const struct pd_event *ev)
{
	const struct pd_sample *smp = &ev->sample;

	r->cur.pid = smp->pid;
	r->cur.tid = smp->tid;
	r->cur.has_pid = 1;
	r->cur.has_time = (smp->attr->attr.sample_type & PERF_SAMPLE_TIME) != 0;
	r->cur.time_ns = smp->time;
	/* perf script prints the fixed period of -c N events too; 0 counts 1 */
	r->cur.period = smp->period ? smp->period : 1;
	r->cur.line = ev->offset;
}

static int sample(struct reader *r, const struct pd_event *ev)
{
	const struct pd_sample *smp = &ev->sample;
	const char *event = smp->attr->name ? smp->attr->name : "";
	struct pd_thread *t;
	struct stack_ent *e;
	uint64_t h = 0, gen = 0;
	size_t g, i, n = 0, slot;
	int ret;

	if (!r->event) {
		r->event = strdup(event);
		if (!r->event)
			return -ENOMEM;
		r->event_attr = smp->attr;
		snprintf(r->info->event, sizeof(r->info->event), "%s", event);
	} else if (smp->attr != r->event_attr && strcmp(event, r->event)) {
		r->info->filtered = 1;
		return 0;
	}
	t = pd_session_thread(r->s, smp->pid, smp->tid);
	if (!t)
		return -ENOMEM;
	if (!r->rawfn && !(r->flags & PS_RAW)) {
		gen = pd_session_generation(r->s);
		h = stack_hash(t, ev);
		e = stack_find(r, h, t, ev, gen, &slot);
		if (e) {
			if (e->skip)
				return 0;
			r->cur.pname = e->fold->pname;
			r->cur.comm = e->fold->comm;
			r->cur.event.s = r->event;
			r->cur.event.len = strlen(r->event);
			r->cur.frames = e->fold->frames;
			r->cur.nframes = e->fold->nframes;
			r->cur.stack_id = e->fold->id;
			fill_common(r, ev);
			r->info->samples++;
			return r->fn(&r->cur, r->arg);
		}
	}
	if (set_pname(r, pd_thread_comm(t), smp->pid, smp->tid))
		return -ENOMEM;
	/* `next if not $pname` */
	if (!r->rawfn && r->cur.pname.len == 1 && r->pname[0] == '0') {
		r->cur.nframes = 0;
		return r->flags & PS_RAW ? 0 : stack_add(r, h, t, ev, gen, 1);
	}
	ret = resolve(r, t, ev);
	if (ret)
		return ret;
	if (r->rawfn) {
		struct pd_raw raw = {
			.sample = smp, .comm = pd_thread_comm(t), .event = r->event,
			.period = smp->period ? smp->period : 1,
			.frames = r->locs, .nframes = r->nlocs,
		};

		r->info->samples++;
		return r->rawfn(&raw, r->arg);
	}
	r->nframes = r->ngroups = r->scratch_len = 0;
	for (i = 0; i < r->nlocs; i++) {
		ret = add_entry(r, &r->locs[i]);
		if (ret)
			return ret;
	}
	if (rd_grow((void **)&r->out, &r->cap_out, r->nframes + 1, sizeof(*r->out)))
		return -ENOMEM;
	/* root first: entries backwards, each entry's pieces in their order */
	for (g = r->ngroups; g-- > 0;) {
		size_t end = g + 1 < r->ngroups ? r->groups[g + 1] : r->nframes;

		for (i = r->groups[g]; i < end; i++) {
			const struct piece *p = &r->frames[i];

			r->out[n].s = p->p ? p->p : r->scratch + p->off;
			r->out[n].len = p->len;
			n++;
		}
	}
	r->cur.event.s = r->event;
	r->cur.event.len = strlen(r->event);
	r->cur.frames = r->out;
	r->cur.nframes = n;
	fill_common(r, ev);
	r->cur.stack_id = 0;
	r->info->samples++;
	if (r->flags & PS_RAW) {
		struct pd_raw raw = {
			.sample = smp, .comm = pd_thread_comm(t), .event = r->event,
			.period = r->cur.period, .frames = r->locs, .nframes = r->nlocs,
		};

		r->cur.raw = &raw;
		ret = r->fn(&r->cur, r->arg);
		r->cur.raw = NULL;
		return ret;
	}
	ret = stack_add(r, h, t, ev, gen, 0);
	return ret ? ret : r->fn(&r->cur, r->arg);
}

static void reader_fini(struct reader *r)
{
	for (size_t i = 0; i < r->nblocks; i++)
		free(r->blocks[i]);
	free(r->blocks);
	free(r->cache);
	free(r->cpieces);
	free(r->frames);
	free(r->locs);
	for (size_t i = 0; i < r->nchunks; i++)
		free(r->stacks[i]);
	free(r->stacks);
	free(r->folded);
	free(r->stack_index);
	free(r->groups);
	free(r->out);
	free(r->scratch);
	free(r->pname);
	free(r->event);
	pd_session_free(r->s);
}

static void attr_info(const struct pd_file *f, struct pd_script_info *info)
{
	size_t i;

	info->period = info->monotonic = 1;
	for (i = 0; i < pd_nattrs(f); i++) {
		const struct perf_event_attr *a = &pd_attr(f, i)->attr;

		if (!(a->sample_type & PERF_SAMPLE_PERIOD))
			info->period = 0;
		if (!a->use_clockid || a->clockid != CLOCK_MONOTONIC)
			info->monotonic = 0;
		if ((a->sample_type & PERF_SAMPLE_STACK_USER) && a->exclude_callchain_user)
			info->unwind = 1;
	}
}

/*
 * The kernel addresses the samples hold, as resolve() walks them (a
 * sample's ip in kernel mode, or the callchain entries after a kernel or
 * hypervisor marker), given to the session, so that it reads of kallsyms
 * only the symbols that name them, or nothing when there are none.  A
 * pass over the records before the one that converts them: cheaper than
 * a table of the kernel's 100k+ symbols for a small recording.
 */
struct addrset {
	uint64_t *v;                   /* open addressing, 0 = empty */
	size_t    mask, n;
	int       zero;                /* 0 is in the set */
};

static int addrset_add(struct addrset *a, uint64_t ip)
{
	size_t i;

	if (!ip) {
		a->zero = 1;
		return 0;
	}
	if (2 * (a->n + 1) > a->mask + 1) {
		struct addrset b = { NULL, a->mask ? 2 * a->mask + 1 : 1023, 0, a->zero };

		b.v = calloc(b.mask + 1, sizeof(*b.v));
		if (!b.v)
			return -ENOMEM;
		for (i = 0; a->v && i <= a->mask; i++)
			if (a->v[i])
				addrset_add(&b, a->v[i]);
		free(a->v);
		*a = b;
	}
	for (i = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 20) & a->mask; a->v[i];
	     i = (i + 1) & a->mask)
		if (a->v[i] == ip)
			return 0;
	a->v[i] = ip;
	a->n++;
	return 0;
}

static int sample_kernel_addrs(struct addrset *a, const struct pd_event *ev)
{
	const struct pd_sample *smp = &ev->sample;
	int kernel = 0, ret = 0;

	if (!smp->has_callchain)
		return (ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL ?
		       addrset_add(a, smp->ip) : 0;
	for (uint64_t i = 0; i < smp->nr && !ret; i++) {
		uint64_t ip = pd_chain_ip(smp, i);

		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL ||
				 ip == (uint64_t)PERF_CONTEXT_HV;
		else if (kernel)
			ret = addrset_add(a, ip);
	}
	return ret;
}

static int by_addr(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static int kernel_addrs(struct reader *r, struct pd_file *f, char *err, size_t errlen)
{
	struct addrset a = { 0 };
	struct pd_event ev;
	uint64_t *list = NULL;
	size_t i, n = 0;
	int ret;

	while ((ret = pd_next(f, &ev, err, errlen)) == 1)
		if (ev.type == PERF_RECORD_SAMPLE && (ret = sample_kernel_addrs(&a, &ev)))
			break;
	pd_rewind(f);
	if (!ret && !(list = malloc((a.n + 1) * sizeof(*list))))
		ret = -ENOMEM;
	if (!ret) {
		if (a.zero)
			list[n++] = 0;
		for (i = 0; a.v && i <= a.mask; i++)
			if (a.v[i])
				list[n++] = a.v[i];
		qsort(list, n, sizeof(*list), by_addr);
		ret = pd_session_kernel_addrs(r->s, list, n);
	}
	free(list);
	free(a.v);
	return ret;
}

static int read_file(struct reader *r, struct pd_file *f, const char *datadir,
		     struct pd_script_info *info, char *err, size_t errlen)
{
	struct pd_event ev;
	int ret;

	memset(info, 0, sizeof(*info));
	r->info = info;
	attr_info(f, info);
	if (info->unwind) {
		/* a malformed file is named as such, not handed on */
		ret = pd_index(f, err, errlen);
		return ret ? ret : -EOPNOTSUPP;
	}
	r->s = pd_session_new(f, datadir);
	if (!r->s) {
		snprintf(err, errlen, "%s: out of memory", pd_path(f));
		return -ENOMEM;
	}
	/*
	 * Large: the other core reads kallsyms meanwhile.  Below that, only
	 * the kernel symbols the samples need are read.
	 */
	if (pd_data_size(f) >= PRELOAD_MIN && sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		pd_session_preload(r->s);
		ret = pd_index(f, err, errlen);
	} else {
		ret = pd_index(f, err, errlen);
		if (!ret)
			ret = kernel_addrs(r, f, err, errlen);
	}
	while (!ret && (ret = pd_next(f, &ev, err, errlen)) == 1) {
		ret = ev.type == PERF_RECORD_SAMPLE ? sample(r, &ev) : pd_session_event(r->s, &ev);
		if (ret)
			break;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", pd_path(f));
	info->lost = pd_lost(f);
	reader_fini(r);
	return ret;
}

int pd_script_read_file(struct pd_file *f, unsigned flags, const char *datadir, ps_sample_fn fn,
			void *arg, struct pd_script_info *info, char *err, size_t errlen)
{
	struct reader r = { .flags = flags, .fn = fn, .arg = arg };

	return read_file(&r, f, datadir, info, err, errlen);
}

/* open path and read it, datadir defaulting to the file's own directory */
static int read_path(struct reader *r, const char *path, const char *datadir,
		     struct pd_script_info *info, char *err, size_t errlen)
{
	struct pd_file *f;
	char *dir = NULL;
	int ret;

	memset(info, 0, sizeof(*info));
	if (!datadir && strcmp(path, "-")) {
		const char *slash = strrchr(path, '/');

		dir = slash ? strndup(path, slash == path ? 1 : slash - path) : strdup(".");
		if (!dir) {
			snprintf(err, errlen, "%s: out of memory", path);
			return -ENOMEM;
		}
		datadir = dir;
	}
	ret = pd_open_unindexed(&f, path, err, errlen);
	if (!ret) {
		ret = read_file(r, f, datadir, info, err, errlen);
		pd_close(f);
	}
	free(dir);
	return ret;
}

int pd_script_read(const char *path, unsigned flags, const char *datadir, ps_sample_fn fn,
		   void *arg, struct pd_script_info *info, char *err, size_t errlen)
{
	struct reader r = { .flags = flags, .fn = fn, .arg = arg };

	return read_path(&r, path, datadir, info, err, errlen);
}

int pd_raw_read(const char *path, const char *datadir, pd_raw_fn fn, void *arg,
		struct pd_script_info *info, char *err, size_t errlen)
{
	struct reader r = { .rawfn = fn, .arg = arg };

	return read_path(&r, path, datadir, info, err, errlen);
}
