/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The functions of a loaded object: its ELF symbol table read in place
 * (no copy, no libelf for what a few struct reads do), each function's
 * source lines from its DWARF, with relocated copies of the debug
 * sections that have relocations (llvm/reloc.c, llvm/lines.c), and its
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

static uint64_t load8(const char *s)
{
	uint64_t v;

	memcpy(&v, s, 8);
	return v;
}

/*
 * The index of each section named names[k] (n <= 16) in idx[k] (0: none),
 * in one walk.  A name longer than 8 bytes is compared by its first 8 in
 * one load (most section names differ there), then whole.
 */
static void find_sections(const struct elf *e, const char *const *names, size_t n, unsigned *idx)
{
	unsigned strndx = ((const Elf64_Ehdr *)e->img)->e_shstrndx;
	const char *strs = bytes(e, strndx);    /* NULL also for a bad index */
	size_t nlen[16];
	uint64_t head[16];

	for (size_t k = 0; k < n; k++) {
		idx[k] = 0;
		nlen[k] = strlen(names[k]) + 1;
		head[k] = nlen[k] > 8 ? load8(names[k]) : 0;
	}
	if (!strs)
		return;
	for (unsigned i = 1; i < e->shnum; i++) {
		size_t at = e->sh[i].sh_name, room;
		uint64_t first;

		if (at >= e->sh[strndx].sh_size)
			continue;
		room = e->sh[strndx].sh_size - at;
		first = room >= 8 ? load8(strs + at) : 0;
		for (size_t k = 0; k < n; k++) {
			if ((head[k] && first != head[k]) || idx[k] || room < nlen[k] ||
			    memcmp(strs + at, names[k], nlen[k]))
				continue;
			if (bytes(e, i))
				idx[k] = i;
			break;
		}
	}
}

/* The index of the section named name, or 0. */
static unsigned section_named(const struct elf *e, const char *name)
{
	unsigned i;

	find_sections(e, &name, 1, &i);
	return i;
}

int jpl_elf_sections(const unsigned char *img, size_t size, const char *const *names, size_t n,
		     const unsigned char **sec, size_t *len)
{
	unsigned idx[16];
	struct elf e;
	int found = 0;

	for (size_t k = 0; k < n; k++) {
		sec[k] = NULL;
		len[k] = 0;
	}
	if (n > 16 || check_header(&e, img, size))
		return 0;
	find_sections(&e, names, n, idx);
	for (size_t k = 0; k < n; k++)
		if (idx[k]) {
			sec[k] = bytes(&e, idx[k]);
			len[k] = e.sh[idx[k]].sh_size;
			found++;
		}
	return found;
}

/* the sections llvm/debugline.c reads, in the order of struct jpl_dwarf_sections' fields */
static const char *const dwarf_names[] = {
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str",
	".debug_str_offsets",
};
#define NDWARF (sizeof(dwarf_names) / sizeof(*dwarf_names))

static void set_dwarf(struct jpl_dwarf_sections *s, const unsigned char *const *sec,
		      const size_t *len)
{
	s->info = sec[0], s->info_len = len[0];
	s->abbrev = sec[1], s->abbrev_len = len[1];
	s->line = sec[2], s->line_len = len[2];
	s->str = sec[3], s->str_len = len[3];
	s->line_str = sec[4], s->line_str_len = len[4];
	s->str_offsets = sec[5], s->str_offsets_len = len[5];
}

void jpl_dwarf_sections_of(const unsigned char *img, size_t size, struct jpl_dwarf_sections *s)
{
	const unsigned char *sec[NDWARF];
	size_t len[NDWARF];

	jpl_elf_sections(img, size, dwarf_names, NDWARF, sec, len);
	set_dwarf(s, sec, len);
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
				size_t old = cap * sizeof(*f);

				f = jpl_realloc(o->arena, o->funcs, old, (cap = cap ? 2 * cap : 8) * sizeof(*f));
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

/*
 * Lines of every function.  Only the debug sections that have relocations
 * (.debug_info and .debug_line: code addresses and string offsets) are
 * copied, into the arena, and relocated there; the others are read in the
 * image.  An object's code, symbols and other sections are not copied at
 * all.
 */
static int read_lines(struct jpl_object *o, const struct elf *e)
{
	unsigned char *buf;
	const unsigned char *sec[NDWARF];
	struct jpl_dwarf_sections s;
	unsigned idx[NDWARF], has_rela[NDWARF] = { 0 };
	size_t len[NDWARF], need = 0, at = 0;
	struct jpl_lines *l;
	int err;

	find_sections(e, dwarf_names, NDWARF, idx);
	if (!idx[0] || !idx[2])
		return 0;               /* no .debug_info or no .debug_line: no lines */
	for (unsigned i = 1; i < e->shnum; i++) {
		if (e->sh[i].sh_type != SHT_RELA)
			continue;
		for (size_t k = 0; k < NDWARF; k++)
			if (idx[k] && e->sh[i].sh_info == idx[k] && !has_rela[k]) {
				has_rela[k] = 1;
				need += (e->sh[idx[k]].sh_size + 7) & ~(size_t)7;
			}
	}
	if (!(buf = jpl_alloc(o->arena, need)))
		return -ENOMEM;
	for (size_t k = 0; k < NDWARF; k++) {
		sec[k] = idx[k] ? bytes(e, idx[k]) : NULL;
		len[k] = idx[k] ? e->sh[idx[k]].sh_size : 0;
		if (!has_rela[k])
			continue;
		memcpy(buf + at, sec[k], len[k]);
		if (jpl_relocated(e->img, e->size, idx[k], buf + at, o->sec_addr, o->nsec) < 0)
			return 0;       /* a machine whose relocations we do not apply */
		sec[k] = buf + at;
		at += (len[k] + 7) & ~(size_t)7;
	}
	set_dwarf(&s, sec, len);
	err = jpl_lines_open(&l, &s, o->arena);
	if (err)
		return err == -ENOMEM ? err : 0;
	for (size_t i = 0; i < o->nfuncs && !err; i++) {
		struct jpl_func *f = &o->funcs[i];

		err = jpl_lines_of(l, f->addr, f->addr + f->len, &f->lines, &f->nlines);
	}
	return err;
}

static int read_unwind(struct jpl_object *o, const struct elf *e)
{
	unsigned i = section_named(e, ".eh_frame");
	uint64_t at = i ? loaded(o, i) : 0;
	struct jpl_fdes *t;
	int err;

	if (!at || !e->sh[i].sh_size)
		return 0;
	/* the loaded copy: RuntimeDyld relocated it at its run-time address */
	err = jpl_unwind_open(&t, (const unsigned char *)(uintptr_t)at, e->sh[i].sh_size,
			      o->arena);
	if (err) {
		jpl_debug("cannot read the .eh_frame at %#llx: %s", (unsigned long long)at,
			  jitperf_strerror(err));
		return err == -ENOMEM ? err : 0;
	}
	for (size_t k = 0; k < o->nfuncs; k++) {
		struct jpl_func *f = &o->funcs[k];

		err = jpl_unwind_of(t, f->addr, f->addr + f->len, &f->eh_frame,
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
	err = check_header(&e, o->image, o->size);
	err = err ?: read_symbols(o, &e);
	if (!err && o->nfuncs && o->want_lines)
		err = read_lines(o, &e);
	if (!err && o->nfuncs && o->want_unwind)
		err = read_unwind(o, &e);
	if (err) {
		o->funcs = NULL;
		o->nfuncs = 0;
	}
	return err;
}
