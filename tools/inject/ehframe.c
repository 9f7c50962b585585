/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The image's .eh_frame and .eh_frame_hdr from the functions'
 * UNWINDING_INFO.  An emitter builds a function's .eh_frame for one
 * place: right after its code, at the next 8-byte boundary (perf's
 * images put it there).  Its CIEs and FDEs are copied as they are, one
 * function after the other (a CIE pointer is relative, so it stays
 * right); only each FDE's pc_begin is rewritten, once the section's
 * address is known, to point at the function's place in the image.
 * .eh_frame_hdr is then built over all of them: the binary search table
 * sorted by address that unwinders look up.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "read/util.h"

enum {
	PE_absptr = 0x00, PE_udata4 = 0x03, PE_sdata4 = 0x0b, PE_udata8 = 0x04,
	PE_sdata8 = 0x0c, PE_pcrel = 0x10, PE_datarel = 0x30, PE_omit = 0xff,
};

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static int uleb(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		unsigned char c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
		shift += 7;
	}
	return -EINVAL;
}

/* bytes of a pointer in encoding enc, 0 if not supported */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case PE_absptr: case PE_udata8: case PE_sdata8: return 8;
	case PE_udata4: case PE_sdata4: return 4;
	default: return 0;
	}
}

/* the FDE pointer encoding of the CIE at cie (its 'R' augmentation) */
static int cie_fde_enc(const unsigned char *cie, const unsigned char *end, uint8_t *enc)
{
	const unsigned char *p = cie + 8, *aug;
	uint64_t v;
	uint8_t version;

	*enc = PE_absptr;
	if (p >= end)
		return -EINVAL;
	version = *p++;
	aug = p;
	while (p < end && *p)
		p++;
	if (p++ >= end)
		return -EINVAL;
	if (strstr((const char *)aug, "eh"))
		return -EINVAL;
	if (uleb(&p, end, &v) || uleb(&p, end, &v))      /* code align, data align */
		return -EINVAL;
	if (version == 1) {
		if (p++ >= end)
			return -EINVAL;
	} else if (uleb(&p, end, &v)) {
		return -EINVAL;
	}
	if (aug[0] != 'z')
		return 0;
	if (uleb(&p, end, &v))
		return -EINVAL;
	for (const unsigned char *a = aug + 1; *a; a++) {
		if (*a == 'R') {
			if (p >= end)
				return -EINVAL;
			*enc = *p++;
			return 0;
		} else if (*a == 'P') {
			size_t n;

			if (p >= end || !(n = enc_size(*p)))
				return -EINVAL;
			p += 1 + n;
		} else if (*a == 'L') {
			p++;
		} else if (*a != 'S' && *a != 'B') {
			return -EINVAL;
		}
	}
	return 0;
}

static int add_fde(struct ij_image *im, uint64_t target, size_t fde, size_t field, uint8_t enc)
{
	if (rd_grow((void **)&im->fdes, &im->fdecap, im->nfdes + 1, sizeof(*im->fdes)))
		return -ENOMEM;
	im->fdes[im->nfdes++] = (struct ij_fde){ target, (uint32_t)fde, (uint32_t)field, enc };
	return 0;
}

