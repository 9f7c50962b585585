/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Check suite for libjitperf-llvm's DWARF line table reader
 * (llvm/debugline.c): on objects LLVM compiles here (jitcalc's language at
 * -O0, DWARF 4 and 5, one function and several per object), relocated at
 * made-up addresses, it gives every row libdw's dwarf_getsrclines gives,
 * with the same address, line, file name, discriminator and end of
 * sequence; a hand-written DWARF 4 table exercises the opcodes LLVM does
 * not emit at -O0; truncated and corrupted sections give errors, never a
 * read outside them (run under the sanitizers to see that).
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <gelf.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "tests/check-subr.h"
#include "examples/jit.h"
#include "examples/llvm_ir.h"
#include "llvm/llvm.h"

/* What the rows read by a test take; an empty arena allocates from malloc. */
static struct jpl_arena rows_arena;

static const char source[] =
	"fn add(a, b) {\n"
	"\treturn a + b;\n"
	"}\n"
	"fn fib(n) {\n"
	"\tif (n < 2) {\n"
	"\t\treturn n;\n"
	"\t}\n"
	"\treturn fib(n - 1) + fib(n - 2);\n"
	"}\n"
	"fn loop(a, b) {\n"
	"\tvar s = 0;\n"
	"\tvar i = 0;\n"
	"\twhile (i < a) {\n"
	"\t\tif (i % 3 == 0) { s = s + b * i; } else { s = s - i; }\n"
	"\t\ti = i + 1;\n"
	"\t}\n"
	"\treturn s;\n"
	"}\n";

#define TEXT_BASE 0x7f1234560000ull

struct obj {
	unsigned char *img;
	size_t         size;
};

/* The relocatable object LLVM makes of the program's functions [from, from + n). */
static struct obj compile(int from, int n, int dwarf)
{
	struct jc_prog *p = jc_prog_new();
	char *triple, *msg = NULL;
	LLVMContextRef ctx;
	LLVMTargetRef target;
	LLVMTargetMachineRef tm;
	LLVMModuleRef m;
	LLVMMemoryBufferRef buf;
	struct obj o;

	ck_assert_ptr_nonnull(p);
	ck_assert_msg(jc_parse(p, source, "/src/dir/lines.jc") == 0 && jc_parse_finish(p) == 0,
		      "%s", p->err);
	LLVMInitializeNativeTarget();
	LLVMInitializeNativeAsmPrinter();
	triple = LLVMGetDefaultTargetTriple();
	ck_assert_int_eq(LLVMGetTargetFromTriple(triple, &target, &msg), 0);
	tm = LLVMCreateTargetMachine(target, triple, "", "", LLVMCodeGenLevelNone,
				     LLVMRelocDefault, LLVMCodeModelJITDefault);
	ctx = LLVMContextCreate();
	m = jc_llvm_module(p, ctx, "lines", &p->fn[from], n, dwarf);
	ck_assert_msg(m != NULL, "%s", p->err);
	LLVMSetTarget(m, triple);
	ck_assert_msg(!LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &msg, &buf),
		      "%s", msg);
	o.size = LLVMGetBufferSize(buf);
	o.img = malloc(o.size);
	ck_assert_ptr_nonnull(o.img);
	memcpy(o.img, LLVMGetBufferStart(buf), o.size);
	LLVMDisposeMemoryBuffer(buf);
	LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	LLVMDisposeMessage(triple);
	jc_prog_free(p);
	return o;
}

/* Relocate the debug sections as if every loaded section were at TEXT_BASE + 64 KiB * index. */
static void relocate(struct obj *o)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)o->img;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(o->img + eh->e_shoff);
	uint64_t addr[64] = { 0 };
	int done = 0;

	ck_assert_uint_le(eh->e_shnum, 64);
	for (unsigned i = 1; i < eh->e_shnum; i++)
		if (sh[i].sh_flags & SHF_ALLOC)
			addr[i] = TEXT_BASE + 0x10000ull * i;
	/* every debug section in place */
	for (unsigned i = 1; i < eh->e_shnum; i++)
		if (!(sh[i].sh_flags & SHF_ALLOC) && sh[i].sh_type == SHT_PROGBITS)
			done += jpl_relocated(o->img, o->size, i, o->img + sh[i].sh_offset, addr,
					      eh->e_shnum);
	ck_assert_int_gt(done, 0);
}

