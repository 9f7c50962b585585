/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LEB128 numbers (DWARF 5 section 7.6), the one reader of libjitperf-llvm's
 * object code: DWARF line tables (llvm/debugline.c) and .eh_frame
 * (llvm/unwind.c).  Inline: the line table programs read one per opcode.
 */
#ifndef JITPERF_LLVM_LEB128_H
#define JITPERF_LLVM_LEB128_H

#include <stdint.h>

/*
 * One number from [p, end), signed if sign: the byte after it, with the
 * value in *v, or NULL when it runs past end or its value does not fit 64
 * bits.  Padding of any length is accepted, as DWARF allows it and LLVM's
 * decoders take it: 0x80 bytes, for a signed number the bytes of its sign
 * (0xff, and 0x7f last) -- what the bits past 64 must be for the value to
 * fit.
 */
static inline const unsigned char *jpl_leb128(const unsigned char *p, const unsigned char *end,
					      uint64_t *v, int sign)
{
	uint64_t r = 0;
	unsigned shift = 0;
	unsigned char b, slice;

	if (p < end && !(*p & 0x80)) {          /* most are one byte */
		*v = sign && (*p & 0x40) ? *p | ~(uint64_t)0x7f : *p;
		return p + 1;
	}
	do {
		if (p >= end)
			return NULL;
		b = *p++;
		slice = b & 0x7f;
		if (shift < 63) {
			r |= (uint64_t)slice << shift;
		} else {
			/* bit 63 and past: past 63, only copies of the sign */
			unsigned char past = shift == 63 ? slice >> 1 : slice;
			int neg = sign && (shift == 63 ? slice & 1 : r >> 63);

			if (past != (neg ? (shift == 63 ? 0x3f : 0x7f) : 0))
				return NULL;
			if (shift == 63)
				r |= (uint64_t)(slice & 1) << 63;
		}
		if (shift < 70)         /* saturated: the rest is padding */
			shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = r;
	return p;
}

#endif /* JITPERF_LLVM_LEB128_H */
