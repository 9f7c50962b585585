/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf dump --elf: each CODE_LOAD of a jitdump as a small ELF
 * executable (libelf), so objdump -d and gdb show the code at its run-time
 * address under its name.  ET_EXEC with one PT_LOAD rather than a
 * relocatable object: tools then use code_addr as is instead of 0.
 * The ELF header takes the jitdump's e_machine and byte order, so a file
 * from another machine disassembles for that machine.
 */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "read/jitdump_read.h"
#include "tools/cmds.h"
#include "tools/pathsafe.h"
#include "tools/stagedir.h"

/* section header string table: "\0.text\0.symtab\0.strtab\0.shstrtab\0" */
static const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
enum { SH_TEXT = 1, SH_SYMTAB = 7, SH_STRTAB = 15, SH_SHSTRTAB = 23 };

static int is_32bit(uint32_t m)
{
	return m == EM_386 || m == EM_ARM || m == EM_PPC || m == EM_MIPS;
}

static Elf_Scn *add_section(Elf *elf, uint32_t name, uint32_t type, uint64_t flags,
			    void *buf, size_t size, Elf_Type dtype, uint64_t align)
{
	Elf_Scn *scn = elf_newscn(elf);
	Elf_Data *d;
	GElf_Shdr sh;

	if (!scn || !(d = elf_newdata(scn)))
		return NULL;
	d->d_buf = buf;
	d->d_size = size;
	d->d_type = dtype;
	d->d_align = align;
	d->d_version = EV_CURRENT;
	if (!gelf_getshdr(scn, &sh))
		return NULL;
	sh.sh_name = name;
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addralign = align;
	return gelf_update_shdr(scn, &sh) ? scn : NULL;
}

