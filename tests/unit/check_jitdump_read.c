/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the jitdump reader (read/jitdump_read.c). */
#include "config.h"

#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/progs/jdbuild.h"
#include "read/jitdump_read.h"
#include "tests/check-subr.h"

static const unsigned char code1[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3 };
static char err[512];

static struct jd_file *open_built(const struct jdb *b)
{
	struct jd_file *f = NULL;
	int r = jd_open_mem(&f, b->buf, b->len, "t.dump", err, sizeof(err));

	ck_assert_msg(r == 0, "jd_open_mem: %d %s", r, err);
	return f;
}

static int open_err(const struct jdb *b)
{
	struct jd_file *f = NULL;
	int r;

	err[0] = '\0';
	r = jd_open_mem(&f, b->buf, b->len, "t.dump", err, sizeof(err));
	ck_assert_ptr_null(f);
	return r;
}

/* ---- header */

static void header_roundtrip(int swap)
{
	struct jdb b;
	struct jd_file *f;
	const struct jitdump_file_header *h;
	struct jd_record rec;

	jdb_init(&b, swap);
	jdb_header(&b, 1, 40, EM_X86_64, 4242, 123456789, 0);
	f = open_built(&b);
	h = jd_header(f);
	ck_assert_uint_eq(h->magic, JITDUMP_MAGIC);
	ck_assert_uint_eq(h->version, 1);
	ck_assert_uint_eq(h->total_size, 40);
	ck_assert_uint_eq(h->elf_mach, EM_X86_64);
	ck_assert_uint_eq(h->pid, 4242);
	ck_assert_uint_eq(h->timestamp, 123456789);
	ck_assert_uint_eq(h->flags, 0);
	ck_assert_int_eq(jd_swapped(f), swap);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 0);
	jd_close(f);
	jdb_free(&b);
}

START_TEST(header_native)
{
	header_roundtrip(0);
}
END_TEST

START_TEST(header_swapped)
{
	header_roundtrip(1);
}
END_TEST

START_TEST(header_bad_magic)
{
	struct jdb b;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	b.buf[0] = 'X';
	ck_assert_int_eq(open_err(&b), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "t.dump: offset 0: bad magic"));
	jdb_free(&b);
}
END_TEST

START_TEST(header_short)
{
	struct jdb b;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	b.len = 39;
	ck_assert_int_eq(open_err(&b), -EBADMSG);
	ck_assert_str_eq(err, "t.dump: offset 39: jitdump header truncated (39 bytes, need 40)");
	b.len = 2;
	ck_assert_int_eq(open_err(&b), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "offset 0: file too short"));
	b.len = 0;
	ck_assert_int_eq(open_err(&b), -EBADMSG);
	jdb_free(&b);
}
END_TEST

START_TEST(header_size_beyond_file)
{
	struct jdb b;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 0xffffffffu, EM_X86_64, 1, 1, 0);
	ck_assert_int_eq(open_err(&b), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "offset 8: header total_size 4294967295 is beyond"));
	jdb_free(&b);
}
END_TEST

START_TEST(header_larger_skipped)
{
	/* a header that declares 48 bytes: records start after it */
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;
	const char pad[8] = { 0 };

	jdb_init(&b, 0);
	jdb_header(&b, 1, 48, EM_X86_64, 1, 1, 0);
	jdb_bytes(&b, pad, sizeof(pad));
	jdb_close(&b, 7);
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_uint_eq(rec.offset, 48);
	ck_assert_uint_eq(rec.id, JIT_CODE_CLOSE);
	ck_assert_uint_eq(rec.timestamp, 7);
	jd_close(f);
	jdb_free(&b);
}
END_TEST

/* ---- records */

