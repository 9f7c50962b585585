/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A code image of jitperf inject: many JIT functions in one ELF file
 * (libelf), with .symtab, .debug_line, .eh_frame + .eh_frame_hdr and a
 * build-id note.  The allocated sections have address = file offset, so
 * perf's symbol adjustment (address - section address + section offset)
 * is the identity, and an mmap event whose pgoff is a function's offset
 * maps its run-time addresses onto its symbol (doc/inject.md).
 *
 * Each function's code starts on a 16-byte boundary and is followed, as
 * in perf inject's one-function images, by the mapped part of its
 * unwinding data at the next 8-byte boundary: the mmap event's length is
 * perf's (code rounded to 8 plus the mapped size), and what it covers
 * reads the same bytes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <gelf.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject.h"
#include "read/util.h"
#include "tools/cmds.h"

int ij_image_open(struct ij_image *im, const char *path, uint16_t machine)
{
	size_t n = strlen(path);
	int fd;

	memset(im, 0, sizeof(*im));
	im->machine = machine;
	im->path = strdup(path);
	im->tmp = malloc(n + 16);
	if (!im->path || !im->tmp) {
		cmd_err("%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	snprintf(im->tmp, n + 16, "%s.tmpXXXXXX", path);
	fd = mkstemp(im->tmp);
	if (fd >= 0 && (fstat(fd, &im->st) || fchmod(fd, 0644))) {
		close(fd);
		fd = -2;
	}
	if (fd < 0 || close(fd)) {
		int err = errno;

		cmd_err("%s: cannot create: %s", path, strerror(err));
		if (fd != -1)
			unlink(im->tmp);
		free(im->tmp);
		im->tmp = NULL;
		return -err;
	}
	/* the string table starts with the empty name */
	return ij_buf_put(&im->strtab, "", 1);
}

/* code bytes at va: packed into text, placed by a segment */
static int add_seg(struct ij_image *im, uint64_t va, const void *code, size_t len)
{
	if (rd_grow((void **)&im->segs, &im->segcap, im->nsegs + 1, sizeof(*im->segs)))
		return -ENOMEM;
	im->segs[im->nsegs++] = (struct ij_seg){ va, im->text.len, len };
	return ij_buf_put(&im->text, code, len);
}

int ij_image_add(struct ij_image *im, const struct ij_func *fn, uint64_t *vaddr)
{
	size_t namelen = strlen(fn->name) + 1;
	uint64_t va;
	int err;

	if (!im->nsyms)
		im->nocode = !fn->code;         /* a perf map's symbols: no bytes at all */
	va = IJ_TEXT_OFF + (fn->code_addr - im->base);
	if (va - IJ_TEXT_OFF + fn->size > im->text_len)
		im->text_len = va - IJ_TEXT_OFF + fn->size;
	err = im->nocode ? 0 : add_seg(im, va, fn->code, fn->size);
	if (!err && rd_grow((void **)&im->syms, &im->symcap, im->nsyms + 1, sizeof(*im->syms)))
		err = -ENOMEM;
	if (err)
		return err;
	im->syms[im->nsyms].vaddr = va;
	im->syms[im->nsyms].size = fn->size;
	im->syms[im->nsyms].name = (uint32_t)im->strtab.len;
	im->nsyms++;
	err = ij_buf_put(&im->strtab, fn->name, namelen);
	if (!err && fn->nlines)
		err = ij_lines_add(im, fn, va);
	if (!err && fn->unwind && fn->unwind_size > fn->eh_frame_hdr_size) {
		err = ij_eh_add(im, fn->unwind, fn->unwind_size - fn->eh_frame_hdr_size,
				fn->code_addr, fn->size, va);
		if (err == -EINVAL) {
			im->eh_skipped++;
			err = 0;
		}
	}
	*vaddr = va;
	return err;
}

/* 160 bits from three multiply-xor lanes over the code and the names */
void ij_image_build_id(struct ij_image *im)
{
	uint64_t h[3] = { 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull };
	/* the code, the names, and where each function is (all a perf map's
	 * image has besides its names) */
	const struct ij_buf syms = { (unsigned char *)im->syms, im->nsyms * sizeof(*im->syms), 0 };
	const struct ij_buf *bufs[3] = { &im->text, &im->strtab, &syms };

	for (int b = 0; b < 3; b++) {
		const unsigned char *p = bufs[b]->p;
		size_t n = bufs[b]->len, i;

		for (i = 0; i + 8 <= n; i += 8) {
			uint64_t w;

			memcpy(&w, p + i, 8);
			for (int l = 0; l < 3; l++) {
				h[l] ^= w + (uint64_t)l;
				h[l] *= 0x100000001b3ull + 2 * (uint64_t)l;
				h[l] ^= h[l] >> 29;
			}
		}
		for (; i < n; i++)
			for (int l = 0; l < 3; l++)
				h[l] = (h[l] ^ p[i]) * 0x100000001b3ull;
		for (int l = 0; l < 3; l++)
			h[l] = (h[l] ^ n) * 0xff51afd7ed558ccdull;
	}
	for (int l = 0; l < 3; l++)
		h[l] ^= h[l] >> 33;
	memcpy(im->build_id, h, 20);
}

static const char shstr[] =
	"\0.text\0.eh_frame\0.eh_frame_hdr\0.note.gnu.build-id\0.symtab\0.strtab"
	"\0.debug_line\0.debug_info\0.debug_abbrev\0.shstrtab";

static uint32_t shname(const char *name)
{
	for (size_t i = 1; i < sizeof(shstr); i += strlen(shstr + i) + 1)
		if (!strcmp(shstr + i, name))
			return (uint32_t)i;
	return 0;
}

struct sect {
	const char *name;
	uint32_t    type;
	uint64_t    flags, align, entsize;
	void       *buf;
	size_t      size;
	Elf_Type    dtype;
	uint64_t    off;
	uint32_t    link, info;
};

struct build_note {
	uint32_t namesz, descsz, type;
	char     name[4];
	uint8_t  id[20];
};

/* What one image's file is made of, while it is written. */
struct layout {
	struct ij_buf      eh_hdr, line, info, abbrev;   /* built here, freed here */
	Elf64_Sym         *syms;
	unsigned char     *text;       /* the code at its places, zeros between */
	struct build_note  note;
	struct sect        s[11];
	size_t             ns, ieh, ihdr;                /* ieh, ihdr: 0 without tables */
	uint64_t           eh_va, hdr_va;
	uint64_t           shoff;      /* the section headers, after every section */
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* .eh_frame at the address inject.c maps it (a free range near the code), .eh_frame_hdr after it */
static int finish_unwind(struct ij_image *im, struct layout *l)
{
	int err = 0;

	l->eh_va = im->eh_vaddr;
	l->hdr_va = align_up(l->eh_va + im->eh.len + 4, 4);
	if (im->nfdes && l->eh_va) {
		err = ij_buf_put(&im->eh, NULL, 4);    /* the terminator */
		err = err ?: ij_eh_finish(im, l->eh_va, l->hdr_va, &l->eh_hdr);
	}
	return err;
}

/* .text's bytes: only while this image is written, the segments hold them packed */
static int fill_text(const struct ij_image *im, struct layout *l)
{
	if (im->nocode || !im->text_len)
		return 0;
	if (!(l->text = calloc(1, im->text_len)))
		return -ENOMEM;
	for (size_t i = 0; i < im->nsegs; i++)
		memcpy(l->text + im->segs[i].va - IJ_TEXT_OFF, im->text.p + im->segs[i].off,
		       im->segs[i].len);
	return 0;
}

/* one global function each, in .text (section 1); entry 0 is the null symbol */
static int fill_symtab(const struct ij_image *im, struct layout *l)
{
	if (!(l->syms = calloc(im->nsyms + 1, sizeof(*l->syms))))
		return -ENOMEM;
	for (size_t i = 0; i < im->nsyms; i++) {
		Elf64_Sym *y = &l->syms[i + 1];

		y->st_name = im->syms[i].name;
		y->st_value = im->syms[i].vaddr;
		y->st_size = im->syms[i].size;
		y->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		y->st_shndx = 1;
	}
	return 0;
}

static void fill_note(const struct ij_image *im, struct build_note *note)
{
	note->namesz = 4;
	note->descsz = 20;
	note->type = NT_GNU_BUILD_ID;
	memcpy(note->name, "GNU", 4);
	memcpy(note->id, im->build_id, 20);
}

static void add_sect(struct layout *l, struct sect s)
{
	l->s[l->ns++] = s;
}

/*
 * The allocated part at fixed offsets: .text (the first section, as
 * fill_symtab has it), then .eh_frame and
 * .eh_frame_hdr, then the note; the rest follows, each section aligned.
 */
static void lay_out(const struct ij_image *im, struct layout *l)
{
	uint64_t off;
	size_t istr;

	add_sect(l, (struct sect){ ".text", im->nocode ? SHT_NOBITS : SHT_PROGBITS,
				   SHF_ALLOC | SHF_EXECINSTR, 16, 0, l->text,
				   im->text_len, ELF_T_BYTE, IJ_TEXT_OFF, 0, 0 });
	off = IJ_TEXT_OFF + (im->nocode ? 0 : im->text_len);
	if (l->eh_hdr.len) {
		l->ieh = l->ns;
		add_sect(l, (struct sect){ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 8, 0,
					   im->eh.p, im->eh.len, ELF_T_BYTE, ij_eh_offset(im), 0, 0 });
		l->ihdr = l->ns;
		add_sect(l, (struct sect){ ".eh_frame_hdr", SHT_PROGBITS, SHF_ALLOC, 4, 0,
					   l->eh_hdr.p, l->eh_hdr.len, ELF_T_BYTE,
					   ij_eh_offset(im) + (l->hdr_va - l->eh_va), 0, 0 });
		off = l->s[l->ihdr].off + l->eh_hdr.len;
	}
	off = align_up(off, 4);
	add_sect(l, (struct sect){ ".note.gnu.build-id", SHT_NOTE, 0, 4, 0,
				   &l->note, sizeof(l->note), ELF_T_BYTE, off, 0, 0 });
	off += sizeof(l->note);
	istr = l->ns + 1;
	add_sect(l, (struct sect){ ".symtab", SHT_SYMTAB, 0, 8, sizeof(Elf64_Sym), l->syms,
				   (im->nsyms + 1) * sizeof(Elf64_Sym), ELF_T_SYM, 0,
				   (uint32_t)(istr + 1), 1 });
	add_sect(l, (struct sect){ ".strtab", SHT_STRTAB, 0, 1, 0, im->strtab.p, im->strtab.len,
				   ELF_T_BYTE, 0, 0, 0 });
	if (l->line.len) {
		add_sect(l, (struct sect){ ".debug_line", SHT_PROGBITS, 0, 1, 0, l->line.p,
					   l->line.len, ELF_T_BYTE, 0, 0, 0 });
		add_sect(l, (struct sect){ ".debug_info", SHT_PROGBITS, 0, 1, 0, l->info.p,
					   l->info.len, ELF_T_BYTE, 0, 0, 0 });
		add_sect(l, (struct sect){ ".debug_abbrev", SHT_PROGBITS, 0, 1, 0, l->abbrev.p,
					   l->abbrev.len, ELF_T_BYTE, 0, 0, 0 });
	}
	add_sect(l, (struct sect){ ".shstrtab", SHT_STRTAB, 0, 1, 0, (void *)shstr,
				   sizeof(shstr), ELF_T_BYTE, 0, 0, 0 });
	for (size_t i = 0; i < l->ns; i++)
		if (!l->s[i].off) {
			off = align_up(off, l->s[i].align);
			l->s[i].off = off;
			off += l->s[i].size;
		}
	l->shoff = align_up(off, 8);
}

static int write_ehdr(Elf *elf, const struct ij_image *im, const struct layout *l)
{
	Elf64_Ehdr *eh = elf64_newehdr(elf);

	if (!eh)
		return -EIO;
	eh->e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? ELFDATA2MSB : ELFDATA2LSB;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_DYN;
	eh->e_machine = im->machine;
	eh->e_version = EV_CURRENT;
	eh->e_entry = IJ_TEXT_OFF;
	eh->e_phoff = sizeof(Elf64_Ehdr);
	eh->e_shoff = l->shoff;
	eh->e_shstrndx = (uint16_t)l->ns;     /* the last section (index ns: 0 is null) */
	return 0;
}

/*
 * The code's segment first, from the file's start as a linker lays out a
 * shared object: perf 6.1 finds .eh_frame_hdr at the mapping's start -
 * pgoff, less the first PT_LOAD's page, plus its address.  Then the
 * unwind tables' segment and PT_GNU_EH_FRAME, when there are tables.
 */
static int write_phdrs(Elf *elf, const struct ij_image *im, const struct layout *l)
{
	Elf64_Phdr *ph = elf64_newphdr(elf, l->ihdr ? 3 : 1);
	const struct sect *eh = &l->s[l->ieh], *hdr = &l->s[l->ihdr];

	if (!ph)
		return -EIO;
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R | PF_X;
	ph[0].p_offset = ph[0].p_vaddr = ph[0].p_paddr = 0;
	ph[0].p_filesz = IJ_TEXT_OFF + (im->nocode ? 0 : im->text_len);
	ph[0].p_memsz = IJ_TEXT_OFF + im->text_len;
	ph[0].p_align = 0x1000;
	if (!l->ihdr)
		return 0;
	ph[1].p_type = PT_LOAD;
	ph[1].p_flags = PF_R;
	ph[1].p_offset = eh->off;
	ph[1].p_vaddr = ph[1].p_paddr = l->eh_va;
	ph[1].p_filesz = ph[1].p_memsz = hdr->off + hdr->size - eh->off;
	ph[1].p_align = 8;
	ph[2].p_type = PT_GNU_EH_FRAME;
	ph[2].p_flags = PF_R;
	ph[2].p_offset = hdr->off;
	ph[2].p_vaddr = ph[2].p_paddr = l->hdr_va;
	ph[2].p_filesz = ph[2].p_memsz = hdr->size;
	ph[2].p_align = 4;
	return 0;
}

/* an allocated section's address is its offset, but for the unwind tables' */
static uint64_t sect_addr(const struct layout *l, size_t i)
{
	if (!(l->s[i].flags & SHF_ALLOC))
		return 0;
	if (l->ieh && i == l->ieh)
		return l->eh_va;
	if (l->ihdr && i == l->ihdr)
		return l->hdr_va;
	return l->s[i].off;
}

static int write_sections(Elf *elf, const struct layout *l)
{
	for (size_t i = 0; i < l->ns; i++) {
		const struct sect *s = &l->s[i];
		Elf_Scn *scn = elf_newscn(elf);
		Elf64_Shdr *sh;
		Elf_Data *d;

		if (!scn || !(d = elf_newdata(scn)) || !(sh = elf64_getshdr(scn)))
			return -EIO;
		d->d_buf = s->buf;
		d->d_size = s->size;
		d->d_type = s->dtype;
		d->d_align = s->align;
		d->d_version = EV_CURRENT;
		sh->sh_name = shname(s->name);
		sh->sh_type = s->type;
		sh->sh_flags = s->flags;
		sh->sh_addr = sect_addr(l, i);
		sh->sh_offset = s->off;
		sh->sh_size = s->size;
		sh->sh_addralign = s->align;
		sh->sh_entsize = s->entsize;
		sh->sh_link = s->link;
		sh->sh_info = s->info;
	}
	return 0;
}

/* the laid-out image into im->tmp, with libelf keeping our layout */
static int write_file(const struct ij_image *im, const struct layout *l)
{
	int fd = open(im->tmp, O_WRONLY | O_TRUNC | O_CLOEXEC), err;
	Elf *elf;

	if (fd < 0) {
		err = -errno;
		cmd_err("%s: %s", im->tmp, strerror(errno));
		return err;
	}
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	err = elf ? 0 : -EIO;
	if (elf)
		elf_flagelf(elf, ELF_C_SET, ELF_F_LAYOUT);
	err = err ?: write_ehdr(elf, im, l);
	err = err ?: write_phdrs(elf, im, l);
	err = err ?: write_sections(elf, l);
	if (!err && elf_update(elf, ELF_C_WRITE) < 0)
		err = -EIO;
	if (err)
		cmd_err("%s: libelf: %s", im->path, elf_errmsg(-1));
	elf_end(elf);
	if (close(fd) && !err) {
		err = -errno;
		cmd_err("%s: %s", im->path, strerror(errno));
	}
	return err;
}

int ij_image_write(struct ij_image *im)
{
	struct layout l = { 0 };
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		cmd_err("libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	fill_note(im, &l.note);
	err = finish_unwind(im, &l);
	err = err ?: ij_lines_finish(im, &l.line, &l.info, &l.abbrev);
	err = err ?: fill_text(im, &l);
	err = err ?: fill_symtab(im, &l);
	if (!err) {
		lay_out(im, &l);
		err = write_file(im, &l);
	}
	free(l.text);
	free(l.syms);
	free(l.eh_hdr.p);
	free(l.line.p);
	free(l.info.p);
	free(l.abbrev.p);
	return err;
}

int ij_image_commit(struct ij_image *im)
{
	if (rename(im->tmp, im->path)) {
		int err = errno;

		cmd_err("%s: cannot rename into place: %s", im->path, strerror(err));
		return -err;
	}
	free(im->tmp);
	im->tmp = NULL;
	return 0;
}

static void free_node(void *p)
{
	free(p);
}

void ij_image_close(struct ij_image *im)
{
	if (im->tmp)
		unlink(im->tmp);
	free(im->tmp);
	free(im->path);
	free(im->text.p);
	free(im->segs);
	tdestroy(im->taken, free_node);
	free(im->strtab.p);
	free(im->syms);
	free(im->eh.p);
	free(im->fdes);
	free(im->lineprog.p);
	tdestroy(im->filehash, free_node);
	for (size_t i = 0; i < im->nfiles; i++)
		free(im->files[i]);
	free(im->files);
	memset(im, 0, sizeof(*im));
}
