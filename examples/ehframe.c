/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ehframe.c - DWARF call frame information for the code jitcalc emits.
 *
 * Every function has the same frame shape.  x86-64 (codegen_x86_64.c):
 *   0:          push %rbp        CFA = %rsp+8,  return address at CFA-8
 *   push_end:   mov %rsp,%rbp    CFA = %rsp+16, %rbp saved at CFA-16
 *   mov_end:    ... body ...     CFA = %rbp+16
 *   leave_end:  ret              CFA = %rsp+8, %rbp the caller's again
 * AArch64 (codegen_aarch64.c), the return address in x30 at entry:
 *   0:          stp x29, x30, [sp, #-16]!   CFA = sp
 *   push_end:   mov x29, sp      CFA = sp+16, x29 at CFA-16, x30 at CFA-8
 *   mov_end:    ... body, then "mov sp, x29; ldp x29, x30, [sp], #16"
 *                                CFA = x29+16
 *   leave_end:  ret              CFA = sp, x29 and x30 the caller's again
 * so one CIE and one FDE with four rows describe either exactly; the
 * backend's jc_target gives the register numbers and factors.
 *
 * The output is the .eh_frame (CIE, FDE, zero terminator) in the form
 * the eh_frame comment of struct jitperf_code in jitperf.h asks for; the
 * library adds the .eh_frame_hdr.  pc_begin is pc-relative, so the bytes
 * are right only where perf inject --jit (genelf.c) puts .eh_frame in the
 * ELF image it writes: eh_addr = code + ALIGN_8(code length).  jitcalc
 * keeps a copy at that place in memory too, so the address range perf
 * gives the function (code + unwind info) never overlaps the next one.
 */
#include "config.h"

#include <string.h>

#include "jit.h"

/* DWARF constants (dwarf.h spells them the same) */
enum {
	CFA_advance_loc = 0x40, CFA_offset = 0x80, CFA_restore = 0xc0, CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03, CFA_advance_loc4 = 0x04, CFA_def_cfa = 0x0c,
	CFA_def_cfa_register = 0x0d, CFA_def_cfa_offset = 0x0e,
	EH_PE_sdata4 = 0x0b, EH_PE_pcrel = 0x10,
};

struct out { uint8_t *b; size_t len, cap; };

static void u8(struct out *o, uint8_t v)
{
	if (o->len < o->cap)
		o->b[o->len] = v;
	o->len++;
}

static void u32(struct out *o, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		u8(o, (uint8_t)(v >> (8 * i)));
}

static void set32(struct out *o, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		if (at + i < o->cap)
			o->b[at + i] = (uint8_t)(v >> (8 * i));
}

/* Advance the location by delta bytes with the shortest DW_CFA_advance_loc form. */
static void advance(struct out *o, size_t delta)
{
	if (delta < 0x40) {
		u8(o, CFA_advance_loc | (uint8_t)delta);
	} else if (delta <= 0xff) {
		u8(o, CFA_advance_loc1);
		u8(o, (uint8_t)delta);
	} else if (delta <= 0xffff) {
		u8(o, CFA_advance_loc2);
		u8(o, (uint8_t)delta);
		u8(o, (uint8_t)(delta >> 8));
	} else {
		u8(o, CFA_advance_loc4);
		u32(o, (uint32_t)delta);
	}
}

/* Close a CIE/FDE opened at `start`: pad with DW_CFA_nop to 8 bytes, set its length. */
static void close_entry(struct out *o, size_t start)
{
	while ((o->len - start) % 8)
		u8(o, 0);
	set32(o, start, (uint32_t)(o->len - start - 4));
}

uint64_t jc_ehframe_addr(uint64_t code_addr, size_t code_len)
{
	return code_addr + ((code_len + 7) & ~(size_t)7);
}

size_t jc_ehframe(uint8_t *buf, size_t cap, uint64_t code_addr, size_t code_len,
		  const struct jc_frame_layout *fl, uint64_t eh_addr)
{
	const struct jc_target *t = &jc_target;
	struct out o = { buf, 0, cap };
	size_t cie, fde;
	/* factored offsets of the two saved slots: CFA-8 and CFA-16 */
	uint8_t at8 = (uint8_t)(-8 / t->data_align), at16 = (uint8_t)(-16 / t->data_align);

	/* CIE: the target's alignment factors and return address register */
	cie = o.len;
	u32(&o, 0);                         /* length, set by close_entry */
	u32(&o, 0);                         /* CIE id */
	u8(&o, 1);                          /* version */
	u8(&o, 'z'); u8(&o, 'R'); u8(&o, 0);
	u8(&o, t->code_align);              /* code alignment factor (uleb128 < 128) */
	u8(&o, (uint8_t)t->data_align & 0x7f);  /* data alignment factor: sleb128, -64..63 */
	u8(&o, t->ra);                      /* return address register */
	u8(&o, 1);                          /* augmentation data length */
	u8(&o, EH_PE_pcrel | EH_PE_sdata4); /* FDE pointer encoding */
	u8(&o, CFA_def_cfa); u8(&o, t->sp); u8(&o, t->cfa_entry);  /* CFA = sp+entry */
	if (!t->ra_saved) {
		u8(&o, CFA_offset | t->ra); u8(&o, at8);   /* the call pushed ra: CFA-8 */
	}
	close_entry(&o, cie);

	/* FDE for [code_addr, code_addr + code_len) */
	fde = o.len;
	u32(&o, 0);                                        /* length */
	u32(&o, (uint32_t)(o.len - cie));                  /* CIE pointer */
	u32(&o, (uint32_t)(code_addr - (eh_addr + o.len))); /* pc_begin, pc-relative */
	u32(&o, (uint32_t)code_len);                       /* pc_range */
	u8(&o, 0);                                         /* augmentation data length */
	advance(&o, fl->push_end / t->code_align);
	u8(&o, CFA_def_cfa_offset); u8(&o, 16);   /* CFA = sp+16: fp (and ra) on the stack */
	u8(&o, CFA_offset | t->fp); u8(&o, at16);          /* fp at CFA-16 */
	if (t->ra_saved) {
		u8(&o, CFA_offset | t->ra); u8(&o, at8);   /* ra at CFA-8 */
	}
	advance(&o, (fl->mov_end - fl->push_end) / t->code_align);
	u8(&o, CFA_def_cfa_register); u8(&o, t->fp);       /* CFA = fp+16 */
	advance(&o, (fl->leave_end - fl->mov_end) / t->code_align);
	u8(&o, CFA_def_cfa); u8(&o, t->sp); u8(&o, t->cfa_entry);  /* CFA = sp+entry */
	u8(&o, CFA_restore | t->fp);                       /* fp is the caller's again */
	if (t->ra_saved)
		u8(&o, CFA_restore | t->ra);               /* and so is ra */
	close_entry(&o, fde);
	u32(&o, 0);                                        /* .eh_frame terminator */
	return o.len <= cap ? o.len : 0;
}