static struct jpl_dwarf_sections sections(const struct obj *o)
{
	struct jpl_dwarf_sections s;

	jpl_dwarf_sections_of(o->img, o->size, &s);
	ck_assert_ptr_nonnull(s.info);
	ck_assert_ptr_nonnull(s.abbrev);
	ck_assert_ptr_nonnull(s.line);
	ck_assert_ptr_nonnull(s.str);
	return s;
}

/* Our rows against libdw's on the same relocated image. */
static void same_as_libdw(int from, int n, int dwarf)
{
	struct obj o = compile(from, n, dwarf);
	struct jpl_dwarf_sections s;
	struct jpl_line_rows r;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t type;
	size_t k = 0, ncu = 0;
	Elf *elf;
	Dwarf *dw;

	relocate(&o);
	s = sections(&o);
	ck_assert_int_eq(jpl_debugline_read(&r, &s, &rows_arena), 0);
	ck_assert_uint_gt(r.n, 4 * (size_t)n);
	elf_version(EV_CURRENT);
	ck_assert_ptr_nonnull(elf = elf_memory((char *)o.img, o.size));
	ck_assert_ptr_nonnull(dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL));
	while (dwarf_get_units(dw, cu, &cu, &version, &type, &cudie, NULL) == 0) {
		Dwarf_Lines *lines;
		size_t nl;

		ck_assert_uint_eq(version, dwarf);
		ck_assert_int_eq(dwarf_getsrclines(&cudie, &lines, &nl), 0);
		ncu++;
		for (size_t i = 0; i < nl; i++, k++) {
			Dwarf_Line *dl = dwarf_onesrcline(lines, i);
			Dwarf_Addr a;
			int line;
			unsigned disc;
			bool end;
			const char *file;

			ck_assert_uint_lt(k, r.n);
			ck_assert_int_eq(dwarf_lineaddr(dl, &a), 0);
			ck_assert_int_eq(dwarf_lineno(dl, &line), 0);
			ck_assert_int_eq(dwarf_linediscriminator(dl, &disc), 0);
			ck_assert_int_eq(dwarf_lineendsequence(dl, &end), 0);
			ck_assert_ptr_nonnull(file = dwarf_linesrc(dl, NULL, NULL));
			ck_assert_msg(r.v[k].addr == a, "row %zu: %#llx, libdw %#llx", k,
				      (unsigned long long)r.v[k].addr, (unsigned long long)a);
			ck_assert_uint_eq(r.v[k].line, (unsigned)line);
			ck_assert_uint_eq(r.v[k].discrim, disc);
			ck_assert_int_eq(r.v[k].end_sequence, end);
			ck_assert_str_eq(r.v[k].file, file);
			/* relocated: inside the loaded code, by an absolute name */
			ck_assert_uint_ge(r.v[k].addr, TEXT_BASE);
			ck_assert_str_eq(r.v[k].file, "/src/dir/lines.jc");
		}
	}
	ck_assert_uint_eq(ncu, 1);
	ck_assert_uint_eq(k, r.n);
	ck_assert(r.v[r.n - 1].end_sequence);
	dwarf_end(dw);
	elf_end(elf);
	jpl_arena_free(&rows_arena);
	free(o.img);
}

/*
 * A debug section relocated on its own (what the listener does: only the
 * sections with relocations are copied) has the bytes that section has
 * in the relocated image, and is not the unrelocated one.
 */