static void records_roundtrip(int swap)
{
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;
	struct jd_debug_iter it;
	struct jd_debug_entry e;
	struct jd_unwinding u;
	const struct jdb_line lines[] = {
		{ 0x7000, 10, 0, "a.jc" }, { 0x7004, 11, 2, "b.jc" },
	};
	const unsigned char eh[24] = { 1, 2, 3 };
	uint64_t ca, nr;
	size_t o_dbg, o_unw, o_load, o_move, o_unk, o_close;

	jdb_init(&b, swap);
	jdb_header(&b, 1, 40, EM_AARCH64, 77, 1000, 0);
	o_dbg = jdb_debug(&b, 1001, 0x7000, lines, 2);
	o_unw = jdb_unwind(&b, 1002, eh, sizeof(eh), 8, 4096);
	o_load = jdb_load(&b, 1003, 77, 78, 0x7000, "fib", code1, sizeof(code1), 5, 0);
	o_move = jdb_move(&b, 1004, 77, 79, 0x7000, 0x9000, sizeof(code1), 5);
	o_unk = jdb_raw(&b, 99, 1005, "xyz", 3);
	o_close = jdb_close(&b, 1006);
	f = open_built(&b);

	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_uint_eq(rec.offset, o_dbg);
	ck_assert_uint_eq(rec.id, JIT_CODE_DEBUG_INFO);
	ck_assert_uint_eq(rec.timestamp, 1001);
	ck_assert_int_eq(jd_debug_info(f, &rec, &ca, &nr, &it), 0);
	ck_assert_uint_eq(ca, 0x7000);
	ck_assert_uint_eq(nr, 2);
	ck_assert_int_eq(jd_debug_next(&it, &e, err, sizeof(err)), 1);
	ck_assert_uint_eq(e.addr, 0x7000);
	ck_assert_uint_eq(e.lineno, 10);
	ck_assert_str_eq(e.file, "a.jc");
	ck_assert_uint_eq(e.offset, o_dbg + 32);
	ck_assert_int_eq(jd_debug_next(&it, &e, err, sizeof(err)), 1);
	ck_assert_uint_eq(e.lineno, 11);
	ck_assert_uint_eq(e.discrim, 2);
	ck_assert_str_eq(e.file, "b.jc");
	ck_assert_int_eq(jd_debug_next(&it, &e, err, sizeof(err)), 0);

	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_uint_eq(rec.offset, o_unw);
	ck_assert_int_eq(jd_unwinding_info(f, &rec, &u, err, sizeof(err)), 0);
	ck_assert_uint_eq(u.unwinding_size, 24);
	ck_assert_uint_eq(u.eh_frame_hdr_size, 8);
	ck_assert_uint_eq(u.mapped_size, 4096);
	ck_assert_int_eq(memcmp(u.data, eh, 24), 0);

	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_uint_eq(rec.offset, o_load);
	ck_assert_uint_eq(rec.id, JIT_CODE_LOAD);
	ck_assert_uint_eq(rec.total_size, 56 + 4 + sizeof(code1));
	ck_assert_uint_eq(rec.pid, 77);
	ck_assert_uint_eq(rec.tid, 78);
	ck_assert_uint_eq(rec.vma, 0x7000);
	ck_assert_uint_eq(rec.code_addr, 0x7000);
	ck_assert_uint_eq(rec.code_size, sizeof(code1));
	ck_assert_uint_eq(rec.code_index, 5);
	ck_assert_str_eq(rec.name, "fib");
	ck_assert_int_eq(memcmp(rec.code, code1, sizeof(code1)), 0);

	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_uint_eq(rec.offset, o_move);
	ck_assert_uint_eq(rec.id, JIT_CODE_MOVE);
	ck_assert_uint_eq(rec.tid, 79);
	ck_assert_uint_eq(rec.code_addr, 0x7000);
	ck_assert_uint_eq(rec.new_code_addr, 0x9000);
	ck_assert_uint_eq(rec.code_index, 5);

	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_uint_eq(rec.offset, o_unk);
	ck_assert_uint_eq(rec.id, 99);
	ck_assert_uint_eq(rec.total_size, 19);
	ck_assert_ptr_null(jd_type_name(rec.id));

	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_uint_eq(rec.offset, o_close);
	ck_assert_str_eq(jd_type_name(rec.id), "CODE_CLOSE");
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 0);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 0);
	jd_close(f);
	jdb_free(&b);
}

START_TEST(records_native)
{
	records_roundtrip(0);
}
END_TEST

START_TEST(records_swapped)
{
	records_roundtrip(1);
}
END_TEST

START_TEST(load_padded_code)
{
	/* the Java agent pads between name and code: code is the record's tail */
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	jdb_load(&b, 2, 1, 1, 0x1000, "Interpreter", code1, sizeof(code1), 0, 4);
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_str_eq(rec.name, "Interpreter");
	ck_assert_int_eq(memcmp(rec.code, code1, sizeof(code1)), 0);
	jd_close(f);
	jdb_free(&b);
}
END_TEST

/* ---- hostile input */

