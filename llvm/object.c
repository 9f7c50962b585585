/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The functions of a loaded object: its ELF symbol table read in place
 * (no copy, no libelf for what a few struct reads do), each function's
 * source lines from the DWARF of a relocated copy (llvm/lines.c) and its
 * unwind info from the loaded .eh_frame (llvm/unwind.c).
 *
 * Functions are the symbols LLVM's PerfJITEventListener reports: STT_FUNC
 * (and GNU ifuncs), defined in a loaded section, of non-zero size; the
 * address is the section's run-time address plus the symbol value.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llvm/llvm.h"

struct elf {
	const unsigned char *img;
	size_t               size;
	const Elf64_Shdr    *sh;
	unsigned             shnum;
};

/* Section i's bytes, or NULL when they are not inside the image. */
static const void *bytes(const struct elf *e, unsigned i)
{
	const Elf64_Shdr *s = &e->sh[i];

	if (i >= e->shnum || s->sh_type == SHT_NOBITS || s->sh_offset > e->size ||
	    s->sh_size > e->size - s->sh_offset)
		return NULL;
	return e->img + s->sh_offset;
}

static int check_header(struct elf *e, const unsigned char *img, size_t size)
{
	const Elf64_Ehdr *h = (const Elf64_Ehdr *)img;

	if (size < sizeof(*h) || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64 ||
	    img[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    h->e_type != ET_REL || h->e_shentsize != sizeof(Elf64_Shdr) || h->e_shnum == 0 ||
	    h->e_shoff > size || h->e_shoff % 8 ||
	    (size_t)h->e_shnum * sizeof(Elf64_Shdr) > size - h->e_shoff)
		return -ENOEXEC;
	e->img = img;
	e->size = size;
	e->sh = (const Elf64_Shdr *)(img + h->e_shoff);
	e->shnum = h->e_shnum;
	return 0;
}

/* The index of the section named name, or 0. */
static unsigned section_named(const struct elf *e, const char *name)
{
	const Elf64_Ehdr *h = (const Elf64_Ehdr *)e->img;
	const char *names = bytes(e, h->e_shstrndx);
	size_t nlen = strlen(name) + 1;

	if (!names)
		return 0;
	for (unsigned i = 1; i < e->shnum; i++) {
		size_t at = e->sh[i].sh_name;

		if (at < e->sh[h->e_shstrndx].sh_size &&
		    e->sh[h->e_shstrndx].sh_size - at >= nlen && !memcmp(names + at, name, nlen))
			return i;
	}
	return 0;
}

int jpl_elf_sections(const unsigned char *img, size_t size, const char *const *names, size_t n,
		     const unsigned char **sec, size_t *len)
{
	const Elf64_Ehdr *h = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *strsh;
	const char *strs;
	struct elf e;
	int found = 0;

	for (size_t k = 0; k < n; k++) {
		sec[k] = NULL;
		len[k] = 0;
	}
	if (check_header(&e, img, size) || !(strs = bytes(&e, h->e_shstrndx)))
		return 0;
	strsh = &e.sh[h->e_shstrndx];
	/* one walk of the section table for all names */
	for (unsigned i = 1; i < e.shnum; i++) {
		size_t at = e.sh[i].sh_name, room;

		if (at >= strsh->sh_size)
			continue;
		room = strsh->sh_size - at;
		for (size_t k = 0; k < n; k++) {
			size_t nlen = strlen(names[k]) + 1;

			if (sec[k] || room < nlen || memcmp(strs + at, names[k], nlen))
				continue;
			if ((sec[k] = bytes(&e, i))) {
				len[k] = e.sh[i].sh_size;
				found++;
			}
			break;
		}
	}
	return found;
}

static uint64_t loaded(const struct jpl_object *o, unsigned shndx)
{
	return shndx < o->nsec && shndx < SHN_LORESERVE ? o->sec_addr[shndx] : 0;
}

/* Every function symbol into o->funcs (names point into the image). */
static int read_symbols(struct jpl_object *o, const struct elf *e)
{
	for (unsigned i = 1; i < e->shnum; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		const Elf64_Sym *sym = bytes(e, i), *end;
		const char *str;
		size_t strsize, cap = 0;

		if (s->sh_type != SHT_SYMTAB || !sym || s->sh_entsize != sizeof(*sym) ||
		    s->sh_offset % 8 || !(str = bytes(e, s->sh_link)))
			continue;
		strsize = e->sh[s->sh_link].sh_size;
		end = sym + s->sh_size / sizeof(*sym);
		for (sym++; sym < end; sym++) {
			unsigned type = ELF64_ST_TYPE(sym->st_info);
			uint64_t base = loaded(o, sym->st_shndx);
			struct jpl_func *f;

			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !base || !sym->st_size ||
			    sym->st_name >= strsize || !memchr(str + sym->st_name, 0,
							       strsize - sym->st_name))
				continue;
			if (o->nfuncs == cap) {
				f = realloc(o->funcs, (cap = cap ? 2 * cap : 8) * sizeof(*f));
				if (!f)
					return -ENOMEM;
				o->funcs = f;
			}
			f = &o->funcs[o->nfuncs++];
			memset(f, 0, sizeof(*f));
			f->name = str + sym->st_name;
			f->addr = base + sym->st_value;
			f->len = sym->st_size;
		}
		break;          /* an object has one symbol table */
	}
	return 0;
}

