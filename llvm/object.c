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
#include <limits.h>
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

/* the sections llvm/debugline.c reads, in the order of struct jpl_dwarf_sections' fields */
static const char *const dwarf_names[] = {
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str",
	".debug_str_offsets",
};
#define NDWARF (sizeof(dwarf_names) / sizeof(*dwarf_names))
/* their sizes, with the NUL */
static const unsigned char dwarf_sizes[NDWARF] = {
	sizeof(".debug_info"), sizeof(".debug_abbrev"), sizeof(".debug_line"),
	sizeof(".debug_str"), sizeof(".debug_line_str"), sizeof(".debug_str_offsets"),
};

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

/*
 * What the readers need of the section table, found in one walk of it:
 * the symbol table, the .eh_frame, the DWARF sections and the RELA
 * section that relocates each of them.
 */
#define MANY_RELA UINT_MAX      /* more than one RELA section for one target: look them up */

struct secmap {
	unsigned symtab, eh_frame;
	unsigned dwarf[NDWARF];         /* in dwarf_names' order */
	unsigned rela[NDWARF];          /* the RELA section of each, or MANY_RELA */
};

/*
 * Which of dwarf_names the name at offset at of the names table is, or -1:
 * the letter after ".debug_" leaves one or two candidates, compared whole.
 */
static int dwarf_kind(const char *strs, size_t strsize, size_t at)
{
	static const signed char first[2][26] = {
		/* by the letter after ".debug_": the candidates, in dwarf_names' order */
		{ ['i' - 'a'] = 1, ['a' - 'a'] = 2, ['l' - 'a'] = 3, ['s' - 'a'] = 4 },
		{ ['l' - 'a'] = 5, ['s' - 'a'] = 6 },
	};
	const char *s = strs + at;
	size_t room = at < strsize ? strsize - at : 0;

	if (room < sizeof(".debug_") || memcmp(s, ".debug_", sizeof(".debug_") - 1) ||
	    s[7] < 'a' || s[7] > 'z')
		return -1;
	for (int j = 0; j < 2; j++) {
		int k = first[j][s[7] - 'a'] - 1;
		size_t n;

		if (k < 0)
			continue;
		n = dwarf_sizes[k];
		if (room >= n && !memcmp(s + 7, dwarf_names[k] + 7, n - 7))
			return k;
	}
	return -1;
}

/* The debug sections only when dwarf: without lines, the symbols and .eh_frame do. */
static void map_sections(const struct elf *e, struct secmap *m, int dwarf)
{
	unsigned strndx = ((const Elf64_Ehdr *)e->img)->e_shstrndx;
	const char *strs = bytes(e, strndx);    /* NULL also for a bad index */
	size_t strsize = strs ? e->sh[strndx].sh_size : 0;

	memset(m, 0, sizeof(*m));
	for (unsigned i = 1; i < e->shnum; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		int k;

		if (s->sh_type == SHT_SYMTAB) {
			if (!m->symtab)
				m->symtab = i;
		} else if (s->sh_type == SHT_RELA && dwarf) {
			/* a relocated debug section, named by its target */
			if (s->sh_info < e->shnum && !(e->sh[s->sh_info].sh_flags & SHF_ALLOC) &&
			    (k = dwarf_kind(strs, strsize, e->sh[s->sh_info].sh_name)) >= 0)
				m->rela[k] = m->rela[k] ? MANY_RELA : i;
		} else if (s->sh_type == SHT_NOBITS || !bytes(e, i)) {
			continue;
		} else if (s->sh_flags & SHF_ALLOC) {
			if (!m->eh_frame && s->sh_name < strsize &&
			    strsize - s->sh_name >= sizeof(".eh_frame") &&
			    !memcmp(strs + s->sh_name, ".eh_frame", sizeof(".eh_frame")))
				m->eh_frame = i;
		} else if (dwarf && (k = dwarf_kind(strs, strsize, s->sh_name)) >= 0 && !m->dwarf[k]) {
			m->dwarf[k] = i;
		}
	}
}

/* The debug sections of the image, as they are in it. */
static void dwarf_of(const struct elf *e, const struct secmap *m, const unsigned char **sec,
		     size_t *len)
{
	for (size_t k = 0; k < NDWARF; k++) {
		sec[k] = m->dwarf[k] ? bytes(e, m->dwarf[k]) : NULL;
		len[k] = m->dwarf[k] ? e->sh[m->dwarf[k]].sh_size : 0;
	}
}

