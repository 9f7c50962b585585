/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The DWARF line tables of a relocated object, read straight from its
 * sections: DWARF 5 (DWARF Debugging Information Format Version 5, section
 * 6.2 "Line Number Information", with the unit headers of 7.5.1 and the
 * attribute encodings of 7.5.4-7.5.6) and versions 2 to 4 as LLVM emits
 * them.  A libdw handle would do the same, but opening one costs as much
 * as everything else the listener does for an object: dwarf_begin_elf
 * looks for the file's directory through /proc/self/fd even for an image
 * in memory, five system calls per object.  This reader makes none; the
 * growing row array, one path per file entry, and the directory and file
 * tables of the line table being read are taken from the caller's arena.
 *
 * Line tables are found the way DWARF consumers find them: through the
 * compilation units of .debug_info, whose DW_AT_stmt_list names the table
 * and whose DW_AT_comp_dir completes relative file names (LLVM's
 * DWARFContext and libdw both do so).  File names come out as LLVM's
 * getFileNameByIndex(AbsoluteFilePath) spells them.
 *
 * Every read is bounds-checked through a cursor that turns sticky-bad at
 * the first read past its end; a malformed unit or table is an error and
 * its rows are dropped, the tables read before stay.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "llvm/leb128.h"
#include "llvm/llvm.h"

/* 7.5.6 form encodings, 7.22 line number encodings (those read here) */
enum {
	FORM_addr = 0x01, FORM_block2 = 0x03, FORM_block4 = 0x04, FORM_data2 = 0x05,
	FORM_data4 = 0x06, FORM_data8 = 0x07, FORM_string = 0x08, FORM_block = 0x09,
	FORM_block1 = 0x0a, FORM_data1 = 0x0b, FORM_flag = 0x0c, FORM_sdata = 0x0d,
	FORM_strp = 0x0e, FORM_udata = 0x0f, FORM_ref_addr = 0x10, FORM_ref1 = 0x11,
	FORM_ref2 = 0x12, FORM_ref4 = 0x13, FORM_ref8 = 0x14, FORM_ref_udata = 0x15,
	FORM_indirect = 0x16, FORM_sec_offset = 0x17, FORM_exprloc = 0x18,
	FORM_flag_present = 0x19, FORM_strx = 0x1a, FORM_addrx = 0x1b, FORM_ref_sup4 = 0x1c,
	FORM_strp_sup = 0x1d, FORM_data16 = 0x1e, FORM_line_strp = 0x1f, FORM_ref_sig8 = 0x20,
	FORM_implicit_const = 0x21, FORM_loclistx = 0x22, FORM_rnglistx = 0x23,
	FORM_ref_sup8 = 0x24, FORM_strx1 = 0x25, FORM_strx2 = 0x26, FORM_strx3 = 0x27,
	FORM_strx4 = 0x28, FORM_addrx1 = 0x29, FORM_addrx2 = 0x2a, FORM_addrx3 = 0x2b,
	FORM_addrx4 = 0x2c, FORM_GNU_addr_index = 0x1f01, FORM_GNU_str_index = 0x1f02,
	FORM_GNU_ref_alt = 0x1f20, FORM_GNU_strp_alt = 0x1f21,
};
enum { AT_stmt_list = 0x10, AT_comp_dir = 0x1b, AT_str_offsets_base = 0x72 };
enum { UT_compile = 0x01, UT_partial = 0x03 };
enum { LNCT_path = 1, LNCT_directory_index = 2 };
enum {
	LNS_copy = 1, LNS_advance_pc, LNS_advance_line, LNS_set_file, LNS_set_column,
	LNS_negate_stmt, LNS_set_basic_block, LNS_const_add_pc, LNS_fixed_advance_pc,
	LNS_set_prologue_end, LNS_set_epilogue_begin, LNS_set_isa,
};
enum { LNE_end_sequence = 1, LNE_set_address, LNE_define_file, LNE_set_discriminator };

/* [p, end) of one section or part of it; bad once a read went past end */
struct cur {
	const unsigned char *p, *end;
	bool bad;
};

static struct cur cur_of(const unsigned char *base, size_t len, uint64_t at)
{
	struct cur c = { base, base, !base || at > len };

	if (!c.bad) {
		c.p = base + at;
		c.end = base + len;
	}
	return c;
}

static size_t left(const struct cur *c)
{
	return (size_t)(c->end - c->p);
}