/* Lines of every function, from a relocated copy of the image. */
static int read_lines(struct jpl_object *o, const struct elf *e)
{
	unsigned char *copy;
	int err;

	if (!section_named(e, ".debug_line"))
		return 0;
	if (!(copy = malloc(e->size)))
		return -ENOMEM;
	memcpy(copy, e->img, e->size);
	if (jpl_relocate_debug(copy, e->size, o->sec_addr, o->nsec) < 0) {
		free(copy);
		return 0;               /* a machine whose relocations we do not apply */
	}
	err = jpl_lines_open(&o->dwarf, copy, e->size);
	if (err)
		return err == -ENOMEM ? err : 0;
	for (size_t i = 0; i < o->nfuncs; i++) {
		struct jpl_func *f = &o->funcs[i];

		err = jpl_lines_of(o->dwarf, f->addr, f->addr + f->len, &f->lines, &f->nlines);
		if (err)
			return err;
	}
	return 0;
}

static int read_unwind(struct jpl_object *o, const struct elf *e)
{
	unsigned i = section_named(e, ".eh_frame");
	uint64_t at = i ? loaded(o, i) : 0;
	int err;

	if (!at || !e->sh[i].sh_size)
		return 0;
	/* the loaded copy: RuntimeDyld relocated it at its run-time address */
	err = jpl_unwind_open(&o->fdes, (const unsigned char *)(uintptr_t)at, e->sh[i].sh_size);
	if (err) {
		jpl_debug("cannot read the .eh_frame at %#llx: %s", (unsigned long long)at,
			  jitperf_strerror(err));
		return err == -ENOMEM ? err : 0;
	}
	for (size_t k = 0; k < o->nfuncs; k++) {
		struct jpl_func *f = &o->funcs[k];

		err = jpl_unwind_of(o->fdes, f->addr, f->addr + f->len, &f->eh_frame,
				    &f->eh_frame_len);
		if (err)
			return err;
	}
	return 0;
}

int jpl_object_read(struct jpl_object *o)
{
	struct elf e;
	int err;

	o->funcs = NULL;
	o->nfuncs = 0;
	o->dwarf = NULL;
	o->fdes = NULL;
	err = check_header(&e, o->image, o->size);
	err = err ?: read_symbols(o, &e);
	if (!err && o->nfuncs && o->want_lines)
		err = read_lines(o, &e);
	if (!err && o->nfuncs && o->want_unwind)
		err = read_unwind(o, &e);
	if (err)
		jpl_object_free(o);
	return err;
}

void jpl_object_free(struct jpl_object *o)
{
	for (size_t i = 0; i < o->nfuncs; i++) {
		free(o->funcs[i].lines);
		free(o->funcs[i].eh_frame);
	}
	free(o->funcs);
	jpl_lines_close(o->dwarf);
	jpl_unwind_close(o->fdes);
	o->funcs = NULL;
	o->nfuncs = 0;
	o->dwarf = NULL;
	o->fdes = NULL;
}
