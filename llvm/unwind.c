/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One function's .eh_frame, cut out of the loaded object's .eh_frame and
 * re-encoded by the convention of jitperf.h, so that perf inject --jit can
 * put it after the function's code in the ELF it writes and perf's
 * unwinders (--call-graph dwarf) walk through the JIT frame.
 *
 * The loaded section was relocated by RuntimeDyld at its run-time address,
 * so each FDE's pc_begin decodes to the function's absolute address.  The
 * function's FDE is copied behind a copy of its CIE whose augmentation is
 * reduced to "zR" (plus "S" for a signal frame): FDE pointers pcrel|sdata4
 * (what jitperf.h asks for, also when the JIT used sdata8 or absolute
 * pointers), no personality, no LSDA (exception handling data that
 * unwinding for a profile does not use).  The call frame instructions are
 * copied as they are: they hold no addresses (LLVM never emits
 * DW_CFA_set_loc).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llvm/leb128.h"
#include "llvm/llvm.h"

#define DW_EH_PE_absptr  0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2  0x02
#define DW_EH_PE_udata4  0x03
#define DW_EH_PE_udata8  0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2  0x0a
#define DW_EH_PE_sdata4  0x0b
#define DW_EH_PE_sdata8  0x0c
#define DW_EH_PE_pcrel   0x10
#define DW_EH_PE_omit    0xff

struct cie {
	const unsigned char *start;             /* its length field */
	unsigned char        version;
	const unsigned char *align, *align_end; /* code align, data align, return register */
	const unsigned char *insn, *insn_end;   /* initial instructions */
	int                  z, signal;
	unsigned char        fde_enc;
};

struct out {
	struct jpl_arena *arena;
	unsigned char *b;
	size_t         len, cap;
	const unsigned char *cie_src;           /* the CIE last copied, and where */
	size_t         cie_at;
};

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Read a pointer of format enc & 0x0f; NULL for formats not handled. */
static const unsigned char *pointer(const unsigned char *p, const unsigned char *end,
				    unsigned enc, uint64_t *v)
{
	int16_t s2;
	uint16_t u2;
	int32_t s4;
	uint32_t u4;
	size_t n;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: n = 8; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: n = 4; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: n = 2; break;
	case DW_EH_PE_uleb128: return jpl_leb128(p, end, v, 0);
	case DW_EH_PE_sleb128: return jpl_leb128(p, end, v, 1);
	default: return NULL;
	}
	if ((size_t)(end - p) < n)
		return NULL;
	switch (enc & 0x0f) {
	case DW_EH_PE_udata4: memcpy(&u4, p, 4); *v = u4; break;
	case DW_EH_PE_sdata4: memcpy(&s4, p, 4); *v = (uint64_t)(int64_t)s4; break;
	case DW_EH_PE_udata2: memcpy(&u2, p, 2); *v = u2; break;
	case DW_EH_PE_sdata2: memcpy(&s2, p, 2); *v = (uint64_t)(int64_t)s2; break;
	default: memcpy(v, p, 8); break;
	}
	return p + n;
}