static void one_section(int dwarf)
{
	struct obj o = compile(0, 3, dwarf), whole;
	struct jpl_dwarf_sections ds, ds2;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)o.img;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(o.img + eh->e_shoff);
	const unsigned char *before[2], *after[2];
	size_t len[2], len2[2];
	uint64_t addr[64] = { 0 };

	ck_assert_uint_le(eh->e_shnum, 64);
	for (unsigned i = 1; i < eh->e_shnum; i++)
		if (sh[i].sh_flags & SHF_ALLOC)
			addr[i] = TEXT_BASE + 0x10000ull * i;
	whole.size = o.size;
	ck_assert_ptr_nonnull(whole.img = malloc(o.size));
	memcpy(whole.img, o.img, o.size);
	relocate(&whole);
	jpl_dwarf_sections_of(o.img, o.size, &ds);
	jpl_dwarf_sections_of(whole.img, whole.size, &ds2);
	before[0] = ds.info, len[0] = ds.info_len, before[1] = ds.line, len[1] = ds.line_len;
	after[0] = ds2.info, len2[0] = ds2.info_len, after[1] = ds2.line, len2[1] = ds2.line_len;
	ck_assert_ptr_nonnull(before[0]);
	ck_assert_ptr_nonnull(before[1]);
	for (int k = 0; k < 2; k++) {
		unsigned idx = 0;
		unsigned char *copy = malloc(len[k]);

		for (unsigned i = 1; i < eh->e_shnum; i++)
			if (o.img + sh[i].sh_offset == before[k])
				idx = i;
		ck_assert_uint_ne(idx, 0);
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, before[k], len[k]);
		ck_assert_int_gt(jpl_relocated(o.img, o.size, idx, copy, addr, eh->e_shnum), 0);
		ck_assert_uint_eq(len[k], len2[k]);
		ck_assert_mem_eq(copy, after[k], len[k]);
		ck_assert(memcmp(copy, before[k], len[k]) != 0);
		/* the same by its one RELA section; a section that is not RELA applies none */
		memcpy(copy, before[k], len[k]);
		for (unsigned i = 1; i < eh->e_shnum; i++)
			if (sh[i].sh_type == SHT_RELA && sh[i].sh_info == idx)
				ck_assert_int_gt(jpl_relocate(o.img, o.size, i, copy, addr, eh->e_shnum), 0);
		ck_assert_mem_eq(copy, after[k], len[k]);
		ck_assert_int_eq(jpl_relocate(o.img, o.size, idx, copy, addr, eh->e_shnum), 0);
		free(copy);
	}
	free(whole.img);
	free(o.img);
}

START_TEST(test_one_section4) { one_section(4); }
END_TEST
START_TEST(test_one_section5) { one_section(5); }
END_TEST

START_TEST(test_dwarf4_one) { same_as_libdw(1, 1, 4); }
END_TEST
START_TEST(test_dwarf4_all) { same_as_libdw(0, 3, 4); }
END_TEST
START_TEST(test_dwarf5_one) { same_as_libdw(2, 1, 5); }
END_TEST
START_TEST(test_dwarf5_all) { same_as_libdw(0, 3, 5); }
END_TEST

/* s with the section named which replaced by its first len bytes, in a block of its own */
static int read_cut(const struct jpl_dwarf_sections *full, int which, size_t len, size_t *rows)
{
	struct jpl_dwarf_sections s = *full;
	const unsigned char **p = which == 0 ? &s.line : which == 1 ? &s.info : &s.abbrev;
	size_t *plen = which == 0 ? &s.line_len : which == 1 ? &s.info_len : &s.abbrev_len;
	unsigned char *cut = malloc(len ? len : 1);
	struct jpl_line_rows r;
	int err;

	ck_assert_ptr_nonnull(cut);
	memcpy(cut, *p, len);
	*p = cut;
	*plen = len;
	err = jpl_debugline_read(&r, &s, &rows_arena);
	*rows = r.n;
	jpl_arena_free(&rows_arena);
	free(cut);
	return err;
}