int ij_eh_add(struct ij_image *im, const unsigned char *eh, size_t len,
	      uint64_t code_addr, uint64_t size, uint64_t vaddr)
{
	const unsigned char *p = eh, *end = eh + len;
	uint64_t place = (size + 7) / 8 * 8;   /* the emitter's .eh_frame, from the code's start */
	size_t base = im->eh.len, nf = im->nfdes, used = 0;
	int err;

	/* first pass: check every entry, find where each FDE's code starts */
	while (end - p >= 4) {
		uint32_t n = rd32(p);
		const unsigned char *e = p + 4 + n;
		uint32_t id;

		if (n == 0)
			break;
		if (n == 0xffffffffu || n < 4 || e > end)
			goto bad;
		id = rd32(p + 4);
		if (id) {
			const unsigned char *cie = p + 4 - id, *f = p + 8;
			uint8_t enc;
			uint64_t target, off;
			size_t sz;

			if (cie < eh || cie + 8 > end || rd32(cie + 4) != 0 ||
			    cie_fde_enc(cie, cie + 4 + rd32(cie), &enc) ||
			    (enc & 0x80) || !(sz = enc_size(enc)) || f + sz > e)
				goto bad;
			off = (uint64_t)(f - eh);
			if ((enc & 0x70) == PE_pcrel) {
				int64_t v = sz == 4 ? (int64_t)(int32_t)rd32(f) : 0;

				if (sz == 8)
					memcpy(&v, f, 8);
				target = place + off + (uint64_t)v;     /* from the code's start */
			} else if ((enc & 0x70) == PE_absptr) {
				uint64_t v = sz == 4 ? rd32(f) : 0;

				if (sz == 8)
					memcpy(&v, f, 8);
				target = v - code_addr;
			} else {
				goto bad;
			}
			if (target > size)
				goto bad;
			err = add_fde(im, vaddr + target, base + (size_t)(p - eh), base + (size_t)off, enc);
			if (err)
				return err;
		}
		p = e;
		used = (size_t)(p - eh);
	}
	if (im->nfdes == nf)
		return -EINVAL;
	return ij_buf_put(&im->eh, eh, used);
bad:
	im->nfdes = nf;
	return -EINVAL;
}

uint64_t ij_eh_size(const struct ij_image *im)
{
	if (!im->nfdes)
		return 0;
	/* .eh_frame, its terminator, 4-aligned .eh_frame_hdr of 12 + 8 per FDE */
	return (im->eh.len + 4 + 3) / 4 * 4 + 12 + 8 * (uint64_t)im->nfdes;
}

uint64_t ij_eh_offset(const struct ij_image *im)
{
	return (IJ_TEXT_OFF + im->text_len + 7) / 8 * 8;
}

static int by_target(const void *a, const void *b)
{
	const struct ij_fde *x = a, *y = b;

	return x->target < y->target ? -1 : x->target > y->target;
}

int ij_eh_finish(struct ij_image *im, uint64_t eh_vaddr, uint64_t hdr_vaddr, struct ij_buf *hdr)
{
	unsigned char h[4] = { 1, PE_pcrel | PE_sdata4, PE_udata4, PE_datarel | PE_sdata4 };
	int32_t ptr = (int32_t)(eh_vaddr - (hdr_vaddr + 4));
	uint32_t count = (uint32_t)im->nfdes;
	int err;

	for (size_t i = 0; i < im->nfdes; i++) {
		const struct ij_fde *f = &im->fdes[i];
		unsigned char *at = im->eh.p + f->field;

		if ((f->enc & 0x70) == PE_pcrel) {
			int64_t v = (int64_t)(f->target - (eh_vaddr + f->field));

			if (enc_size(f->enc) == 4) {
				int32_t v32 = (int32_t)v;

				memcpy(at, &v32, 4);
			} else {
				memcpy(at, &v, 8);
			}
		} else if (enc_size(f->enc) == 4) {
			uint32_t v32 = (uint32_t)f->target;

			memcpy(at, &v32, 4);
		} else {
			memcpy(at, &f->target, 8);
		}
	}
	qsort(im->fdes, im->nfdes, sizeof(*im->fdes), by_target);
	err = ij_buf_put(hdr, h, 4) ?: ij_buf_put(hdr, &ptr, 4) ?: ij_buf_put(hdr, &count, 4);
	for (size_t i = 0; i < im->nfdes && !err; i++) {
		int32_t e[2] = { (int32_t)(im->fdes[i].target - hdr_vaddr),
				 (int32_t)(eh_vaddr + im->fdes[i].fde - hdr_vaddr) };

		err = ij_buf_put(hdr, e, 8);
	}
	return err;
}
