/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Source lines and inline chains with libdw (read/pdline.h).  A compile
 * unit is found by the address ranges the DWARF declares; perf inject's
 * jitted-*.so declare none, so their units are also tried by line table.
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pdline.h"
#include "pdsym.h"

struct seg {
	uint64_t off, size, vaddr;
};

struct pd_lines {
	int          fd;
	Elf         *elf;
	Dwarf       *dw;
	struct seg  *segs;           /* file offset -> address, from the mapped image */
	size_t       nsegs;
	char        *names[16];      /* demangled names of the last inline chain */
};

static int add_seg(struct pd_lines *l, uint64_t off, uint64_t size, uint64_t vaddr)
{
	struct seg *s = realloc(l->segs, (l->nsegs + 1) * sizeof(*s));

	if (!s)
		return -ENOMEM;
	l->segs = s;
	s[l->nsegs++] = (struct seg){ off, size, vaddr };
	return 0;
}

/* the loadable parts of runtime: program headers, else allocated sections */
static int load_segs(struct pd_lines *l, const char *runtime)
{
	int fd = pd_open_regular(runtime), ret = 0;
	size_t n, i;
	Elf *e;

	if (fd < 0)
		return -ENOENT;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		close(fd);
		return -EINVAL;
	}
	if (!elf_getphdrnum(e, &n)) {
		for (i = 0; i < n && !ret; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
				ret = add_seg(l, ph.p_offset, ph.p_filesz, ph.p_vaddr);
		}
	}
	if (!ret && l->nsegs == 0) {
		Elf_Scn *scn = NULL;

		while (!ret && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) &&
			    sh.sh_type != SHT_NOBITS)
				ret = add_seg(l, sh.sh_offset, sh.sh_size, sh.sh_addr);
		}
	}
	elf_end(e);
	close(fd);
	return ret;
}

static Dwarf *open_dwarf(struct pd_lines *l, const char *path)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	l->fd = pd_open_regular(path);
	if (l->fd < 0)
		return NULL;
	l->elf = elf_begin(l->fd, ELF_C_READ_MMAP, NULL);
	if (l->elf)
		l->dw = dwarf_begin_elf(l->elf, DWARF_C_READ, NULL);
	/* an object without a single unit (stripped: .debug_* gone) is no use */
	if (l->dw && dwarf_nextcu(l->dw, off, &next, &hsize, NULL, NULL, NULL) == 0)
		return l->dw;
	if (l->dw)
		dwarf_end(l->dw);
	if (l->elf)
		elf_end(l->elf);
	close(l->fd);
	l->dw = NULL;
	l->elf = NULL;
	l->fd = -1;
	return NULL;
}

struct pd_lines *pd_lines_open(const char *debugfile, const char *runtime)
{
	struct pd_lines *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->fd = -1;
	elf_version(EV_CURRENT);
	if (load_segs(l, runtime ? runtime : debugfile) || !l->nsegs)
		goto err;
	if (!(debugfile && open_dwarf(l, debugfile)) && !(runtime && open_dwarf(l, runtime)))
		goto err;
	return l;
err:
	pd_lines_free(l);
	return NULL;
}

static void drop_names(struct pd_lines *l)
{
	for (size_t i = 0; i < sizeof(l->names) / sizeof(l->names[0]); i++) {
		free(l->names[i]);
		l->names[i] = NULL;
	}
}

void pd_lines_free(struct pd_lines *l)
{
	if (!l)
		return;
	drop_names(l);
	if (l->dw)
		dwarf_end(l->dw);
	if (l->elf)
		elf_end(l->elf);
	if (l->fd >= 0)
		close(l->fd);
	free(l->segs);
	free(l);
}

