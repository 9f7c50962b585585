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

/* One row of the search table: pc_begin and FDE, relative to hdr_addr. */
static int32_t row_loc(const unsigned char *row)
{
	return (int32_t)get32(row);
}

static int cmp_row(const void *a, const void *b)
{
	int32_t x = row_loc(a), y = row_loc(b);

	return x < y ? -1 : x > y;
}

/* The search table in pc_begin order: JITs write FDEs in order, or nearly. */
static void sort_rows(unsigned char *rows, size_t n)
{
	if (n > 32) {
		qsort(rows, n, 8, cmp_row);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		unsigned char row[8];
		size_t k = i;

		memcpy(row, rows + 8 * i, 8);
		for (; k > 0 && row_loc(rows + 8 * (k - 1)) > row_loc(row); k--)
			memcpy(rows + 8 * k, rows + 8 * (k - 1), 8);
		memcpy(rows + 8 * k, row, 8);
	}
}

int jp_ehframe_hdr(const void *eh, size_t eh_len, uint64_t addr, uint64_t len,
		   unsigned char *space, size_t space_len, unsigned char **hdr_out,
		   size_t *hdr_len)
{
	const unsigned char *base = eh, *end = base + eh_len, *p = base;
	const unsigned char *cies[16];   /* CIEs checked so far: FDEs may only use those */
	size_t ncies = 0, nrefs = 0, room;
	int64_t eh_off = (int64_t)((len + 7) & ~(uint64_t)7); /* eh_addr - addr */
	int64_t hdr_off = eh_off + (int64_t)eh_len;          /* hdr_addr - addr */
	unsigned char *hdr = space;

	*hdr_out = NULL;
	*hdr_len = 0;
	if (!eh || eh_len < 8 || eh_len % 4 || eh_len > 0x7fffffff)
		return -EINVAL;
	/* an FDE takes 16 bytes at least: room for every one the section can hold */
	room = 12 + 8 * (eh_len / 16);
	if (room > space_len && !(hdr = malloc(room)))
		return -ENOMEM;
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
			unsigned char *row = hdr + 12 + 8 * nrefs;

			if (!known_cie(cies, ncies, cie) || rlen < 12)
				goto bad;
			field = eh_off + (rec + 4 - base);     /* pc_begin's offset from addr */
			begin = field + (int32_t)get32(rec + 4);
			range = get32(rec + 8);
			if (begin < 0 || range == 0 || (uint64_t)(begin + range) > len)
				goto bad;
			put32(row, (uint32_t)(int32_t)(begin - hdr_off));
			put32(row + 4, (uint32_t)(int32_t)(eh_off + (p - base) - hdr_off));
			nrefs++;
		}
		p = next;
	}
	if (!nrefs)
		goto bad;
	sort_rows(hdr + 12, nrefs);

	/* version, eh_frame_ptr enc, fde_count enc, table enc, then the fields */
	hdr[0] = 1;
	hdr[1] = DW_EH_PE_pcrel | DW_EH_PE_sdata4;
	hdr[2] = DW_EH_PE_udata4;
	hdr[3] = DW_EH_PE_datarel | DW_EH_PE_sdata4;
	put32(hdr + 4, (uint32_t)(int32_t)(eh_off - (hdr_off + 4)));
	put32(hdr + 8, (uint32_t)nrefs);
	*hdr_out = hdr;
	*hdr_len = 12 + 8 * nrefs;
	return 0;
bad:
	if (hdr != space)
		free(hdr);
	jp_debug("eh_frame of code at %#llx does not follow the convention of jitperf.h (byte %zu)",
		 (unsigned long long)addr, (size_t)(p - base));
	return -EINVAL;
}