START_TEST(truncated_record)
{
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;
	size_t off;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	off = jdb_load(&b, 2, 1, 1, 0x1000, "f", code1, sizeof(code1), 0, 0);
	b.len -= 3;
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "t.dump: offset 40: truncated record: total_size 64 but only 61 bytes left in the file");
	ck_assert_uint_eq(off, 40);
	/* stays failed: no reading past a framing error */
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EBADMSG);
	jd_close(f);

	b.len = 40 + 10;
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "t.dump: offset 40: truncated record header (10 bytes left, need 16)");
	jd_close(f);
	jdb_free(&b);
}
END_TEST

START_TEST(huge_and_tiny_total_size)
{
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	jdb_close(&b, 2);
	jdb_set32(&b, 44, 0xfffffff0u);
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "offset 40: truncated record: total_size 4294967280"));
	jd_close(f);

	jdb_set32(&b, 44, 8);
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "t.dump: offset 40: record total_size 8 is smaller than a record header (16)");
	jd_close(f);
	jdb_free(&b);
}
END_TEST

/*
 * A file cut short by a crash: the records before the cut are read, then
 * the cut is named; a writer killed between records leaves a clean end.
 */
START_TEST(cut_short)
{
	static const unsigned char zeros[100];
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;
	size_t second;
	char want[128];

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	jdb_load(&b, 2, 1, 1, 0x1000, "f", code1, sizeof(code1), 0, 0);
	second = jdb_load(&b, 3, 1, 1, 0x2000, "g", code1, sizeof(code1), 0, 1);
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_str_eq(rec.name, "g");
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 0);
	jd_close(f);

	b.len -= 5;
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_str_eq(rec.name, "f");
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EBADMSG);
	snprintf(want, sizeof(want), "t.dump: offset %zu: truncated record: total_size %zu but only "
		 "%zu bytes left in the file", second, b.len + 5 - second, b.len - second);
	ck_assert_str_eq(err, want);
	jd_close(f);

	/* zeros after a record are no record: named, the record before them read */
	b.len = second;
	jdb_bytes(&b, zeros, sizeof(zeros));
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EBADMSG);
	snprintf(want, sizeof(want), "t.dump: offset %zu: record total_size 0 is smaller than a "
		 "record header (16)", second);
	ck_assert_str_eq(err, want);
	jd_close(f);
	jdb_free(&b);
}
END_TEST

START_TEST(load_defects_continue)
{
	/* a malformed body is reported and the next record is still read */
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;
	size_t o1, o2, o3;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	o1 = jdb_load(&b, 2, 1, 1, 0x1000, "abc", code1, sizeof(code1), 0, 0);
	jdb_set64(&b, o1 + 40, 1000);                    /* code_size too big */
	o2 = jdb_load(&b, 3, 1, 1, 0x2000, "def", code1, 0, 1, 0);
	b.buf[o2 + 56 + 3] = 'X';                         /* name loses its NUL */
	o3 = jdb_close(&b, 4);
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(rec.offset, o1);
	ck_assert_str_eq(err, "t.dump: offset 80: CODE_LOAD code_size 1000 is larger than the 6 bytes left in the record");
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(rec.offset, o2);
	ck_assert_ptr_nonnull(strstr(err, "name is not NUL-terminated"));
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_uint_eq(rec.offset, o3);
	jd_close(f);
	jdb_free(&b);
}
END_TEST

START_TEST(short_fixed_parts)
{
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;
	const char body[8] = { 0 };

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	for (uint32_t id = 0; id < JIT_CODE_MAX; id++)
		jdb_raw(&b, id, 2, body, sizeof(body));
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EINVAL);   /* load */
	ck_assert_ptr_nonnull(strstr(err, "CODE_LOAD record too short (total_size 24, need at least 57)"));
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EINVAL);   /* move */
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EINVAL);   /* debug */
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);         /* close */
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), -EINVAL);   /* unwinding */
	ck_assert_ptr_nonnull(strstr(err, "UNWINDING_INFO record too short"));
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 0);
	jd_close(f);
	jdb_free(&b);
}
END_TEST