static int to_vaddr(const struct pd_lines *l, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < l->nsegs; i++) {
		if (off >= l->segs[i].off && off - l->segs[i].off < l->segs[i].size) {
			*vaddr = off - l->segs[i].off + l->segs[i].vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* the unit whose ranges hold addr, else whose line table does */
static int find_cu(struct pd_lines *l, uint64_t addr, Dwarf_Die *cu, Dwarf_Line **line)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	*line = NULL;
	if (dwarf_addrdie(l->dw, addr, cu)) {
		*line = dwarf_getsrc_die(cu, addr);
		return 0;
	}
	for (; dwarf_nextcu(l->dw, off, &next, &hsize, NULL, NULL, NULL) == 0; off = next) {
		if (!dwarf_offdie(l->dw, off + hsize, cu))
			continue;
		if (dwarf_haspc(cu, addr) > 0) {
			*line = dwarf_getsrc_die(cu, addr);
			return 0;
		}
	}
	/* no unit declares ranges covering addr: the line tables may */
	for (off = 0; dwarf_nextcu(l->dw, off, &next, &hsize, NULL, NULL, NULL) == 0; off = next) {
		Dwarf_Addr lo, hi;

		if (!dwarf_offdie(l->dw, off + hsize, cu))
			continue;
		if (dwarf_lowpc(cu, &lo) == 0 && dwarf_highpc(cu, &hi) == 0)
			continue;          /* has ranges, already asked */
		*line = dwarf_getsrc_die(cu, addr);
		if (*line)
			return 0;
	}
	return -ENOENT;
}

static const char *base(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;

	return !p ? "??" : b ? b + 1 : p;
}

int pd_lines_find(struct pd_lines *l, uint64_t addr, const char **file, int *line)
{
	Dwarf_Line *ln;
	Dwarf_Die cu;
	uint64_t va;

	if (!l || to_vaddr(l, addr, &va) || find_cu(l, va, &cu, &ln) || !ln ||
	    dwarf_lineno(ln, line))
		return -ENOENT;
	*file = base(dwarf_linesrc(ln, NULL, NULL));
	return 0;
}

/* a function's name: its linkage name demangled as perf shows it, else its name */
static const char *fn_name(struct pd_lines *l, Dwarf_Die *die, int slot)
{
	Dwarf_Attribute a;
	const char *s;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) &&
	    (s = dwarf_formstring(&a))) {
		char *d = pd_demangle(s);

		if (d) {
			l->names[slot] = d;
			return d;
		}
		return s;
	}
	if (dwarf_attr_integrate(die, DW_AT_name, &a) && (s = dwarf_formstring(&a)))
		return s;
	return "??";
}

int pd_lines_inline(struct pd_lines *l, uint64_t addr, struct pd_inl *out, int max)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Line *ln;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	const char *file = "??";
	int line = 0, n = 0, ns, i;
	uint64_t va;

	if (!l)
		return 0;
	drop_names(l);
	if (max > (int)(sizeof(l->names) / sizeof(l->names[0])))
		max = sizeof(l->names) / sizeof(l->names[0]);
	if (to_vaddr(l, addr, &va) || find_cu(l, va, &cu, &ln))
		return 0;
	if (ln) {
		file = base(dwarf_linesrc(ln, NULL, NULL));
		if (dwarf_lineno(ln, &line))
			line = 0;
	}
	/* the innermost scope at va, then what holds it in the tree: past an
	 * inlined instance, dwarf_getscopes goes on with its abstract
	 * definition, not with the function it was inlined into */
	ns = dwarf_getscopes(&cu, va, &scopes);
	if (ns > 0) {
		Dwarf_Die inner = scopes[0];

		free(scopes);
		scopes = NULL;
		ns = dwarf_getscopes_die(&inner, &scopes);
	}
	dwarf_getsrcfiles(&cu, &files, &nfiles);
	for (i = 0; i < ns && n < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute a;
		Dwarf_Word w;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		out[n].name = fn_name(l, &scopes[i], n);
		out[n].file = file;
		out[n].line = line;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller is where this one was inlined */
		line = dwarf_attr(&scopes[i], DW_AT_call_line, &a) && !dwarf_formudata(&a, &w) ?
		       (int)w : 0;
		file = "??";
		if (files && dwarf_attr(&scopes[i], DW_AT_call_file, &a) &&
		    !dwarf_formudata(&a, &w) && w < nfiles)
			file = base(dwarf_filesrc(files, w, NULL, NULL));
	}
	free(scopes);
	return n;
}