/* Write one function; returns 0 or a libelf/errno message in err. */
static int write_one(int fd, const struct jd_file *f, const struct jd_record *rec,
		     const char **err)
{
	const struct jitdump_file_header *h = jd_header(f);
	int cls = is_32bit(h->elf_mach) ? ELFCLASS32 : ELFCLASS64;
	size_t namelen = strlen(rec->name);
	char *strtab = NULL;
	void *syms = NULL;
	Elf_Scn *text, *symtab, *str, *shstr;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *sd;
	size_t symsz;
	Elf *elf;
	int ret = -1;

	*err = NULL;
	if (cls == ELFCLASS32 && (rec->code_addr > UINT32_MAX ||
				  rec->code_size > UINT32_MAX - rec->code_addr)) {
		*err = "the code's address does not fit the 32-bit ELF of this machine";
		return -1;
	}
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!elf)
		goto out;
	if (!gelf_newehdr(elf, cls) || !gelf_getehdr(elf, &eh))
		goto out;
	eh.e_ident[EI_DATA] = (jd_swapped(f) ^ (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
			      ? ELFDATA2MSB : ELFDATA2LSB;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_EXEC;
	eh.e_machine = (GElf_Half)h->elf_mach;
	eh.e_version = EV_CURRENT;
	eh.e_entry = rec->code_addr;
	eh.e_shstrndx = 4;
	if (!gelf_update_ehdr(elf, &eh) || !gelf_newphdr(elf, 1))
		goto out;

	strtab = malloc(namelen + 2);
	symsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	syms = calloc(2, symsz);
	if (!strtab || !syms) {
		*err = strerror(ENOMEM);
		goto out;
	}
	strtab[0] = '\0';
	memcpy(strtab + 1, rec->name, namelen + 1);

	text = add_section(elf, SH_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
			   (void *)rec->code, rec->code_size, ELF_T_BYTE, 16);
	symtab = add_section(elf, SH_SYMTAB, SHT_SYMTAB, 0, syms, 2 * symsz, ELF_T_SYM, 8);
	str = add_section(elf, SH_STRTAB, SHT_STRTAB, 0, strtab, namelen + 2, ELF_T_BYTE, 1);
	shstr = add_section(elf, SH_SHSTRTAB, SHT_STRTAB, 0, (void *)shstrtab,
			    sizeof(shstrtab), ELF_T_BYTE, 1);
	if (!text || !symtab || !str || !shstr)
		goto out;

	/* symbol 1: the function, global, over the whole code */
	sd = elf_getdata(symtab, NULL);
	memset(&sym, 0, sizeof(sym));
	sym.st_name = 1;
	sym.st_value = rec->code_addr;
	sym.st_size = rec->code_size;
	sym.st_info = GELF_ST_INFO(STB_GLOBAL, STT_FUNC);
	sym.st_shndx = (GElf_Section)elf_ndxscn(text);
	if (!gelf_update_sym(sd, 1, &sym))
		goto out;
	if (!gelf_getshdr(symtab, &sh))
		goto out;
	sh.sh_link = (GElf_Word)elf_ndxscn(str);
	sh.sh_info = 1;             /* first global symbol */
	sh.sh_entsize = symsz;
	if (!gelf_update_shdr(symtab, &sh))
		goto out;
	if (!gelf_getshdr(text, &sh))
		goto out;
	sh.sh_addr = rec->code_addr;
	if (!gelf_update_shdr(text, &sh))
		goto out;

	/* lay out, then point the segment at .text's place in the file */
	if (elf_update(elf, ELF_C_NULL) < 0 || !gelf_getshdr(text, &sh))
		goto out;
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_offset = sh.sh_offset;
	ph.p_vaddr = ph.p_paddr = rec->code_addr;
	ph.p_filesz = ph.p_memsz = rec->code_size;
	ph.p_align = 1;
	if (!gelf_update_phdr(elf, 0, &ph) || elf_update(elf, ELF_C_WRITE) < 0)
		goto out;
	ret = 0;
out:
	if (ret && !*err)
		*err = elf_errmsg(-1);
	elf_end(elf);
	free(strtab);
	free(syms);
	return ret;
}

/* INDEX-NAME.elf with every byte outside [A-Za-z0-9._-] turned into '_'. */
static void file_name(char *buf, size_t len, const struct jd_record *rec)
{
	int n = snprintf(buf, len, "%" PRIu64 "-", rec->code_index);
	size_t i = n > 0 ? (size_t)n : 0;

	for (const char *p = rec->name; *p && i + 5 < len && i < 120; p++, i++) {
		char ch = *p;

		buf[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			 (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-' ? ch : '_';
	}
	snprintf(buf + i, len - i, ".elf");
}

/*
 * All or nothing: the files are staged and appear in dir only once the
 * jitdump was read to its end and every one was written, so a damaged
 * record part-way, a function that cannot be written or a full disk
 * leaves dir as it was (tools/stagedir.h).
 */
int jd_write_elfs(struct jd_file *f, const char *dir)
{
	const struct stagedir_file *bad = NULL;
	struct stagedir sd;
	struct jd_record rec;
	char err[512], name[160];
	const char *msg;
	int r, fd;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		cmd_err("libelf: %s", elf_errmsg(-1));
		return 1;
	}
	/* DIR is the user's: followed if a link, unless another user planted it */
	if (pathsafe_planted(dir, &msg)) {
		cmd_err("%s: %s", dir, msg);
		return 1;
	}
	r = stagedir_open(&sd, dir);
	if (r) {
		cmd_err("%s: %s", dir, strerror(-r));
		return 1;
	}
	while ((r = jd_next(f, &rec, err, sizeof(err))) != 0) {
		if (r < 0) {
			cmd_err("%s", err);
			goto out;
		}
		if (rec.id != JIT_CODE_LOAD)
			continue;
		file_name(name, sizeof(name), &rec);
		fd = stagedir_create(&sd, name, rec.offset);
		if (fd < 0) {
			r = fd;
			msg = strerror(-r);
		} else {
			r = write_one(fd, f, &rec, &msg);
			if (close(fd) && !r) {
				r = -1;
				msg = strerror(errno);
			}
		}
		if (r) {           /* named as the user knows it, not the staged file */
			cmd_err("%s: offset %" PRIu64 ": cannot write %s/%s: %s",
				jd_path(f), rec.offset, dir, name, msg);
			goto out;
		}
	}
	r = stagedir_commit(&sd, &bad);
	if (r) {
		cmd_err("%s: offset %" PRIu64 ": cannot write %s/%s: %s",
			jd_path(f), bad->tag, dir, bad->name, strerror(-r));
		goto out;
	}
	for (size_t i = 0; i < sd.n; i++)
		printf("%s/%s\n", dir, sd.files[i].name);
out:
	stagedir_close(&sd);
	return r ? 1 : 0;
}