static void truncations(int dwarf)
{
	struct obj o = compile(0, 3, dwarf);
	struct jpl_dwarf_sections s;
	size_t rows;

	relocate(&o);
	s = sections(&o);
	/* a line table cut anywhere: an error and no rows of it */
	for (size_t len = 0; len < s.line_len; len++) {
		ck_assert_msg(read_cut(&s, 0, len, &rows) == -EINVAL, "line cut at %zu", len);
		ck_assert_uint_eq(rows, 0);
	}
	/* a unit cut anywhere: an error (nothing at all is no unit) */
	ck_assert_int_eq(read_cut(&s, 1, 0, &rows), 0);
	ck_assert_uint_eq(rows, 0);
	for (size_t len = 1; len < s.info_len; len++) {
		ck_assert_msg(read_cut(&s, 1, len, &rows) == -EINVAL, "info cut at %zu", len);
		ck_assert_uint_eq(rows, 0);
	}
	for (size_t len = 0; len < s.abbrev_len; len++) {
		int err = read_cut(&s, 2, len, &rows);

		/* a cut after the unit's abbreviation reads the same */
		ck_assert_msg(err == -EINVAL || (err == 0 && rows > 0), "abbrev cut at %zu", len);
	}
	ck_assert_int_eq(read_cut(&s, 0, s.line_len, &rows), 0);
	ck_assert_uint_gt(rows, 0);
	free(o.img);
}

START_TEST(test_truncated4) { truncations(4); }
END_TEST
START_TEST(test_truncated5) { truncations(5); }
END_TEST