/* Parse the CIE whose length field is at c; 0 or -EINVAL. */
static int read_cie(struct cie *ci, const unsigned char *c, const unsigned char *end)
{
	const unsigned char *p = c + 8, *rec_end, *aug, *aug_data_end = NULL;
	uint64_t v, aug_len;

	memset(ci, 0, sizeof(*ci));
	if ((size_t)(end - c) < 9)
		return -EINVAL;
	rec_end = c + 4 + get32(c);
	if (rec_end > end || rec_end < c + 9 || get32(c + 4) != 0)
		return -EINVAL;
	ci->start = c;
	ci->version = *p++;
	if (ci->version != 1 && ci->version != 3)
		return -EINVAL;
	aug = p;
	if (!(p = memchr(p, 0, (size_t)(rec_end - p))))
		return -EINVAL;
	p++;
	ci->align = p;
	if (!(p = jpl_leb128(p, rec_end, &v, 0)) || !(p = jpl_leb128(p, rec_end, &v, 1)))
		return -EINVAL;
	p = ci->version == 1 ? p + 1 : jpl_leb128(p, rec_end, &v, 0);
	if (!p || p > rec_end)
		return -EINVAL;
	ci->align_end = p;
	ci->fde_enc = DW_EH_PE_absptr;
	if (*aug == 'z') {
		ci->z = 1;
		if (!(p = jpl_leb128(p, rec_end, &aug_len, 0)) || aug_len > (uint64_t)(rec_end - p))
			return -EINVAL;
		aug_data_end = p + aug_len;
		for (aug++; *aug; aug++) {
			switch (*aug) {
			case 'R':
				if (p >= aug_data_end)
					return -EINVAL;
				ci->fde_enc = *p++;
				break;
			case 'L':
				p++;
				break;
			case 'P':
				if (p >= aug_data_end || !(p = pointer(p + 1, aug_data_end, *p, &v)))
					return -EINVAL;
				break;
			case 'S':
				ci->signal = 1;
				break;
			default:
				return -EINVAL;
			}
		}
		p = aug_data_end;
	} else if (*aug) {
		return -EINVAL;         /* an augmentation we cannot skip */
	}
	ci->insn = p;
	ci->insn_end = rec_end;
	return 0;
}

static int reserve(struct out *o, size_t n)
{
	unsigned char *b;
	size_t cap = o->cap ? o->cap : 128;

	if (o->len + n <= o->cap)
		return 0;
	while (cap < o->len + n)
		cap *= 2;
	if (!(b = jpl_realloc(o->arena, o->b, o->cap, cap)))
		return -ENOMEM;
	o->b = b;
	o->cap = cap;
	return 0;
}

static void put(struct out *o, const void *p, size_t n)
{
	memcpy(o->b + o->len, p, n);
	o->len += n;
}

static void put32(struct out *o, uint32_t v)
{
	put(o, &v, 4);
}

/* Pad the record that starts at rec with DW_CFA_nop to a multiple of 4, set its length. */
static void close_record(struct out *o, size_t rec)
{
	while ((o->len - rec) % 4)
		o->b[o->len++] = 0;
	memcpy(o->b + rec, &(uint32_t){ (uint32_t)(o->len - rec - 4) }, 4);
}

static int put_cie(struct out *o, const struct cie *ci)
{
	size_t rec = o->len;
	size_t n = 18 + (size_t)(ci->align_end - ci->align) + (size_t)(ci->insn_end - ci->insn);

	if (reserve(o, n + 8))
		return -ENOMEM;
	put32(o, 0);                                    /* length, set below */
	put32(o, 0);                                    /* CIE id */
	put(o, &ci->version, 1);
	put(o, ci->signal ? "zRS" : "zR", ci->signal ? 4 : 3);
	put(o, ci->align, (size_t)(ci->align_end - ci->align));
	put(o, "\x01\x1b", 2);                          /* 1 byte: pcrel|sdata4 */
	put(o, ci->insn, (size_t)(ci->insn_end - ci->insn));
	close_record(o, rec);
	o->cie_src = ci->start;
	o->cie_at = rec;
	return 0;
}

/* begin, range: the code the FDE covers; insn: its instructions. */
static int put_fde(struct out *o, uint64_t eh_addr, uint64_t begin, uint64_t range,
		   const unsigned char *insn, const unsigned char *insn_end)
{
	size_t rec = o->len, n = 20 + (size_t)(insn_end - insn);

	if (reserve(o, n))
		return -ENOMEM;
	put32(o, 0);
	put32(o, (uint32_t)(o->len - o->cie_at));       /* back to the CIE */
	put32(o, (uint32_t)(int32_t)(int64_t)(begin - (eh_addr + o->len)));
	put32(o, (uint32_t)range);
	put(o, "", 1);                                  /* augmentation data: none */
	put(o, insn, (size_t)(insn_end - insn));
	close_record(o, rec);
	return 0;
}

struct fde {
	uint64_t             begin, range;   /* absolute */
	const unsigned char *cie;            /* its CIE's length field */
	const unsigned char *insn, *insn_end;
};