static bool skip(struct cur *c, uint64_t n)
{
	if (c->bad || n > left(c)) {
		c->bad = true;
		return false;
	}
	c->p += n;
	return true;
}

/* n (<= 8) bytes, little-endian (the objects read are the host's) */
static uint64_t u(struct cur *c, unsigned n)
{
	uint64_t v = 0;

	if (c->bad || n > 8 || n > left(c)) {
		c->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

/* LEB128 (llvm/leb128.h); 0 and the cursor bad when it does not read */
static uint64_t leb(struct cur *c, bool sign)
{
	const unsigned char *q;
	uint64_t v;

	if (c->bad || !(q = jpl_leb128(c->p, c->end, &v, sign))) {
		c->bad = true;
		return 0;
	}
	c->p = q;
	return v;
}

static uint64_t uleb(struct cur *c)
{
	return leb(c, false);
}

static int64_t sleb(struct cur *c)
{
	return (int64_t)leb(c, true);
}

/* a NUL-terminated string in place */
static const char *cstr(struct cur *c)
{
	const unsigned char *nul;
	const char *s;

	if (c->bad || !(nul = memchr(c->p, 0, left(c)))) {
		c->bad = true;
		return NULL;
	}
	s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

/* the string at offset at of a string section, or NULL */
static const char *str_at(const unsigned char *sec, size_t len, uint64_t at)
{
	if (!sec || at >= len || !memchr(sec + at, 0, len - at))
		return NULL;
	return (const char *)sec + at;
}

/* what a unit header says about the encoding of what follows it */
struct unit {
	const struct jpl_dwarf_sections *s;
	unsigned version;
	unsigned offsize;               /* 4: 32-bit DWARF, 8: 64-bit */
	unsigned addrsize;
	uint64_t str_offsets_base;      /* 0: not known */
};

/* one attribute value: a number, a string, or bytes skipped */
struct value {
	uint64_t    u;
	const char *str;
	bool        is_str, is_strx;
};

static bool form_value(struct cur *c, const struct unit *un, uint64_t form, int64_t implicit,
		       struct value *v)
{
	const struct jpl_dwarf_sections *s = un->s;

	memset(v, 0, sizeof(*v));
	switch (form) {
	case FORM_addr:
		v->u = u(c, un->addrsize);
		break;
	case FORM_data1: case FORM_ref1: case FORM_flag: case FORM_strx1: case FORM_addrx1:
		v->u = u(c, 1);
		break;
	case FORM_data2: case FORM_ref2: case FORM_strx2: case FORM_addrx2:
		v->u = u(c, 2);
		break;
	case FORM_strx3: case FORM_addrx3:
		v->u = u(c, 3);
		break;
	case FORM_data4: case FORM_ref4: case FORM_ref_sup4: case FORM_strx4: case FORM_addrx4:
		v->u = u(c, 4);
		break;
	case FORM_data8: case FORM_ref8: case FORM_ref_sig8: case FORM_ref_sup8:
		v->u = u(c, 8);
		break;
	case FORM_data16:
		skip(c, 16);
		break;
	case FORM_sdata:
		v->u = (uint64_t)sleb(c);
		break;
	case FORM_udata: case FORM_ref_udata: case FORM_strx: case FORM_addrx:
	case FORM_loclistx: case FORM_rnglistx: case FORM_GNU_addr_index:
	case FORM_GNU_str_index:
		v->u = uleb(c);
		break;
	case FORM_ref_addr:
		v->u = u(c, un->version <= 2 ? un->addrsize : un->offsize);
		break;
	case FORM_sec_offset: case FORM_strp_sup: case FORM_GNU_ref_alt: case FORM_GNU_strp_alt:
		v->u = u(c, un->offsize);
		break;
	case FORM_flag_present:
		v->u = 1;
		break;
	case FORM_implicit_const:
		v->u = (uint64_t)implicit;
		break;
	case FORM_block1:
		skip(c, u(c, 1));
		break;
	case FORM_block2:
		skip(c, u(c, 2));
		break;
	case FORM_block4:
		skip(c, u(c, 4));
		break;
	case FORM_block: case FORM_exprloc:
		skip(c, uleb(c));
		break;
	case FORM_string:
		v->str = cstr(c);
		v->is_str = true;
		break;
	case FORM_strp:
		v->str = str_at(s->str, s->str_len, u(c, un->offsize));
		v->is_str = true;
		break;
	case FORM_line_strp:
		v->str = str_at(s->line_str, s->line_str_len, u(c, un->offsize));
		v->is_str = true;
		break;
	case FORM_indirect:
		/* no chains of indirections: one level, as every producer writes */
		form = uleb(c);
		if (form == FORM_indirect || form == FORM_implicit_const)
			return false;
		return form_value(c, un, form, 0, v);
	default:
		return false;           /* unknown: its size is unknown */
	}
	if (form == FORM_strx || (form >= FORM_strx1 && form <= FORM_strx4) ||
	    form == FORM_GNU_str_index)
		v->is_strx = v->is_str = true;
	return !c->bad;
}

/* string number i of .debug_str_offsets, from the unit's base */
static const char *strx(const struct unit *un, uint64_t i)
{
	const struct jpl_dwarf_sections *s = un->s;
	struct cur c;

	if (!un->str_offsets_base || i > (SIZE_MAX / 8))
		return NULL;
	c = cur_of(s->str_offsets, s->str_offsets_len, un->str_offsets_base);
	if (!skip(&c, i * un->offsize))
		return NULL;
	return str_at(s->str, s->str_len, u(&c, un->offsize));
}

static const char *value_str(const struct unit *un, const struct value *v)
{
	if (!v->is_str)
		return NULL;
	return v->is_strx ? strx(un, v->u) : v->str;
}

/* "unit_length": the length after it, setting un->offsize */
static bool unit_length(struct cur *c, struct unit *un, uint64_t *len)
{
	*len = u(c, 4);
	un->offsize = 4;
	if (*len == 0xffffffff) {
		*len = u(c, 8);
		un->offsize = 8;
	} else if (*len >= 0xfffffff0) {
		return false;           /* reserved */
	}
	return !c->bad && *len <= left(c);
}

/* ---- file names ---- */

static bool absolute(const char *p)
{
	return p && p[0] == '/';
}

/* a + "/" + b the way llvm::sys::path::append joins them: empty parts are skipped */
static size_t join(char *out, size_t at, const char *part)
{
	size_t n = strlen(part);

	if (!n)
		return at;
	if (at && out[at - 1] != '/')
		out[at++] = '/';
	memcpy(out + at, part, n);
	out[at + n] = 0;
	return at + n;
}

struct table {                  /* one line table's header, as read */
	struct unit   un;
	const char  **dirs;             /* v5: [0] is the compilation directory */
	size_t        ndirs;
	const char  **files;            /* the joined name of each entry */
	size_t        nfiles, files_cap;
	const char   *comp_dir;
};

/*
 * The name of a file entry: an absolute name stays; else the entry's
 * directory before it, and the compilation directory before both unless
 * the directory is absolute (and, in DWARF 5, unless the directory is
 * entry 0, the compilation directory itself).
 */
static int add_file(struct jpl_line_rows *r, struct table *t, const char *name, uint64_t dir)
{
	const char *d = "", *comp = "";
	size_t at = 0;
	char *path;

	if (!name)
		return -EINVAL;
	if (!absolute(name)) {
		if (t->un.version >= 5 && dir < t->ndirs)
			d = t->dirs[dir];
		else if (t->un.version < 5 && dir > 0 && dir <= t->ndirs)
			d = t->dirs[dir - 1];
		if (!d)
			d = "";
		if ((t->un.version < 5 || dir != 0) && t->comp_dir && !absolute(d))
			comp = t->comp_dir;
	} else {
		d = "";
	}
	if (!(path = jpl_alloc(r->arena, strlen(comp) + strlen(d) + strlen(name) + 3)))
		return -ENOMEM;
	path[0] = 0;
	at = join(path, at, comp);
	at = join(path, at, d);
	join(path, at, name);
	if (t->nfiles == t->files_cap) {
		size_t cap = t->files_cap ? 2 * t->files_cap : 8;
		const char **v = jpl_realloc(r->arena, t->files, t->files_cap * sizeof(*v),
					     cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->files = v;
		t->files_cap = cap;
	}
	t->files[t->nfiles++] = path;
	return 0;
}

/* v2-4: include_directories, then file_names (6.2.4 items 15-16 of DWARF 4) */
static int v4_entries(struct jpl_line_rows *r, struct table *t, struct cur *c)
{
	size_t cap = 0;
	int err;

	for (;;) {
		const char *d = cstr(c);

		if (!d)
			return -EINVAL;
		if (!*d)
			break;
		if (t->ndirs == cap) {
			size_t old = cap * sizeof(*t->dirs);
			const char **v = jpl_realloc(r->arena, t->dirs, old,
						     (cap = cap ? 2 * cap : 8) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			t->dirs = v;
		}
		t->dirs[t->ndirs++] = d;
	}
	for (;;) {
		const char *name = cstr(c);
		uint64_t dir;

		if (!name)
			return -EINVAL;
		if (!*name)
			break;
		dir = uleb(c);
		uleb(c);                /* modification time */
		uleb(c);                /* length */
		if (c->bad)
			return -EINVAL;
		if ((err = add_file(r, t, name, dir)))
			return err;
	}
	return 0;
}

/*
 * v5: an entry format (pairs of content type and form), a count, and the
 * entries; only the path and the directory index are kept.
 */
static int v5_entries(struct jpl_line_rows *r, struct table *t, struct cur *c, bool files)
{
	uint64_t fmt[2 * 255];
	unsigned nfmt = (unsigned)u(c, 1);
	uint64_t count;
	int err;

	for (unsigned i = 0; i < nfmt; i++) {
		fmt[2 * i] = uleb(c);
		fmt[2 * i + 1] = uleb(c);
	}
	count = uleb(c);
	if (c->bad || (count && !nfmt) || count > left(c))
		return -EINVAL;         /* every entry takes a byte at least */
	if (!files) {
		if (!(t->dirs = jpl_alloc(r->arena, (count ? count : 1) * sizeof(*t->dirs))))
			return -ENOMEM;
		t->ndirs = count;
	}
	for (uint64_t k = 0; k < count; k++) {
		const char *path = NULL;
		uint64_t dir = 0;

		for (unsigned i = 0; i < nfmt; i++) {
			struct value v;

			if (!form_value(c, &t->un, fmt[2 * i + 1], 0, &v))
				return -EINVAL;
			if (fmt[2 * i] == LNCT_path) {
				if (!(path = value_str(&t->un, &v)))
					return -EINVAL;
			} else if (fmt[2 * i] == LNCT_directory_index) {
				if (v.is_str)
					return -EINVAL;
				dir = v.u;
			}
		}
		if (!path)
			return -EINVAL;
		if (!files)
			t->dirs[k] = path;
		else if ((err = add_file(r, t, path, dir)))
			return err;
	}
	/* DWARF 5: the compilation directory is directory 0 when the unit has none */
	if (!files && !t->comp_dir && t->ndirs)
		t->comp_dir = t->dirs[0];
	return 0;
}

/* ---- the line number program (6.2.5) ---- */

struct state {
	uint64_t addr;
	uint64_t op_index;
	uint64_t file;
	uint64_t line;                  /* unsigned: a hostile table may wrap it */
	uint64_t discrim;
};

static int emit(struct jpl_line_rows *r, const struct table *t, const struct state *st,
		bool end)
{
	struct jpl_line_row *row;
	/* v5 numbers files from 0, earlier versions from 1 */
	uint64_t f = t->un.version >= 5 ? st->file : st->file - 1;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 32;
		struct jpl_line_row *v = jpl_realloc(r->arena, r->v, r->cap * sizeof(*v),
						     cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	row = &r->v[r->n++];
	row->addr = st->addr;
	row->file = f < t->nfiles ? t->files[f] : "";
	row->line = st->line <= UINT32_MAX ? (uint32_t)st->line : 0;
	row->discrim = st->discrim <= UINT32_MAX ? (uint32_t)st->discrim : 0;
	row->end_sequence = end;
	return 0;
}

static int program(struct jpl_line_rows *r, struct table *t, struct cur *c,
		   const unsigned char *std_len, unsigned opcode_base, unsigned min_inst,
		   unsigned max_ops, int line_base, unsigned line_range)
{
	struct state st = { .file = 1, .line = 1 };
	int err;

	/*
	 * operation advance (6.2.5.1): max_ops > 1 only on VLIW machines; the
	 * others pay no division per row
	 */
#define ADVANCE(n) do {                                                        \
		uint64_t adv_ = (n);                                           \
		if (max_ops == 1) {                                            \
			st.addr += min_inst * adv_;                            \
			break;                                                 \
		}                                                              \
		st.addr += min_inst * ((st.op_index + adv_) / max_ops);        \
		st.op_index = (st.op_index + adv_) % max_ops;                  \
	} while (0)

	while (c->p < c->end) {
		unsigned op = *c->p++;

		if (op >= opcode_base) {                /* special opcode */
			unsigned adj = op - opcode_base;

			ADVANCE(adj / line_range);
			st.line += (uint64_t)(int64_t)(line_base + (int)(adj % line_range));
			if ((err = emit(r, t, &st, false)))
				return err;
			st.discrim = 0;
			continue;
		}
		switch (op) {
		case 0: {                               /* extended opcode */
			uint64_t len = uleb(c);
			struct cur e;
			unsigned sub;

			if (c->bad || len == 0 || len > left(c))
				return -EINVAL;
			e = (struct cur){ c->p, c->p + len, false };
			c->p += len;
			sub = (unsigned)u(&e, 1);
			switch (sub) {
			case LNE_end_sequence:
				if ((err = emit(r, t, &st, true)))
					return err;
				st = (struct state){ .file = 1, .line = 1 };
				break;
			case LNE_set_address:
				if (len - 1 != 4 && len - 1 != 8)
					return -EINVAL;
				st.addr = u(&e, (unsigned)(len - 1));
				st.op_index = 0;
				break;
			case LNE_define_file: {
				const char *name = cstr(&e);
				uint64_t dir = uleb(&e);

				if (e.bad)
					return -EINVAL;
				if ((err = add_file(r, t, name, dir)))
					return err;
				break;
			}
			case LNE_set_discriminator:
				st.discrim = uleb(&e);
				break;
			default:
				break;                  /* vendor: its length says how far */
			}
			if (e.bad)
				return -EINVAL;
			break;
		}
		case LNS_copy:
			if ((err = emit(r, t, &st, false)))
				return err;
			st.discrim = 0;
			break;
		case LNS_advance_pc:
			ADVANCE(uleb(c));
			break;
		case LNS_advance_line:
			st.line += (uint64_t)sleb(c);
			break;
		case LNS_set_file:
			st.file = uleb(c);
			break;
		case LNS_const_add_pc:
			ADVANCE((255 - opcode_base) / line_range);
			break;
		case LNS_fixed_advance_pc:
			st.addr += u(c, 2);
			st.op_index = 0;
			break;
		case LNS_negate_stmt: case LNS_set_basic_block:
		case LNS_set_prologue_end: case LNS_set_epilogue_begin:
			break;                          /* not kept */
		default:
			/* set_column, set_isa and unknown ones: their ULEB operands */
			for (unsigned i = 0; i < std_len[op - 1]; i++)
				uleb(c);
			break;
		}
		if (c->bad)
			return -EINVAL;
	}
#undef ADVANCE
	return 0;
}

/* the line table at offset off of .debug_line, for a unit whose comp_dir is given */
static int line_table(struct jpl_line_rows *r, const struct jpl_dwarf_sections *s, uint64_t off,
		      const char *comp_dir, uint64_t str_offsets_base)
{
	struct table t = { .un = { .s = s, .str_offsets_base = str_offsets_base },
			   .comp_dir = comp_dir };
	struct cur c = cur_of(s->line, s->line_len, off), prog;
	const unsigned char *std_len;
	unsigned min_inst, max_ops = 1, opcode_base, line_range;
	uint64_t len, hlen;
	int line_base, err = -EINVAL;

	if (!unit_length(&c, &t.un, &len))
		return -EINVAL;
	c.end = c.p + len;
	t.un.version = (unsigned)u(&c, 2);
	if (t.un.version < 2 || t.un.version > 5)
		return -EINVAL;
	t.un.addrsize = 8;
	if (t.un.version >= 5) {
		t.un.addrsize = (unsigned)u(&c, 1);
		if (u(&c, 1))
			return -EINVAL;         /* segment selectors: not on Linux */
	}
	hlen = u(&c, t.un.offsize);
	if (c.bad || hlen > left(&c))
		return -EINVAL;
	prog = (struct cur){ c.p + hlen, c.end, false };
	c.end = c.p + hlen;
	min_inst = (unsigned)u(&c, 1);
	if (t.un.version >= 4)
		max_ops = (unsigned)u(&c, 1);
	u(&c, 1);                               /* default_is_stmt */
	line_base = (int8_t)u(&c, 1);
	line_range = (unsigned)u(&c, 1);
	opcode_base = (unsigned)u(&c, 1);
	std_len = c.p;
	if (c.bad || !max_ops || !line_range || !opcode_base || !skip(&c, opcode_base - 1))
		return -EINVAL;
	if (t.un.version >= 5)
		err = v5_entries(r, &t, &c, false) ?: v5_entries(r, &t, &c, true);
	else
		err = v4_entries(r, &t, &c);
	return err ?: program(r, &t, &prog, std_len, opcode_base, min_inst, max_ops, line_base,
			      line_range);
}

/* ---- compilation units (7.5.1.1) ---- */

/* the attribute specifications of abbreviation code of the table at off */
static bool find_abbrev(const struct jpl_dwarf_sections *s, uint64_t off, uint64_t code,
			struct cur *specs)
{
	struct cur c = cur_of(s->abbrev, s->abbrev_len, off);

	while (!c.bad) {
		uint64_t k = uleb(&c);

		if (!k || c.bad)
			return false;
		uleb(&c);                       /* tag */
		u(&c, 1);                       /* has children */
		if (k == code) {
			*specs = c;
			return !c.bad;
		}
		for (;;) {
			uint64_t at = uleb(&c), form = uleb(&c);

			if (form == FORM_implicit_const)
				sleb(&c);
			if (c.bad || (!at && !form))
				break;
		}
	}
	return false;
}

/*
 * The unit at *off of .debug_info: its line table, if its first DIE names
 * one.  *off moves to the next unit; false when the units cannot be walked
 * further.
 */
static bool unit(struct jpl_line_rows *r, const struct jpl_dwarf_sections *s, uint64_t *off,
		 int *err)
{
	struct unit un = { .s = s };
	struct cur c = cur_of(s->info, s->info_len, *off), specs;
	uint64_t len, abbrev_off, stmt = UINT64_MAX;
	struct value comp = { 0 };
	unsigned type = UT_compile;

	if (!unit_length(&c, &un, &len))
		return false;
	*off = (uint64_t)(c.p - s->info) + len;
	c.end = c.p + len;
	un.version = (unsigned)u(&c, 2);
	if (un.version < 2 || un.version > 5)
		return true;                    /* another unit may be readable */
	if (un.version >= 5) {
		type = (unsigned)u(&c, 1);
		un.addrsize = (unsigned)u(&c, 1);
		abbrev_off = u(&c, un.offsize);
	} else {
		abbrev_off = u(&c, un.offsize);
		un.addrsize = (unsigned)u(&c, 1);
	}
	if (c.bad || (type != UT_compile && type != UT_partial))
		return !c.bad;                  /* type and split units have no lines here */
	if (!find_abbrev(s, abbrev_off, uleb(&c), &specs))
		goto bad;
	for (;;) {
		uint64_t at = uleb(&specs), form = uleb(&specs);
		int64_t implicit = form == FORM_implicit_const ? sleb(&specs) : 0;
		struct value v;

		if (specs.bad)
			goto bad;
		if (!at && !form)
			break;
		if (!form_value(&c, &un, form, implicit, &v))
			goto bad;
		if (at == AT_stmt_list && !v.is_str)
			stmt = v.u;
		else if (at == AT_comp_dir)
			comp = v;
		else if (at == AT_str_offsets_base && !v.is_str)
			un.str_offsets_base = v.u;
	}
	if (stmt != UINT64_MAX) {
		int e = line_table(r, s, stmt, value_str(&un, &comp), un.str_offsets_base);

		if (e && (!*err || e == -ENOMEM))
			*err = e;
		return e != -ENOMEM;
	}
	return true;
bad:
	*err = *err ?: -EINVAL;
	return true;                            /* its length still leads to the next */
}

int jpl_debugline_read(struct jpl_line_rows *r, const struct jpl_dwarf_sections *s,
		       struct jpl_arena *a)
{
	uint64_t off = 0;
	int err = 0;

	memset(r, 0, sizeof(*r));
	r->arena = a;
	if (!s->info || !s->line)
		return -ENODATA;
	while (off < s->info_len) {
		size_t rows = r->n;
		int e = 0;

		bool more = unit(r, s, &off, &e);

		if (e) {
			r->n = rows;            /* a table read in part is not used */
			if (!err || e == -ENOMEM)
				err = e;
		}
		if (!more || e == -ENOMEM) {
			err = err ?: -EINVAL;
			break;
		}
	}
	return err;
}