/* Every byte of .debug_line and .debug_info set to a few values: whatever comes out, no crash. */
START_TEST(test_corrupted)
{
	static const unsigned char vals[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	struct obj o = compile(0, 3, _i ? 5 : 4);
	struct jpl_dwarf_sections s;

	relocate(&o);
	s = sections(&o);
	for (int which = 0; which < 2; which++) {
		unsigned char *sec = (unsigned char *)(which ? s.info : s.line);
		size_t len = which ? s.info_len : s.line_len;

		for (size_t at = 0; at < len; at++) {
			unsigned char was = sec[at];

			for (size_t v = 0; v < sizeof(vals); v++) {
				struct jpl_line_rows r;
				int err;

				sec[at] = vals[v];
				err = jpl_debugline_read(&r, &s, &rows_arena);
				ck_assert(err == 0 || err == -EINVAL);
				for (size_t i = 0; i < r.n; i++)
					ck_assert_ptr_nonnull(r.v[i].file);
				jpl_arena_free(&rows_arena);
			}
			sec[at] = was;
		}
	}
	free(o.img);
}
END_TEST

/* A DWARF 4 compilation unit of a.c in /comp, its line table at offset 0 */
static const unsigned char abbrev[] = {
	1, 0x11, 0,             /* 1: DW_TAG_compile_unit, no children */
	0x03, 0x08,             /* DW_AT_name, string */
	0x10, 0x17,             /* DW_AT_stmt_list, sec_offset */
	0x1b, 0x08,             /* DW_AT_comp_dir, string */
	0, 0, 0,
};
static const unsigned char info[] = {
	22, 0, 0, 0, 4, 0,      /* length, version 4 */
	0, 0, 0, 0, 8,          /* abbrev offset, address size */
	1, 'a', '.', 'c', 0,
	0, 0, 0, 0,             /* stmt_list */
	'/', 'c', 'o', 'm', 'p', 0,
};

/*
 * A DWARF 4 unit and line table written here: opcode_base 10 (fewer
 * standard opcodes than DWARF 4's 13), include directories, a file defined
 * in the program, const_add_pc, fixed_advance_pc, a negative line advance,
 * a discriminator, an unknown extended opcode, and two sequences.
 */
START_TEST(test_opcodes)
{
	static const unsigned char line[] = {
		0, 0, 0, 0, 4, 0,       /* length (below), version 4 */
		0, 0, 0, 0,             /* header length (below) */
		1, 1, 1, (unsigned char)-3, 12, 10,     /* min_inst, max_ops, is_stmt, base, range, opcode_base */
		0, 1, 1, 1, 1, 0, 0, 0, 1,      /* standard_opcode_lengths 1-9 */
		'i', 'n', 'c', 0, '/', 'a', 'b', 's', 0, 0,
		'a', '.', 'c', 0, 0, 0, 0,
		'x', '.', 'h', 0, 1, 0, 0,
		'y', '.', 'h', 0, 2, 0, 0,
		0,
		/* program */
		0, 9, 2, 0x00, 0x10, 0, 0, 0, 0, 0, 0,  /* set_address 0x1000 */
		0x0a + 4,               /* special: addr +0, line -3 + 4 -> 2 */
		0, 2, 4, 7,             /* set_discriminator 7 */
		0x0a + 12 * 2 + 5,      /* special: addr +2, line +2 -> 4, discrim 7 */
		8,                      /* const_add_pc: (255 - 10) / 12 = 20 */
		3, 0x7d,                /* advance_line -3 -> 1 */
		4, 2,                   /* set_file 2 (inc/x.h) */
		1,                      /* copy at 0x1016 */
		9, 0x00, 0x01,          /* fixed_advance_pc 0x100 */
		0, 8, 3, 'z', '.', 'h', 0, 0, 0, 0,     /* define_file z.h, dir 0: file 4 */
		4, 4,                   /* set_file 4 (z.h) */
		2, 3,                   /* advance_pc 3 */
		1,                      /* copy at 0x1119 */
		0, 3, 0x80, 1, 2,       /* an unknown extended opcode, skipped */
		0, 1, 1,                /* end_sequence at 0x1119 */
		0, 9, 2, 0x00, 0x20, 0, 0, 0, 0, 0, 0,  /* set_address 0x2000 */
		4, 3,                   /* set_file 3 (/abs/y.h) */
		0x0a + 12 + 3 + 3,      /* special: addr +1, line +(3 - 3 + 3) -> 4 */
		2, 4,                   /* advance_pc 4 */
		0, 1, 1,                /* end_sequence at 0x2005 */
	};
	unsigned char l[sizeof(line)];
	struct jpl_dwarf_sections s = { .info = info, .info_len = sizeof(info),
					.abbrev = abbrev, .abbrev_len = sizeof(abbrev),
					.line = l, .line_len = sizeof(l) };
	static const struct { uint64_t addr; const char *file; uint32_t line, disc; int end; } want[] = {
		{ 0x1000, "/comp/a.c", 2, 0, 0 },
		{ 0x1002, "/comp/a.c", 4, 7, 0 },
		{ 0x1016, "/comp/inc/x.h", 1, 0, 0 },
		{ 0x1119, "/comp/z.h", 1, 0, 0 },
		{ 0x1119, "/comp/z.h", 1, 0, 1 },
		{ 0x2001, "/abs/y.h", 4, 0, 0 },
		{ 0x2005, "/abs/y.h", 4, 0, 1 },
	};
	struct jpl_line_rows r;
	uint32_t len;
	size_t hdr_end = 16 + 9 + 10 + 22;

	memcpy(l, line, sizeof(l));
	len = (uint32_t)(sizeof(l) - 4);
	memcpy(l, &len, 4);
	len = (uint32_t)(hdr_end - 10);
	memcpy(l + 6, &len, 4);
	ck_assert_int_eq(jpl_debugline_read(&r, &s, &rows_arena), 0);
	ck_assert_uint_eq(r.n, sizeof(want) / sizeof(*want));
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_msg(r.v[i].addr == want[i].addr, "row %zu at %#llx", i,
			      (unsigned long long)r.v[i].addr);
		ck_assert_str_eq(r.v[i].file, want[i].file);
		ck_assert_uint_eq(r.v[i].line, want[i].line);
		ck_assert_uint_eq(r.v[i].discrim, want[i].disc);
		ck_assert_int_eq(r.v[i].end_sequence, want[i].end);
	}
	jpl_arena_free(&rows_arena);
	/* no .debug_info: no unit leads to a table */
	s.info = NULL;
	ck_assert_int_eq(jpl_debugline_read(&r, &s, &rows_arena), -ENODATA);
	jpl_arena_free(&rows_arena);
}
END_TEST

