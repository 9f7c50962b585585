/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The perf.data reader: the layout (header, attributes, features, pipe
 * mode), records in time order with their fields, samples folded as perf
 * script | stackcollapse-perf.pl folds them (a perf map found beside the
 * recording, a forked child's inherited maps), one-line errors at every
 * truncation, and perf's symbol rules (sizes, aliases, demangling).
 */
#include "config.h"

#include <check.h>
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/pdscript.h"
#include "read/pdsym.h"
#include "read/perfdata.h"
#include "tests/check-subr.h"
#include "tests/progs/pdbuild.h"

static char *dir;

static void setup(void)
{
	char path[256];
	FILE *f;

	dir = make_tmpdir();
	snprintf(path, sizeof(path), "%s/perf-10.map", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(PDB_MAP, f);
	fclose(f);
}

static void teardown(void)
{
	remove_tmpdir(dir);
	dir = NULL;
}

static struct pd_file *open_fixture(int pipe)
{
	struct pd_file *f = NULL;
	unsigned char *b;
	size_t n;
	char err[256];
	int ret;

	b = pdb_build(pipe, &n);
	ck_assert_ptr_nonnull(b);
	ret = pd_open_mem(&f, b, n, "fixture.data", err, sizeof(err));
	free(b);
	ck_assert_msg(ret == 0, "%s", err);
	return f;
}

static void check_layout(int pipe)
{
	struct pd_file *f = open_fixture(pipe);

	ck_assert_int_eq(pd_pipe_mode(f), pipe);
	ck_assert_uint_eq(pd_nattrs(f), 1);
	ck_assert_str_eq(pd_attr(f, 0)->name, "cpu-clock");
	ck_assert_uint_eq(pd_attr(f, 0)->nids, 2);
	ck_assert_uint_eq(pd_attr(f, 0)->attr.sample_type,
			  PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			  PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD);
	ck_assert_str_eq(pd_cmdline(f), "perf record prog");
	if (!pipe) {
		ck_assert_uint_eq(pd_nbuild_ids(f), 1);
		ck_assert_str_eq(pd_build_id(f, 0)->path, "/bin/prog");
		ck_assert_uint_eq(pd_build_id(f, 0)->size, 20);
		ck_assert_uint_eq(pd_build_id(f, 0)->id[1], 0xcd);
	}
	pd_close(f);
}

START_TEST(test_layout_file)
{
	check_layout(0);
}
END_TEST

START_TEST(test_layout_pipe)
{
	check_layout(1);
}
END_TEST

/* records come sorted by time: the sample at t=200 before the one at t=300 */
START_TEST(test_records_in_time_order)
{
	struct pd_file *f = open_fixture(_i);
	static const uint32_t want[] = {
		PERF_RECORD_COMM, PERF_RECORD_MMAP2, PERF_RECORD_FORK, PERF_RECORD_COMM,
		PERF_RECORD_SAMPLE, PERF_RECORD_SAMPLE, PERF_RECORD_LOST,
	};
	struct pd_event ev;
	char err[256];
	size_t n = 0;
	int ret;

	while ((ret = pd_next(f, &ev, err, sizeof(err))) == 1) {
		ck_assert_uint_lt(n, 7);
		ck_assert_uint_eq(ev.type, want[n]);
		switch (n) {
		case 0:
			ck_assert_str_eq(ev.comm.comm, "prog");
			ck_assert_uint_eq(ev.time, 100);
			break;
		case 1:
			ck_assert_str_eq(ev.mmap.filename, "//anon");
			ck_assert_uint_eq(ev.mmap.addr, 0x400000);
			ck_assert_uint_eq(ev.mmap.len, 0x1000);
			ck_assert_uint_eq(ev.mmap.prot, 5);
			break;
		case 2:
			ck_assert_uint_eq(ev.task.pid, 11);
			ck_assert_uint_eq(ev.task.ppid, 10);
			break;
		case 4:
			ck_assert_uint_eq(ev.sample.time, 200);
			ck_assert_uint_eq(ev.sample.tid, 11);
			ck_assert_uint_eq(ev.sample.period, 5);
			ck_assert_uint_eq(ev.sample.id, 8);
			ck_assert_uint_eq(ev.sample.nr, 2);
			ck_assert_uint_eq(pd_chain_ip(&ev.sample, 1), 0x400050);
			break;
		case 5:
			ck_assert_uint_eq(ev.sample.time, 300);
			ck_assert_uint_eq(ev.sample.ip, 0x400050);
			ck_assert_uint_eq(pd_chain_ip(&ev.sample, 0), (uint64_t)PERF_CONTEXT_USER);
			break;
		}
		n++;
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(n, 7);
	ck_assert_uint_eq(pd_lost(f), 3);
	pd_close(f);
}
END_TEST

/*
 * Records in (time, file offset) order however many are out of place: a
 * few, a third, or none; in both layouts.  Samples of equal time keep the
 * order they were written in, told by their periods.
 */
START_TEST(test_order_out_of_place)
{
	static const size_t n = 20000;
	uint64_t *times = malloc(n * sizeof(*times)), seed = 1, last_t = 0, last_p = 0;
	int mode = _i / 2, pipe = _i % 2, ret;
	struct pd_file *f;
	struct pd_event ev;
	unsigned char *b;
	size_t len, i, got = 0;
	char err[256];

	ck_assert_ptr_nonnull(times);
	for (i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		times[i] = 1000 + i / 4;       /* runs of four equal times */
		if (mode == 0 && seed >> 60 == 0 && i > 100)
			times[i] -= 1 + (seed >> 32) % 100;   /* a few, up to 100 back */
		else if (mode == 1 && (seed >> 33) % 3 == 0)
			times[i] = 1000 + (seed >> 40) % (n / 4);   /* anywhere */
	}
	b = pdb_build_times(pipe, times, n, &len);
	ck_assert_ptr_nonnull(b);
	ret = pd_open_mem(&f, b, len, "order.data", err, sizeof(err));
	ck_assert_msg(ret == 0, "%s", err);
	while ((ret = pd_next(f, &ev, err, sizeof(err))) == 1) {
		if (ev.type != PERF_RECORD_SAMPLE || ev.sample.time < 900)
			continue;     /* the fixture's own records */
		ck_assert_uint_eq(ev.sample.time, times[ev.sample.period - 1]);
		ck_assert_msg(ev.time > last_t || (ev.time == last_t && ev.sample.period > last_p),
			      "sample %" PRIu64 " at %" PRIu64 " after %" PRIu64 " at %" PRIu64,
			      ev.sample.period, ev.time, last_p, last_t);
		last_t = ev.time;
		last_p = ev.sample.period;
		got++;
	}
	ck_assert_msg(ret == 0, "%s", err);
	ck_assert_uint_eq(got, n);
	pd_close(f);
	free(b);
	free(times);
}
END_TEST

/* pd_rewind: the same records again, in the same order; a LOST record counted once */
START_TEST(test_rewind)
{
	struct pd_file *f = open_fixture(_i);
	struct pd_event ev;
	uint64_t offs[16];
	char err[256];
	size_t n = 0, again = 0;
	int ret;

	while ((ret = pd_next(f, &ev, err, sizeof(err))) == 1 && n < 16)
		offs[n++] = ev.offset;
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(n, 7);
	ck_assert_uint_eq(pd_lost(f), 3);
	pd_rewind(f);
	while ((ret = pd_next(f, &ev, err, sizeof(err))) == 1 && again < n)
		ck_assert_uint_eq(ev.offset, offs[again++]);
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(again, n);
	ck_assert_uint_eq(pd_lost(f), 3);
	pd_close(f);
}
END_TEST

struct folded {
	char   lines[8][256];
	size_t n;
};

static int on_sample(const struct ps_sample *s, void *arg)
{
	struct folded *c = arg;
	char *d = c->lines[c->n++ % 8];
	int k = snprintf(d, 256, "%.*s", (int)s->pname.len, s->pname.s);

	for (size_t i = 0; i < s->nframes; i++)
		k += snprintf(d + k, 256 - k, ";%.*s", (int)s->frames[i].len, s->frames[i].s);
	snprintf(d + k, 256 - k, " %llu", (unsigned long long)s->period);
	return 0;
}

/* the child inherits the perf map through FORK; names come from DIR/perf-10.map */
START_TEST(test_fold)
{
	struct pd_file *f = open_fixture(_i);
	struct pd_script_info info;
	struct folded c = { .n = 0 };
	char err[256];
	int ret;

	ret = pd_script_read_file(f, PS_PID | PS_JIT, dir, on_sample, &c, &info, err, sizeof(err));
	ck_assert_msg(ret == 0, "%s", err);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_str_eq(c.lines[0], "child-11;fn_a_[j] 5");
	ck_assert_str_eq(c.lines[1], "prog-10;fn_a_[j];fn_b_[j] 7");
	ck_assert_uint_eq(info.samples, 2);
	ck_assert_uint_eq(info.lost, 3);
	ck_assert_str_eq(info.event, "cpu-clock");
	pd_close(f);
}
END_TEST

/* without the perf map: [unknown] named after it, --addrs with the address */
START_TEST(test_fold_unknown)
{
	struct pd_file *f = open_fixture(0);
	struct pd_script_info info;
	struct folded c = { .n = 0 };
	char err[256];

	ck_assert_int_eq(pd_script_read_file(f, PS_ADDRS, "/nonexistent", on_sample, &c, &info,
					     err, sizeof(err)), 0);
	/* /tmp/perf-10.map could exist on this machine: only when it does not */
	if (access("/tmp/perf-10.map", F_OK))
		ck_assert_str_eq(c.lines[1], "prog;[perf-10.map <400050>];[perf-10.map <400150>] 7");
	pd_close(f);
}
END_TEST

/* every truncation is one line naming the file (and an offset), never a crash */
START_TEST(test_truncated)
{
	unsigned char *b;
	size_t n, len;
	int failures = 0;

	b = pdb_build(_i, &len);
	ck_assert_ptr_nonnull(b);
	for (n = 0; n < len; n++) {
		struct pd_file *f;
		struct pd_event ev;
		char err[256] = "";
		int ret = pd_open_mem(&f, b, n, "cut.data", err, sizeof(err));

		if (!ret) {
			while ((ret = pd_next(f, &ev, err, sizeof(err))) == 1)
				;
			pd_close(f);
		}
		if (ret) {
			failures++;
			ck_assert_msg(!strncmp(err, "cut.data: ", 10), "%zu: %s", n, err);
			ck_assert_ptr_null(strchr(err, '\n'));
		}
	}
	/* a cut inside the header, the attributes or a record is always found */
	ck_assert_int_gt(failures, (int)len / 2);
	free(b);
}
END_TEST

START_TEST(test_bad_magic)
{
	struct pd_file *f;
	char err[256];

	ck_assert_int_eq(pd_open_mem(&f, "PERFILE1xxxxxxxxxxxxxxxx", 24, "x.data", err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "x.data: offset 0: not a perf.data file (no PERFILE2 magic)");
}
END_TEST

/* a record size that runs past the data: named with its offset */
START_TEST(test_hostile_size)
{
	unsigned char *b;
	size_t len;
	struct pd_file *f;
	char err[256];
	uint16_t big = 0xfff8;
	uint64_t data_off;

	b = pdb_build(0, &len);
	memcpy(&data_off, b + 40, 8);
	memcpy(b + data_off + 6, &big, 2);
	ck_assert_int_eq(pd_open_mem(&f, b, len, "h.data", err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "h.data: offset ") && strstr(err, "truncated: record of 65528"),
		      "%s", err);
	free(b);
}
END_TEST

/* perf's symbols__fixup_end and choose_best_symbol */
START_TEST(test_symtab_rules)
{
	struct pd_symtab t = { 0 };
	const struct pd_sym *s;

	ck_assert_int_eq(pd_symtab_add(&t, 0x100, 0, STB_WEAK, STT_FUNC, "weak_alias", 10), 0);
	ck_assert_int_eq(pd_symtab_add(&t, 0x100, 0, STB_GLOBAL, STT_FUNC, "__strong", 8), 0);
	ck_assert_int_eq(pd_symtab_add(&t, 0x180, 0x10, STB_LOCAL, STT_FUNC, "local", 5), 0);
	ck_assert_int_eq(pd_symtab_add(&t, 0x180, 0x10, STB_GLOBAL, STT_FUNC, "_global", 7), 0);
	ck_assert_int_eq(pd_symtab_add(&t, 0x300, 0, STB_GLOBAL, STT_FUNC, "last", 4), 0);
	pd_symtab_finish(&t, 0);
	ck_assert_uint_eq(t.n, 3);
	s = pd_symtab_find(&t, 0x17f);     /* sizeless: ends where the next begins */
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "__strong");  /* global over weak, underscores or not */
	s = pd_symtab_find(&t, 0x185);
	ck_assert_str_eq(s->name, "_global");
	ck_assert_ptr_null(pd_symtab_find(&t, 0x190));   /* past a sized symbol */
	ck_assert_str_eq(pd_symtab_find(&t, 0xfff)->name, "last");  /* to the page's end */
	ck_assert_ptr_null(pd_symtab_find(&t, 0x1000));
	ck_assert_ptr_null(pd_symtab_find(&t, 0xff));
	pd_symtab_free(&t);
}
END_TEST

/*
 * Overlapping perf map entries: perf's red-black tree, walked from the
 * root, decides.  Inserted in this order, the tree is BBB at the root,
 * AAA on its left, XX2 on its right with XX1 and XX3 below: an address in
 * XX1..XX3 meets XX2 first, and one in AAA's tail (past BBB) never meets
 * AAA.  (perf skips a line whose name has two bytes or less.)
 */
START_TEST(test_symtab_overlaps)
{
	struct pd_symtab t = { 0 };
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/overlap.map", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("100 100 AAA\n150 10 BBB\n400 10 XX1\n400 10 XX2\n400 10 XX3\n500 0 ZZZ\n", f);
	fclose(f);
	ck_assert_int_eq(pd_symtab_load_perfmap(&t, path), 0);
	ck_assert_uint_eq(t.n, 6);
	ck_assert_str_eq(pd_symtab_find(&t, 0x120)->name, "AAA");
	ck_assert_str_eq(pd_symtab_find(&t, 0x155)->name, "BBB");
	ck_assert_str_eq(pd_symtab_find(&t, 0x405)->name, "XX2");    /* not the last, XX3 */
	ck_assert_ptr_null(pd_symtab_find(&t, 0x1f0));               /* in AAA, which perf misses */
	ck_assert_str_eq(pd_symtab_find(&t, 0x500)->name, "ZZZ");    /* a sizeless entry's own address */
	ck_assert_ptr_null(pd_symtab_find(&t, 0x501));
	pd_symtab_free(&t);
}
END_TEST

/* text written to DIR/name, its path in path */
static void write_kallsyms(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* the whole table and the one read for addrs name each of them alike */
static void same_names(const struct pd_symtab *all, const struct pd_symtab *some,
		       const uint64_t *addrs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct pd_sym *a = pd_symtab_find(all, addrs[i]);
		const struct pd_sym *b = pd_symtab_find(some, addrs[i]);

		ck_assert_msg(!a == !b, "%#" PRIx64 ": %s / %s", addrs[i], a ? a->name : "none",
			      b ? b->name : "none");
		if (a) {
			ck_assert_str_eq(a->name, b->name);
			ck_assert_uint_eq(a->start, b->start);
			ck_assert_uint_eq(a->end, b->end);
		}
	}
}

/*
 * kallsyms read for some addresses only names each of them as the whole
 * table does: lines out of order, aliases at one address (the rule picks
 * one), a module after the core kernel (the core's last symbol ends a
 * page on), symbols perf skips ('$' names, absolute 'A'), a short address,
 * no newline at the end; a symbol no address needs is left out.  No
 * address: nothing read.
 */
START_TEST(test_kallsyms_for)
{
	static const char text[] =
		"ffffffff81000100 T second\n"
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 W weak_text\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000080 t $x\n"
		"ffffffff81000200 A absolute\n"
		"ffffffff81000300 t third\n"
		"ffffffff81000600 t unused\n"
		"ffffffff81000500 t after_third\n"
		"ffffffff81001000 d data_one\n"
		"ffffffffc0000000 t mod_init\t[mod]\n"
		"ffffffffc0000040 T mod_fn\t[mod]\n"
		"ffffffff81000f00 T late\n"
		"81000f80 T short_addr\n"
		"ffffffffc0000100 b mod_bss\t[mod]";
	static const uint64_t addrs[] = {
		0x81000f90, 0xffffffff81000000, 0xffffffff81000050, 0xffffffff81000150,
		0xffffffff81000310, 0xffffffff81000f10, 0xffffffff81001000,
		0xffffffff81002500, 0xffffffffc0000010, 0xffffffffc0000050,
		0xffffffffc0000100, 0xffffffffc0002000,
	};
	const size_t n = sizeof(addrs) / sizeof(addrs[0]);
	struct pd_symtab all = { 0 }, some = { 0 }, none = { 0 };
	char path[256];

	write_kallsyms("kallsyms", text, path, sizeof(path));
	ck_assert_int_eq(pd_symtab_load_kallsyms(&all, path), 0);
	ck_assert_int_eq(pd_symtab_load_kallsyms_for(&some, path, addrs, n), 0);
	ck_assert_uint_lt(some.n, all.n);
	same_names(&all, &some, addrs, n);
	/* what the whole table says, so the comparison is not of two empty tables */
	ck_assert_str_eq(pd_symtab_find(&some, 0xffffffff81000050)->name, "_stext");
	ck_assert_str_eq(pd_symtab_find(&some, 0xffffffff81000f10)->name, "late");
	ck_assert_uint_eq(pd_symtab_find(&some, 0xffffffff81000310)->end, 0xffffffff81000500);
	ck_assert_str_eq(pd_symtab_find(&some, 0x81000f90)->name, "short_addr");
	ck_assert_str_eq(pd_symtab_find(&some, 0xffffffffc0000050)->name, "mod_fn\t[mod]");
	ck_assert_ptr_null(pd_symtab_find(&some, 0xffffffff81002500));
	ck_assert_int_eq(pd_symtab_load_kallsyms_for(&none, path, addrs, 0), 0);
	ck_assert_uint_eq(none.n, 0);
	pd_symtab_free(&all);
	pd_symtab_free(&some);
	pd_symtab_free(&none);
}
END_TEST

/* addresses at either end of the space: the last is the highest there is */
START_TEST(test_kallsyms_for_ends)
{
	static const char text[] =
		"ffffffffffffff00 T below_top\n"
		"0000000000000000 T zero\n"
		"ffffffffffffffff T top\n"
		"ffffffff81000000 T low\n"
		"ffffffffffffffff t top_alias\n";
	static const uint64_t addrs[] = { 0, 0xffffffff81000010, 0xfffffffffffffff0, UINT64_MAX };
	struct pd_symtab all = { 0 }, some = { 0 };
	char path[256];

	write_kallsyms("kallsyms-ends", text, path, sizeof(path));
	ck_assert_int_eq(pd_symtab_load_kallsyms(&all, path), 0);
	ck_assert_int_eq(pd_symtab_load_kallsyms_for(&some, path, addrs, 4), 0);
	same_names(&all, &some, addrs, 4);
	ck_assert_str_eq(pd_symtab_find(&some, 0xfffffffffffffff0)->name, "below_top");
	pd_symtab_free(&all);
	pd_symtab_free(&some);
}
END_TEST

/*
 * A kallsyms larger than the blocks it is read in: lines cut by the
 * blocks' edges, names of every length up to one longer than a block,
 * digits in either case, an address with a letter that is no digit.
 * Each symbol at the addresses asked for is found whole and filtered.
 */
START_TEST(test_kallsyms_blocks)
{
	enum { NSYM = 20000, EVERY = 97 };
	uint64_t addrs[NSYM / EVERY + 1];
	struct pd_symtab all = { 0 }, some = { 0 };
	char path[256], name[128];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kallsyms-big", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < NSYM; i++) {
		uint64_t start = 0xffffffff81000000ull + 16u * i;

		/* upper-case digits in every third line: perf reads them too */
		fprintf(f, i % 3 ? "%016" PRIx64 " t sym_%d_%.*s\n" : "%016" PRIX64 " t sym_%d_%.*s\n",
			start, i, i % 61, "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghi");
		if (i % 1000 == 7)          /* not an address: a line perf skips */
			fprintf(f, "ffffffff8g000000 t not_hex\n");
		if (i == NSYM / 2) {        /* a line longer than a block names nothing */
			fprintf(f, "ffffffff80000000 t ");
			for (int k = 0; k < 70000; k++)
				fputc('x', f);
			fputc('\n', f);
		}
		if (i % EVERY == 0)
			addrs[n++] = start + 5;
	}
	fclose(f);
	ck_assert_int_eq(pd_symtab_load_kallsyms(&all, path), 0);
	ck_assert_int_eq(pd_symtab_load_kallsyms_for(&some, path, addrs, n), 0);
	ck_assert_uint_lt(some.n, all.n);
	for (size_t i = 0; i < n; i++) {
		const struct pd_sym *a = pd_symtab_find(&all, addrs[i]);
		const struct pd_sym *b = pd_symtab_find(&some, addrs[i]);
		int k = (int)i * EVERY;

		snprintf(name, sizeof(name), "sym_%d_%.*s", k, k % 61,
			 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghi");
		ck_assert_ptr_nonnull(a);
		ck_assert_ptr_nonnull(b);
		ck_assert_str_eq(a->name, name);
		ck_assert_str_eq(b->name, name);
		ck_assert_uint_eq(a->start, b->start);
		ck_assert_uint_eq(a->end, b->end);
	}
	ck_assert_ptr_null(pd_symtab_find(&all, 0xffffffff80000010ull));
	pd_symtab_free(&all);
	pd_symtab_free(&some);
}
END_TEST

START_TEST(test_demangle)
{
	char *d;

#if defined(HAVE_CPLUS_DEMANGLE) || defined(HAVE_CXA_DEMANGLE)
	d = pd_demangle("_ZN2ns3fooEi");
	ck_assert_str_eq(d, "ns::foo");
	free(d);
	d = pd_demangle("_Z3maxIiET_S0_S0_");       /* no return type either */
	ck_assert_str_eq(d, "max<int>");
	free(d);
#endif
	d = pd_demangle("plain_c");
	ck_assert_ptr_null(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("perf.data reader");
	TCase *tc = tcase_create("Layout and records");

	tcase_add_test(tc, test_layout_file);
	tcase_add_test(tc, test_layout_pipe);
	tcase_add_loop_test(tc, test_records_in_time_order, 0, 2);
	tcase_add_loop_test(tc, test_order_out_of_place, 0, 6);
	tcase_add_loop_test(tc, test_rewind, 0, 2);
	tcase_add_test(tc, test_bad_magic);
	tcase_add_test(tc, test_hostile_size);
	tcase_add_loop_test(tc, test_truncated, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("Samples as perf script folds them");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_fold, 0, 2);
	tcase_add_test(tc, test_fold_unknown);
	suite_add_tcase(s, tc);
	tc = tcase_create("Symbols");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_symtab_rules);
	tcase_add_test(tc, test_symtab_overlaps);
	tcase_add_test(tc, test_kallsyms_for);
	tcase_add_test(tc, test_kallsyms_for_ends);
	tcase_add_test(tc, test_kallsyms_blocks);
	tcase_add_test(tc, test_demangle);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
