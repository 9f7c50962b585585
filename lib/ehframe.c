/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Check a JIT's .eh_frame against the convention in jitperf.h and build the
 * .eh_frame_hdr that perf's unwinders (libunwind, libdw) look FDEs up in.
 *
 * Layout in the injected ELF (perf's genelf), relative to the code at addr:
 *   eh_addr  = addr + align8(len)        .eh_frame  (the JIT's bytes)
 *   hdr_addr = eh_addr + eh_len          .eh_frame_hdr (built here)
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define DW_EH_PE_udata4  0x03
#define DW_EH_PE_sdata4  0x0b
#define DW_EH_PE_pcrel   0x10
#define DW_EH_PE_datarel 0x30

struct fde_ref {
	int64_t loc;     /* pc_begin relative to hdr_addr */
	int64_t fde;     /* FDE address relative to hdr_addr */
};

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Skip a LEB128 number; 0 when it runs past end. */
static const unsigned char *skip_leb(const unsigned char *p, const unsigned char *end)
{
	while (p < end)
		if (!(*p++ & 0x80))
			return p;
	return NULL;
}

/* Is the CIE at cie (of length len, after the length field) using pcrel|sdata4 FDE pointers? */
static int cie_ok(const unsigned char *cie, const unsigned char *end)
{
	const unsigned char *p = cie + 4;    /* after CIE id */
	const char *aug;
	int version;

	if (p >= end)
		return 0;
	version = *p++;
	if (version != 1 && version != 3)
		return 0;
	aug = (const char *)p;
	p = memchr(p, 0, (size_t)(end - p));
	if (!p || aug[0] != 'z')
		return 0;
	p++;
	p = skip_leb(p, end);                    /* code alignment */
	if (p)
		p = skip_leb(p, end);            /* data alignment */
	if (!p)
		return 0;
	p = version == 1 ? p + 1 : skip_leb(p, end); /* return address register */
	if (!p || !(p = skip_leb(p, end)))       /* augmentation data length */
		return 0;
	for (aug++; *aug; aug++) {
		if (p >= end)
			return 0;
		switch (*aug) {
		case 'R':
			return *p == (DW_EH_PE_pcrel | DW_EH_PE_sdata4);
		case 'L':
			p++;
			break;
		case 'P':       /* personality: only 4-byte encodings here */
			if ((*p & 0x0f) != DW_EH_PE_udata4 && (*p & 0x0f) != DW_EH_PE_sdata4)
				return 0;
			p += 5;
			break;
		case 'S':
			break;
		default:
			return 0;
		}
	}
	return 0;       /* no 'R': absolute pointers, which perf cannot relocate */
}

static int known_cie(const unsigned char *const *cies, size_t n, const unsigned char *cie)
{
	while (n--)
		if (cies[n] == cie)
			return 1;
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct fde_ref *x = a, *y = b;

	return x->loc < y->loc ? -1 : x->loc > y->loc;
}

int jp_ehframe_hdr(const void *eh, size_t eh_len, uint64_t addr, uint64_t len,
		   unsigned char **hdr_out, size_t *hdr_len)
{
	const unsigned char *base = eh, *end = base + eh_len, *p = base;
	const unsigned char *cies[16];   /* CIEs checked so far: FDEs may only use those */
	size_t ncies = 0;
	int64_t eh_off = (int64_t)((len + 7) & ~(uint64_t)7); /* eh_addr - addr */
	int64_t hdr_off = eh_off + (int64_t)eh_len;          /* hdr_addr - addr */
	struct fde_ref *refs = NULL;
	size_t nrefs = 0, cap = 0, i;
	unsigned char *hdr;

	*hdr_out = NULL;
	*hdr_len = 0;
	if (!eh || eh_len < 8 || eh_len % 4 || eh_len > 0x7fffffff)
		return -EINVAL;
	while (p + 4 <= end) {
		uint32_t rlen = get32(p);
		const unsigned char *rec = p + 4, *next;
		uint32_t id;

		if (rlen == 0)                  /* terminator */
			break;
		if (rlen == 0xffffffffu || rlen < 4 || rlen > (size_t)(end - rec))
			goto bad;
		next = rec + rlen;
		id = get32(rec);
		if (id == 0) {
			if (!cie_ok(rec, next))
				goto bad;
			if (ncies == sizeof(cies) / sizeof(cies[0]))
				goto bad;
			cies[ncies++] = p;
		} else {
			const unsigned char *cie = rec - id;   /* CIE pointer is relative to itself */
			int64_t field, begin, range;

			if (!known_cie(cies, ncies, cie) || rlen < 12)
				goto bad;
			field = eh_off + (rec + 4 - base);     /* pc_begin's offset from addr */
			begin = field + (int32_t)get32(rec + 4);
			range = get32(rec + 8);
			if (begin < 0 || range == 0 || (uint64_t)(begin + range) > len)
				goto bad;
			if (nrefs == cap) {
				struct fde_ref *n;

				cap = cap ? cap * 2 : 4;
				n = realloc(refs, cap * sizeof(*refs));
				if (!n) {
					free(refs);
					return -ENOMEM;
				}
				refs = n;
			}
			refs[nrefs].loc = begin - hdr_off;
			refs[nrefs].fde = eh_off + (p - base) - hdr_off;
			nrefs++;
		}
		p = next;
	}
	if (!nrefs)
		goto bad;
	qsort(refs, nrefs, sizeof(*refs), cmp_ref);

	/* version, eh_frame_ptr enc, fde_count enc, table enc, then the fields */
	*hdr_len = 12 + 8 * nrefs;
	hdr = malloc(*hdr_len);
	if (!hdr) {
		free(refs);
		return -ENOMEM;
	}
	hdr[0] = 1;
	hdr[1] = DW_EH_PE_pcrel | DW_EH_PE_sdata4;
	hdr[2] = DW_EH_PE_udata4;
	hdr[3] = DW_EH_PE_datarel | DW_EH_PE_sdata4;
	put32(hdr + 4, (uint32_t)(int32_t)(eh_off - (hdr_off + 4)));
	put32(hdr + 8, (uint32_t)nrefs);
	for (i = 0; i < nrefs; i++) {
		put32(hdr + 12 + 8 * i, (uint32_t)(int32_t)refs[i].loc);
		put32(hdr + 16 + 8 * i, (uint32_t)(int32_t)refs[i].fde);
	}
	free(refs);
	*hdr_out = hdr;
	(void)addr;
	return 0;
bad:
	free(refs);
	jp_debug("eh_frame of code at %#llx does not follow the convention of jitperf.h (byte %zu)",
		 (unsigned long long)addr, (size_t)(p - base));
	return -EINVAL;
}
