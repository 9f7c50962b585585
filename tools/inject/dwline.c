/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * .debug_line of a code image from the DEBUG_INFO records: one sequence
 * per function, its rows at the entries' addresses moved to the image,
 * ending at the last entry as perf inject's images end (code after the
 * last entry has no line).  DWARF 2, as perf writes: one compilation unit
 * in .debug_info whose only attribute is DW_AT_stmt_list, which is all
 * objdump -l, addr2line and libdw need.  The file names are in the
 * header's table, each once.
 */
#include "config.h"

#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "read/util.h"

enum {
	LNS_copy = 1, LNS_advance_pc = 2, LNS_advance_line = 3, LNS_set_file = 4,
	LNE_end_sequence = 1, LNE_set_address = 2,
	OPCODE_BASE = 13,
};

struct fileent {
	const char *name;
	uint32_t    idx;
};

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fileent *)a)->name, ((const struct fileent *)b)->name);
}

static int file_index(struct ij_image *im, const char *name, uint32_t *idx)
{
	struct fileent key = { name, 0 }, *e, **found;

	found = tfind(&key, &im->filehash, file_cmp);
	if (found) {
		*idx = (*found)->idx;
		return 0;
	}
	if (rd_grow((void **)&im->files, &im->filecap, im->nfiles + 1, sizeof(*im->files)))
		return -ENOMEM;
	e = malloc(sizeof(*e));
	if (!e || !(im->files[im->nfiles] = strdup(name))) {
		free(e);
		return -ENOMEM;
	}
	e->name = im->files[im->nfiles];
	e->idx = (uint32_t)++im->nfiles;
	if (!tsearch(e, &im->filehash, file_cmp)) {
		free(e);
		return -ENOMEM;
	}
	*idx = e->idx;
	return 0;
}

static int set_address(struct ij_buf *b, uint64_t va)
{
	unsigned char op[3] = { 0, 9, LNE_set_address };

	return ij_buf_put(b, op, 3) ?: ij_buf_put(b, &va, 8);
}

/* the DEBUG_INFO entries that have a place: inside the code, in address order */
static size_t next_entry(const struct ij_func *fn, size_t i, uint64_t last)
{
	for (; i < fn->nlines; i++) {
		const struct ij_srcline *l = &fn->lines[i];

		if (l->addr >= fn->code_addr && l->addr - fn->code_addr <= fn->size &&
		    l->addr >= last)
			return i;
	}
	return fn->nlines;
}

/*
 * The rows of one function.  Its last entry only ends the sequence, as in
 * perf's images: the code from there on has no line (objdump -l and
 * addr2line agree).
 */
int ij_lines_add(struct ij_image *im, const struct ij_func *fn, uint64_t vaddr)
{
	struct ij_buf *b = &im->lineprog;
	uint64_t last = vaddr;
	int64_t line = 1;
	uint32_t file = 1, idx;
	int err = 0;
	size_t i = next_entry(fn, 0, fn->code_addr), j;

	if (i == fn->nlines)
		return 0;
	err = set_address(b, vaddr + (fn->lines[i].addr - fn->code_addr));
	last = vaddr + (fn->lines[i].addr - fn->code_addr);
	for (; i < fn->nlines && !err; i = j) {
		const struct ij_srcline *l = &fn->lines[i];
		uint64_t va = vaddr + (l->addr - fn->code_addr);

		j = next_entry(fn, i + 1, l->addr);
		if (va != last) {
			unsigned char op = LNS_advance_pc;

			err = ij_buf_put(b, &op, 1) ?: ij_buf_uleb(b, va - last);
			last = va;
		}
		if (err || j == fn->nlines)
			break;
		err = file_index(im, l->file ? l->file : "", &idx);
		if (!err && idx != file) {
			unsigned char op = LNS_set_file;

			err = ij_buf_put(b, &op, 1) ?: ij_buf_uleb(b, idx);
			file = idx;
		}
		if (!err && (int64_t)l->line != line) {
			unsigned char op = LNS_advance_line;

			err = ij_buf_put(b, &op, 1) ?: ij_buf_sleb(b, (int64_t)l->line - line);
			line = l->line;
		}
		if (!err) {
			unsigned char op = LNS_copy;

			err = ij_buf_put(b, &op, 1);
		}
	}
	if (!err) {
		unsigned char op[3] = { 0, 1, LNE_end_sequence };

		err = ij_buf_put(b, op, 3);
	}
	return err;
}

static int put32(struct ij_buf *b, uint32_t v)
{
	return ij_buf_put(b, &v, 4);
}

int ij_lines_finish(struct ij_image *im, struct ij_buf *line, struct ij_buf *info,
		    struct ij_buf *abbrev)
{
	static const unsigned char std_lengths[OPCODE_BASE - 1] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	static const unsigned char abbrev_tab[] = {
		1, 0x11, 0,             /* 1: DW_TAG_compile_unit, no children */
		0x10, 0x06,             /* DW_AT_stmt_list, DW_FORM_data4 */
		0, 0, 0,
	};
	size_t hdr_len_at, start;
	uint32_t v;
	int err;

	if (!im->lineprog.len)
		return 0;
	/* unit_length, version, header_length (patched), then the header */
	err = put32(line, 0);
	err = err ?: ij_buf_put(line, "\2\0", 2);
	hdr_len_at = line->len;
	err = err ?: put32(line, 0);
	start = line->len;
	{
		unsigned char h[4] = { 1, 1, (unsigned char)-5, 14 };  /* min_inst, is_stmt, line_base, line_range */
		unsigned char ob = OPCODE_BASE;

		err = err ?: ij_buf_put(line, h, 4) ?: ij_buf_put(line, &ob, 1);
	}
	err = err ?: ij_buf_put(line, std_lengths, sizeof(std_lengths));
	err = err ?: ij_buf_put(line, "", 1);          /* no include directories */
	for (size_t i = 0; i < im->nfiles && !err; i++)
		err = ij_buf_put(line, im->files[i], strlen(im->files[i]) + 1) ?:
		      ij_buf_put(line, "\0\0\0", 3);   /* dir, mtime, length */
	err = err ?: ij_buf_put(line, "", 1);
	if (err)
		return err;
	v = (uint32_t)(line->len - start);
	memcpy(line->p + hdr_len_at, &v, 4);
	err = ij_buf_put(line, im->lineprog.p, im->lineprog.len);
	if (err)
		return err;
	v = (uint32_t)(line->len - 4);
	memcpy(line->p, &v, 4);

	/* .debug_info: one DWARF 2 unit, 8-byte addresses */
	err = put32(info, 2 + 4 + 1 + 1 + 4);
	err = err ?: ij_buf_put(info, "\2\0", 2) ?: put32(info, 0) ?: ij_buf_put(info, "\x08\x01", 2);
	err = err ?: put32(info, 0);
	err = err ?: ij_buf_put(abbrev, abbrev_tab, sizeof(abbrev_tab));
	return err;
}