void jpl_dwarf_sections_of(const unsigned char *img, size_t size, struct jpl_dwarf_sections *s)
{
	const unsigned char *sec[NDWARF] = { NULL };
	size_t len[NDWARF] = { 0 };
	struct secmap m;
	struct elf e;

	if (!check_header(&e, img, size)) {
		map_sections(&e, &m, 1);
		dwarf_of(&e, &m, sec, len);
	}
	set_dwarf(s, sec, len);
}

static uint64_t loaded(const struct jpl_object *o, unsigned shndx)
{
	return shndx < o->nsec && shndx < SHN_LORESERVE ? o->sec_addr[shndx] : 0;
}

/* Every function symbol into o->funcs (names point into the image). */
static int read_symbols(struct jpl_object *o, const struct elf *e, unsigned i)
{
	const Elf64_Shdr *s = &e->sh[i];
	const Elf64_Sym *sym = bytes(e, i), *end;
	const char *str;
	size_t strsize, cap = 0;

	if (!i || !sym || s->sh_entsize != sizeof(*sym) || s->sh_offset % 8 ||
	    !(str = bytes(e, s->sh_link)))
		return 0;
	strsize = e->sh[s->sh_link].sh_size;
	end = sym + s->sh_size / sizeof(*sym);
	for (sym++; sym < end; sym++) {
		unsigned type = ELF64_ST_TYPE(sym->st_info);
		uint64_t base = loaded(o, sym->st_shndx);
		struct jpl_func *f;

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !base || !sym->st_size ||
		    sym->st_name >= strsize || !memchr(str + sym->st_name, 0, strsize - sym->st_name))
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
	return 0;
}

/*
 * Lines of every function.  Only the debug sections that have relocations
 * (.debug_info and .debug_line: code addresses and string offsets) are
 * copied, into the arena, and relocated there; the others are read in the
 * image.  An object's code, symbols and other sections are not copied at
 * all.
 */
static int read_lines(struct jpl_object *o, const struct elf *e, const struct secmap *m)
{
	unsigned char *buf;
	const unsigned char *sec[NDWARF];
	struct jpl_dwarf_sections s;
	size_t len[NDWARF], need = 0, at = 0;
	struct jpl_lines *l;
	int err;

	if (!m->dwarf[0] || !m->dwarf[2])
		return 0;               /* no .debug_info or no .debug_line: no lines */
	dwarf_of(e, m, sec, len);
	for (size_t k = 0; k < NDWARF; k++)
		if (m->dwarf[k] && m->rela[k])
			need += (len[k] + 7) & ~(size_t)7;
	if (!(buf = jpl_alloc(o->arena, need)))
		return -ENOMEM;
	for (size_t k = 0; k < NDWARF; k++) {
		unsigned i = m->dwarf[k], r = m->rela[k];

		if (!i || !r)
			continue;
		memcpy(buf + at, sec[k], len[k]);
		/* several RELA sections, or one of another section of that name: all of i's */
		err = r != MANY_RELA && e->sh[r].sh_info == i ?
			jpl_relocate(e->img, e->size, r, buf + at, o->sec_addr, o->nsec) :
			jpl_relocated(e->img, e->size, i, buf + at, o->sec_addr, o->nsec);
		if (err < 0)
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

static int read_unwind(struct jpl_object *o)
{
	uint64_t at = o->eh_frame_addr;
	struct jpl_fdes *t;
	int err;

	if (!at || !o->eh_frame_len)
		return 0;
	/* the loaded copy: RuntimeDyld relocated it at its run-time address */
	err = jpl_unwind_open(&t, (const unsigned char *)(uintptr_t)at, o->eh_frame_len, at,
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
	struct secmap m;
	struct elf e;
	int err;

	o->funcs = NULL;
	o->nfuncs = 0;
	err = check_header(&e, o->image, o->size);
	if (err)
		return err;
	map_sections(&e, &m, o->want_lines);
	o->eh_frame_addr = m.eh_frame ? loaded(o, m.eh_frame) : 0;
	o->eh_frame_len = o->eh_frame_addr ? e.sh[m.eh_frame].sh_size : 0;
	err = read_symbols(o, &e, m.symtab);
	if (!err && o->nfuncs && o->want_lines)
		err = read_lines(o, &e, &m);
	if (!err && o->nfuncs && o->want_unwind)
		err = read_unwind(o);
	if (err) {
		o->funcs = NULL;
		o->nfuncs = 0;
	}
	return err;
}