START_TEST(debug_entries_overrun)
{
	/* nr_entry claims more entries than the record holds */
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;
	struct jd_debug_iter it;
	struct jd_debug_entry e;
	const struct jdb_line l = { 0x10, 1, 0, "x.c" };
	uint64_t ca, nr;
	size_t off;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	off = jdb_debug(&b, 2, 0x10, &l, 1);
	jdb_set64(&b, off + 24, 1ULL << 60);
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_int_eq(jd_debug_info(f, &rec, &ca, &nr, &it), 0);
	ck_assert_uint_eq(nr, 1ULL << 60);
	ck_assert_int_eq(jd_debug_next(&it, &e, err, sizeof(err)), 1);
	ck_assert_int_eq(jd_debug_next(&it, &e, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "offset 92: debug entry truncated"));
	jd_close(f);
	jdb_free(&b);
}
END_TEST

START_TEST(unwinding_sizes_checked)
{
	struct jdb b;
	struct jd_file *f;
	struct jd_record rec;
	struct jd_unwinding u;
	const unsigned char eh[16] = { 0 };
	size_t off;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	off = jdb_unwind(&b, 2, eh, sizeof(eh), 8, 16);
	jdb_set64(&b, off + 16, 17);
	f = open_built(&b);
	ck_assert_int_eq(jd_next(f, &rec, err, sizeof(err)), 1);
	ck_assert_int_eq(jd_unwinding_info(f, &rec, &u, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.dump: offset 56: unwinding_size 17 is larger than the 16 bytes of data in the record");
	jd_close(f);
	jdb_free(&b);
}
END_TEST

START_TEST(random_bytes_never_crash)
{
	/* every prefix and many random mutations of a valid file end cleanly */
	struct jdb b;
	const struct jdb_line l = { 0x10, 1, 0, "x.c" };
	unsigned seed = 12345;

	jdb_init(&b, 0);
	jdb_header(&b, 1, 40, EM_X86_64, 1, 1, 0);
	jdb_debug(&b, 2, 0x1000, &l, 1);
	jdb_load(&b, 3, 1, 1, 0x1000, "f", code1, sizeof(code1), 0, 0);
	jdb_close(&b, 4);
	for (int round = 0; round < 3000; round++) {
		unsigned char *copy = malloc(b.len);
		size_t len = round < (int)b.len ? (size_t)round : b.len;
		struct jd_file *f = NULL;
		struct jd_record rec;
		int r, n = 0;

		memcpy(copy, b.buf, b.len);
		if (round >= (int)b.len)
			for (int k = 0; k < 4; k++)
				copy[rand_r(&seed) % len] = (unsigned char)rand_r(&seed);
		if (jd_open_mem(&f, copy, len, "r.dump", err, sizeof(err)) == 0) {
			while ((r = jd_next(f, &rec, err, sizeof(err))) != 0 && r != -EBADMSG) {
				ck_assert_int_le(++n, 100);
				if (r == 1 && rec.id == JIT_CODE_DEBUG_INFO) {
					struct jd_debug_iter it;
					struct jd_debug_entry e;
					uint64_t ca, nr;

					jd_debug_info(f, &rec, &ca, &nr, &it);
					while (jd_debug_next(&it, &e, err, sizeof(err)) == 1)
						;
				}
			}
			jd_close(f);
		}
		free(copy);
	}
	jdb_free(&b);
}
END_TEST

static Suite *jitdump_read_suite(void)
{
	Suite *s = suite_create("jitdump reader");
	TCase *tc;

	tc = tcase_create("File header");
	tcase_add_test(tc, header_native);
	tcase_add_test(tc, header_swapped);
	tcase_add_test(tc, header_bad_magic);
	tcase_add_test(tc, header_short);
	tcase_add_test(tc, header_size_beyond_file);
	tcase_add_test(tc, header_larger_skipped);
	suite_add_tcase(s, tc);

	tc = tcase_create("Record decoding");
	tcase_add_test(tc, records_native);
	tcase_add_test(tc, records_swapped);
	tcase_add_test(tc, load_padded_code);
	suite_add_tcase(s, tc);

	tc = tcase_create("Hostile input");
	tcase_add_test(tc, truncated_record);
	tcase_add_test(tc, huge_and_tiny_total_size);
	tcase_add_test(tc, cut_short);
	tcase_add_test(tc, load_defects_continue);
	tcase_add_test(tc, short_fixed_parts);
	tcase_add_test(tc, debug_entries_overrun);
	tcase_add_test(tc, unwinding_sizes_checked);
	tcase_add_test(tc, random_bytes_never_crash);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(jitdump_read_suite());
}