struct jpl_fdes {
	const unsigned char *eh, *end;
	uint64_t             bias;           /* run-time address of eh[0], less eh */
	struct fde          *v;
	size_t               n;
	struct jpl_arena    *arena;
};

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Read one FDE at rec (after its length field), ending at next. 1 = usable. */
static int read_fde(const struct jpl_fdes *t, const unsigned char *rec, const unsigned char *next,
		    struct fde *f)
{
	uint32_t id = get32(rec);
	const unsigned char *q;
	uint64_t aug_len;
	struct cie ci;

	if (id > (size_t)(rec - t->eh) || read_cie(&ci, rec - id, t->end))
		return 0;                       /* pointing outside, or a CIE we cannot read */
	if ((ci.fde_enc & 0x70) != 0 && (ci.fde_enc & 0x70) != DW_EH_PE_pcrel)
		return 0;                       /* datarel, textrel: no base known */
	q = pointer(rec + 4, next, ci.fde_enc, &f->begin);
	if (!q || !(q = pointer(q, next, ci.fde_enc & 0x0f, &f->range)) || !f->range)
		return 0;
	if ((ci.fde_enc & 0x70) == DW_EH_PE_pcrel)
		f->begin += (uintptr_t)(rec + 4) + t->bias;
	if (ci.z) {
		if (!(q = jpl_leb128(q, next, &aug_len, 0)) || aug_len > (uint64_t)(next - q))
			return 0;
		q += aug_len;
	}
	f->cie = ci.start;
	f->insn = q;
	f->insn_end = next;
	return 1;
}

int jpl_unwind_open(struct jpl_fdes **out, const unsigned char *eh, size_t eh_len,
		    uint64_t addr, struct jpl_arena *a)
{
	struct jpl_fdes *t;
	const unsigned char *p = eh;
	size_t cap = 0;

	*out = NULL;
	if (!(t = jpl_alloc(a, sizeof(*t))))
		return -ENOMEM;
	memset(t, 0, sizeof(*t));
	t->arena = a;
	t->eh = eh;
	t->end = eh + eh_len;
	t->bias = addr - (uintptr_t)eh;
	while (t->end - p >= 8) {
		uint32_t len = get32(p);
		const unsigned char *rec = p + 4;

		if (len == 0)
			break;                          /* terminator */
		if (len == 0xffffffffu || len > (size_t)(t->end - rec) || len < 4)
			return -EINVAL;
		p = rec + len;
		if (get32(rec) == 0)
			continue;                       /* a CIE: read with its FDEs */
		if (t->n == cap) {
			size_t old = cap * sizeof(*t->v);
			struct fde *v = jpl_realloc(a, t->v, old, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			t->v = v;
		}
		t->n += (size_t)read_fde(t, rec, p, &t->v[t->n]);
	}
	if (t->n > 1)
		qsort(t->v, t->n, sizeof(*t->v), cmp_fde);
	*out = t;
	return 0;
}

int jpl_unwind_of(struct jpl_fdes *t, uint64_t lo, uint64_t hi, unsigned char **out,
		  size_t *out_len)
{
	uint64_t eh_addr = lo + ((hi - lo + 7) & ~(uint64_t)7);
	struct out o = { .arena = t->arena };
	size_t a = 0, b = t->n;
	int err = 0;

	*out = NULL;
	*out_len = 0;
	while (a < b) {                                 /* the first FDE at or after lo */
		size_t mid = a + (b - a) / 2;

		if (t->v[mid].begin < lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (; !err && a < t->n && t->v[a].begin < hi; a++) {
		const struct fde *f = &t->v[a];
		/* what lies past the code is not its frame */
		uint64_t range = f->range > hi - f->begin ? hi - f->begin : f->range;
		struct cie ci;

		if (o.cie_src != f->cie) {
			read_cie(&ci, f->cie, t->end);  /* read once already */
			err = put_cie(&o, &ci);
		}
		if (!err)
			err = put_fde(&o, eh_addr, f->begin, range, f->insn, f->insn_end);
	}
	if (err)
		return err;
	*out = o.b;
	*out_len = o.len;
	return 0;
}
