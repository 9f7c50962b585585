/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Relocation of the debug sections of a JIT-compiled object.  RuntimeDyld
 * relocates only what it loads; the DWARF sections stay as the compiler
 * wrote them, with zeros where a RELA relocation puts a code address
 * (DW_LNE_set_address, DW_AT_low_pc) or a string offset (DW_FORM_strp,
 * DW_FORM_line_strp).  Applying those relocations with the run-time
 * section addresses gives the line table reader (llvm/debugline.c) the
 * final values: absolute code addresses,
 * and offsets into the other debug sections (not loaded, so at 0).
 * They go to a copy of one section's bytes.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "llvm/llvm.h"

/* S + A for a relocation against symbol sym of symtab. */
static uint64_t target(const Elf64_Sym *sym, const uint64_t *sec_addr, size_t nsec,
		       int64_t addend)
{
	uint64_t s = sym->st_value;

	if (sym->st_shndx != SHN_UNDEF && sym->st_shndx < SHN_LORESERVE && sym->st_shndx < nsec)
		s += sec_addr[sym->st_shndx];
	return s + (uint64_t)addend;
}

/* The size of a relocation's field on this machine: 8, 4, or 0 to leave it alone. */
static int field_size(unsigned machine, unsigned type)
{
	if (machine == EM_X86_64)
		return type == R_X86_64_64 ? 8 : type == R_X86_64_32 || type == R_X86_64_32S ? 4 : 0;
	if (machine == EM_AARCH64)
		return type == R_AARCH64_ABS64 ? 8 : type == R_AARCH64_ABS32 ? 4 : 0;
	return 0;
}

/* Is rs a RELA section for the bytes of a non-loaded section we can read? */
static const Elf64_Shdr *rela_target(const Elf64_Shdr *sh, unsigned shnum, const Elf64_Shdr *rs,
				     size_t size)
{
	const Elf64_Shdr *to, *symtab;

	if (rs->sh_type != SHT_RELA || rs->sh_info >= shnum || rs->sh_link >= shnum)
		return NULL;
	to = &sh[rs->sh_info];
	symtab = &sh[rs->sh_link];
	/* loaded sections are RuntimeDyld's; NOBITS have no bytes */
	if ((to->sh_flags & SHF_ALLOC) || to->sh_type == SHT_NOBITS ||
	    symtab->sh_type != SHT_SYMTAB || symtab->sh_entsize != sizeof(Elf64_Sym) ||
	    rs->sh_entsize != sizeof(Elf64_Rela) ||
	    rs->sh_offset > size || rs->sh_size > size - rs->sh_offset ||
	    to->sh_offset > size || to->sh_size > size - to->sh_offset ||
	    symtab->sh_offset > size || symtab->sh_size > size - symtab->sh_offset)
		return NULL;
	return to;
}

/* The relocations of RELA section rs applied to out, the bytes of its target. */
static int apply(const unsigned char *img, const Elf64_Shdr *sh, const Elf64_Shdr *rs,
		 unsigned machine, unsigned char *out, const uint64_t *sec_addr, size_t nsec)
{
	const Elf64_Shdr *to = &sh[rs->sh_info], *symtab = &sh[rs->sh_link];
	const Elf64_Rela *r = (const Elf64_Rela *)(img + rs->sh_offset);
	const Elf64_Rela *end = r + rs->sh_size / sizeof(*r);
	int done = 0;

	for (; r < end; r++) {
		size_t sym = ELF64_R_SYM(r->r_info);
		int n = field_size(machine, ELF64_R_TYPE(r->r_info));
		uint64_t v;

		if (!n || sym >= symtab->sh_size / sizeof(Elf64_Sym) ||
		    r->r_offset > to->sh_size || (uint64_t)n > to->sh_size - r->r_offset)
			continue;
		v = target((const Elf64_Sym *)(img + symtab->sh_offset) + sym, sec_addr, nsec,
			   r->r_addend);
		if (n == 8) {
			memcpy(out + r->r_offset, &v, 8);
		} else {
			uint32_t w = (uint32_t)v;

			memcpy(out + r->r_offset, &w, 4);
		}
		done++;
	}
	return done;
}

int jpl_relocate(const unsigned char *img, size_t size, unsigned rela, unsigned char *out,
		 const uint64_t *sec_addr, size_t nsec)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);

	if (eh->e_machine != EM_X86_64 && eh->e_machine != EM_AARCH64)
		return -ENOEXEC;
	if (rela >= eh->e_shnum || !rela_target(sh, eh->e_shnum, &sh[rela], size))
		return 0;
	return apply(img, sh, &sh[rela], eh->e_machine, out, sec_addr, nsec);
}

int jpl_relocated(const unsigned char *img, size_t size, unsigned target, unsigned char *out,
		  const uint64_t *sec_addr, size_t nsec)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	int done = 0;

	if (eh->e_machine != EM_X86_64 && eh->e_machine != EM_AARCH64)
		return -ENOEXEC;
	for (unsigned i = 1; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_RELA && sh[i].sh_info == target)
			done += jpl_relocate(img, size, i, out, sec_addr, nsec);
	return done;
}