/*
 * LEB128 operands (llvm/leb128.h) padded past 64 bits read as DWARF allows;
 * one whose value needs more than 64 bits makes the table an error rather
 * than a row at an address cut to 64 bits.
 */
static int advance_pc_table(const unsigned char *leb, size_t n, struct jpl_line_rows *r)
{
	static const unsigned char head[] = {
		0, 0, 0, 0, 4, 0,       /* length (below), version 4 */
		24, 0, 0, 0,            /* header length */
		1, 1, 1, (unsigned char)-3, 12, 10,
		0, 1, 1, 1, 1, 0, 0, 0, 1,      /* standard_opcode_lengths 1-9 */
		0,                      /* no include directories */
		'a', '.', 'c', 0, 0, 0, 0,
		0,
		0, 9, 2, 0x00, 0x10, 0, 0, 0, 0, 0, 0,  /* set_address 0x1000 */
		2,                      /* advance_pc, by the operand */
	};
	static const unsigned char tail[] = {
		1,                      /* copy */
		0, 1, 1,                /* end_sequence */
	};
	unsigned char l[sizeof(head) + 16 + sizeof(tail)];
	struct jpl_dwarf_sections s = { .info = info, .info_len = sizeof(info),
					.abbrev = abbrev, .abbrev_len = sizeof(abbrev),
					.line = l, .line_len = sizeof(head) + n + sizeof(tail) };
	uint32_t len = (uint32_t)(s.line_len - 4);

	ck_assert_uint_le(n, 16);
	memcpy(l, head, sizeof(head));
	memcpy(l + sizeof(head), leb, n);
	memcpy(l + sizeof(head) + n, tail, sizeof(tail));
	memcpy(l, &len, 4);
	return jpl_debugline_read(r, &s, &rows_arena);
}

START_TEST(test_leb128_operands)
{
	static const unsigned char padded[] = { 0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
						0x80, 0x80, 0x80, 0x80, 0x00 };
	static const unsigned char wide[] = { 0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					      0x80, 0x80, 0x02 };        /* 3 + 2^64 */
	struct jpl_line_rows r;

	ck_assert_int_eq(advance_pc_table((const unsigned char *)"\x03", 1, &r), 0);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.v[0].addr, 0x1003);
	ck_assert_str_eq(r.v[0].file, "/comp/a.c");
	jpl_arena_free(&rows_arena);
	ck_assert_int_eq(advance_pc_table(padded, sizeof(padded), &r), 0);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.v[0].addr, 0x1003);
	jpl_arena_free(&rows_arena);
	ck_assert_msg(advance_pc_table(wide, sizeof(wide), &r) == -EINVAL,
		      "advance_pc by 2^64 + 3 read: %zu rows, the first at %#llx", r.n,
		      r.n ? (unsigned long long)r.v[0].addr : 0ULL);
	ck_assert_uint_eq(r.n, 0);
	jpl_arena_free(&rows_arena);
}
END_TEST

static Suite *lines_suite(void)
{
	Suite *s = suite_create("libjitperf-llvm line tables");
	TCase *tc;

	tc = tcase_create("As libdw reads them");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_dwarf4_one);
	tcase_add_test(tc, test_dwarf4_all);
	tcase_add_test(tc, test_dwarf5_one);
	tcase_add_test(tc, test_dwarf5_all);
	tcase_add_test(tc, test_opcodes);
	tcase_add_test(tc, test_leb128_operands);
	tcase_add_test(tc, test_one_section4);
	tcase_add_test(tc, test_one_section5);
	suite_add_tcase(s, tc);

	tc = tcase_create("Malformed");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_truncated4);
	tcase_add_test(tc, test_truncated5);
	tcase_add_loop_test(tc, test_corrupted, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(lines_suite());
}
