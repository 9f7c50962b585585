/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the perf map reader (read/perfmap_read.c). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "read/pdsym.h"
#include "read/perfmap_read.h"
#include "tests/check-subr.h"

static char *dir;
static char path[512], err[512];

static void setup(void)
{
	dir = make_tmpdir();
	snprintf(path, sizeof(path), "%s/perf-4242.map", dir);
}

static void teardown(void)
{
	remove_tmpdir(dir);
	dir = NULL;
}

static struct pm_map *read_text(const char *text)
{
	FILE *fp = fopen(path, "wb");
	struct pm_map *m;

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fputs(text, fp) >= 0, 1);
	fclose(fp);
	ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(m);
	return m;
}

static const char *name_at(const struct pm_map *m, uint64_t addr)
{
	const struct pm_sym *s = pm_find(m, addr);

	return s ? s->name : NULL;
}

/* V8 (--perf-basic-prof): bare hex; the JVM and perf-map-agent: 0x-prefixed */
START_TEST(emitters)
{
	struct pm_map *m = read_text(
		"18c4000 300 Builtin:DeoptimizationEntry_Eager\n"
		"7f02c27c5b40 140 JS:^fib /tmp/fib.js:1:13\n"
		"0x00007fe8f4ec7640 0x0000000000000130 int Fib.fib(int)\n");

	ck_assert_uint_eq(m->nsyms, 3);
	ck_assert_uint_eq(m->skipped, 0);
	ck_assert_str_eq(name_at(m, 0x18c4000), "Builtin:DeoptimizationEntry_Eager");
	ck_assert_str_eq(name_at(m, 0x18c42ff), "Builtin:DeoptimizationEntry_Eager");
	ck_assert_ptr_null(name_at(m, 0x18c4300));
	ck_assert_str_eq(name_at(m, 0x7f02c27c5bb3), "JS:^fib /tmp/fib.js:1:13");
	ck_assert_str_eq(name_at(m, 0x7fe8f4ec7640 + 0x12f), "int Fib.fib(int)");
	ck_assert_ptr_null(name_at(m, 0x7fe8f4ec7640 + 0x130));
	ck_assert_ptr_null(name_at(m, 0x1000));
	ck_assert_uint_eq(pm_find(m, 0x7fe8f4ec7640)->line, 3);
	pm_free(m);
}
END_TEST

/* Code written over old code at the same address: the later line names it. */
START_TEST(reused_address)
{
	struct pm_map *m = read_text(
		"1000 100 old\n"
		"2000 10 other\n"
		"1000 80 new\n");

	ck_assert_str_eq(name_at(m, 0x1000), "new");
	ck_assert_str_eq(name_at(m, 0x107f), "new");
	/* the new code is shorter: the old tail is not the new function's */
	ck_assert_ptr_null(name_at(m, 0x1080));
	ck_assert_str_eq(name_at(m, 0x2000), "other");
	pm_free(m);
}
END_TEST

/* What perf 6.1 skips: no size, names of two bytes or less; size 0 names one address */
START_TEST(perf_rules)
{
	struct pm_map *m = read_text(
		"1000\n"
		"1100 10\n"
		"1200 10 ab\n"
		"1300 10 abc\n"
		"1400 0 zero size\n"
		"not a line at all\n"
		"\n");

	ck_assert_uint_eq(m->nsyms, 3);
	ck_assert_uint_eq(m->skipped, 4);
	ck_assert_ptr_null(name_at(m, 0x1200));
	ck_assert_str_eq(name_at(m, 0x1300), "abc");
	ck_assert_str_eq(name_at(m, 0x1400), "zero size");
	ck_assert_ptr_null(name_at(m, 0x1401));
	/* no digits: address 0, size 0, the name after two separators, as in perf */
	ck_assert_str_eq(name_at(m, 0), "t a line at all");
	pm_free(m);
}
END_TEST

/*
 * A map still being written: its last line has no newline yet, and perf
 * takes its last byte for one.  A NUL ends a name, not a line; a tail of
 * zeros is a line of its own, an entry of size 0 at 0 named "".
 */
START_TEST(last_line)
{
	struct pm_map *m = read_text("1000 10 first\n2000 20 second, unfinished");

	ck_assert_uint_eq(m->nsyms, 2);
	ck_assert_str_eq(name_at(m, 0x2010), "second, unfinishe");
	pm_free(m);

	FILE *fp = fopen(path, "wb");
	static const char text[] = "1000 10 fir\0st\n1100 10 xy\0\n\0\0\0\0\0\0\0";

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(text, 1, sizeof(text) - 1, fp), sizeof(text) - 1);
	fclose(fp);
	ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m->nsyms, 3);
	ck_assert_uint_eq(m->skipped, 0);
	ck_assert_str_eq(name_at(m, 0x1000), "fir");
	/* "1100 10 xy\0": three bytes after the size, the line is kept */
	ck_assert_str_eq(name_at(m, 0x1100), "xy");
	ck_assert_str_eq(name_at(m, 0), "");
	ck_assert_uint_eq(pm_find(m, 0)->line, 3);
	pm_free(m);
}
END_TEST

/* A FIFO or a directory at the map's name is not read (nor waited on). */
START_TEST(not_regular)
{
	struct pm_map *m;

	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
}
END_TEST

START_TEST(empty_and_missing)
{
	struct pm_map *m = read_text("");
	char want[600];

	ck_assert_uint_eq(m->nsyms, 0);
	ck_assert_ptr_null(pm_find(m, 0));
	pm_free(m);
	unlink(path);
	ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(m);
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	ck_assert_str_eq(err, want);
}
END_TEST

/* Many lines out of order (a JIT's threads): every start finds its own. */
START_TEST(many)
{
	FILE *fp = fopen(path, "wb");
	struct pm_map *m;
	char want[32];

	ck_assert_ptr_nonnull(fp);
	for (unsigned i = 0; i < 10000; i++) {
		unsigned k = (i * 7919) % 10000;

		fprintf(fp, "%x 40 fn%u\n", 0x100000 + k * 0x40, k);
	}
	fclose(fp);
	ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m->nsyms, 10000);
	for (unsigned k = 0; k < 10000; k += 37) {
		snprintf(want, sizeof(want), "fn%u", k);
		ck_assert_str_eq(name_at(m, 0x100000 + k * 0x40 + 0x3f), want);
	}
	ck_assert_ptr_null(name_at(m, 0x100000 + 10000 * 0x40));
	pm_free(m);
}
END_TEST

/* ---- overlapping entries: perf's tree decides */

static const char *name_or_none(const struct pm_map *m, uint64_t addr)
{
	const char *n = name_at(m, addr);

	return n ? n : "-";
}

/* The pieces, as "start-end name" joined by spaces. */
static char *pieces_text(const struct pm_map *m)
{
	static char buf[4096];
	struct pm_piece *p;
	size_t n, o = 0;

	ck_assert_int_eq(pm_pieces(m, &p, &n), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%" PRIx64 "-%" PRIx64 " %s",
				      i ? " " : "", p[i].start, p[i].end, p[i].sym->name);
	free(p);
	return buf;
}

/*
 * Stubs, then the region around them (the order of the issue): stub1 is
 * the root, the region its left child, stub2 its right.  The region keeps
 * what lies below stub1; past stub1 the walk goes right to stub2, and
 * between the stubs and after stub2 perf names nothing.
 */
START_TEST(stubs_then_region)
{
	struct pm_map *m = read_text(
		"1100 10 stub1\n"
		"1200 10 stub2\n"
		"1000 1000 region\n");

	ck_assert_str_eq(name_or_none(m, 0xfff), "-");
	ck_assert_str_eq(name_or_none(m, 0x1000), "region");
	ck_assert_str_eq(name_or_none(m, 0x10ff), "region");
	ck_assert_str_eq(name_or_none(m, 0x1100), "stub1");
	ck_assert_str_eq(name_or_none(m, 0x110f), "stub1");
	ck_assert_str_eq(name_or_none(m, 0x1110), "-");
	ck_assert_str_eq(name_or_none(m, 0x11ff), "-");
	ck_assert_str_eq(name_or_none(m, 0x1200), "stub2");
	ck_assert_str_eq(name_or_none(m, 0x120f), "stub2");
	ck_assert_str_eq(name_or_none(m, 0x1210), "-");
	ck_assert_str_eq(name_or_none(m, 0x1fff), "-");
	ck_assert_str_eq(pieces_text(m), "1000-1100 region 1100-1110 stub1 1200-1210 stub2");
	pm_free(m);
}
END_TEST

/*
 * The region first: it is the root, and holds every address of its own,
 * the stub's too (the stub, its right child, is never reached).  With a
 * second stub the tree rotates: stub1 becomes the root, and the region
 * keeps only what lies below it.
 */
START_TEST(region_then_stubs)
{
	struct pm_map *m = read_text(
		"1000 1000 region\n"
		"1100 10 stub1\n");

	ck_assert_str_eq(name_or_none(m, 0x1100), "region");
	ck_assert_str_eq(name_or_none(m, 0x1fff), "region");
	ck_assert_str_eq(pieces_text(m), "1000-2000 region");
	pm_free(m);

	m = read_text(
		"1000 1000 region\n"
		"1100 10 stub1\n"
		"1200 10 stub2\n");
	ck_assert_str_eq(name_or_none(m, 0x10ff), "region");
	ck_assert_str_eq(name_or_none(m, 0x1100), "stub1");
	ck_assert_str_eq(name_or_none(m, 0x1150), "-");
	ck_assert_str_eq(name_or_none(m, 0x1200), "stub2");
	ck_assert_str_eq(pieces_text(m), "1000-1100 region 1100-1110 stub1 1200-1210 stub2");
	pm_free(m);
}
END_TEST

/*
 * Equal starts go right: aaa, then bbb to its right, then ccc to bbb's
 * right, which rotates bbb up to the root.  bbb holds its 0x80 bytes; past
 * them the walk goes right to ccc; aaa, on the left, is never reached.
 * (Names of two bytes or less would be skipped, as perf skips them.)
 */
START_TEST(same_start)
{
	struct pm_map *m = read_text(
		"1000 100 aaa\n"
		"1000 80 bbb\n"
		"1000 200 ccc\n");

	ck_assert_str_eq(name_or_none(m, 0x1000), "bbb");
	ck_assert_str_eq(name_or_none(m, 0x107f), "bbb");
	ck_assert_str_eq(name_or_none(m, 0x1080), "ccc");
	ck_assert_str_eq(name_or_none(m, 0x11ff), "ccc");
	ck_assert_str_eq(name_or_none(m, 0x1200), "-");
	ck_assert_str_eq(pieces_text(m), "1000-1080 bbb 1080-1200 ccc");
	pm_free(m);

	/* two lines alike: the first, the root, names every address */
	m = read_text("2000 10 twice\n2000 10 twice\n");
	ck_assert_uint_eq(pm_find(m, 0x2008)->line, 1);
	ck_assert_str_eq(pieces_text(m), "2000-2010 twice");
	pm_free(m);
}
END_TEST

/*
 * An entry of size 0 holds its start alone, and only where the walk meets
 * it before an entry holding more; one whose end wraps past 2^64 holds
 * nothing (perf compares with the wrapped end); 2^64 - 1, which no end
 * can follow, is in no piece.
 */
START_TEST(zero_size)
{
	struct pm_map *m = read_text(
		"1000 0 zzz\n"
		"1000 10 aaa\n");

	ck_assert_str_eq(name_or_none(m, 0x1000), "zzz");
	ck_assert_str_eq(name_or_none(m, 0x1001), "aaa");
	ck_assert_str_eq(pieces_text(m), "1000-1001 zzz 1001-1010 aaa");
	pm_free(m);

	/* the other order: aaa is the root, zzz on its right never reached */
	m = read_text(
		"1000 10 aaa\n"
		"1000 0 zzz\n");
	ck_assert_str_eq(name_or_none(m, 0x1000), "aaa");
	ck_assert_str_eq(pieces_text(m), "1000-1010 aaa");
	pm_free(m);

	/* one more entry rotates zzz up to the root: aaa loses every address */
	m = read_text(
		"1000 10 aaa\n"
		"1000 0 zzz\n"
		"3000 0 alone\n");
	ck_assert_str_eq(name_or_none(m, 0x1000), "zzz");
	ck_assert_str_eq(name_or_none(m, 0x1001), "-");
	ck_assert_str_eq(name_or_none(m, 0x3000), "alone");
	ck_assert_str_eq(name_or_none(m, 0x3001), "-");
	ck_assert_str_eq(pieces_text(m), "1000-1001 zzz 3000-3001 alone");
	pm_free(m);

	m = read_text(
		"ffffffffffffff00 200 wraps\n"
		"fffffffffffffff0 f top\n"
		"ffffffffffffffff 0 last\n");
	ck_assert_str_eq(name_or_none(m, 0xffffffffffffff00), "-");
	ck_assert_str_eq(name_or_none(m, 0x50), "-");
	ck_assert_str_eq(name_or_none(m, 0xfffffffffffffff0), "top");
	ck_assert_str_eq(name_or_none(m, 0xfffffffffffffffe), "top");
	ck_assert_str_eq(name_or_none(m, 0xffffffffffffffff), "last");
	ck_assert_str_eq(pieces_text(m), "fffffffffffffff0-ffffffffffffffff top");
	pm_free(m);
}
END_TEST

/*
 * The oracle: perf's tree built as the kernel's lib/rbtree.c builds it
 * (nodes with parent links, the loop of __rb_insert: recolour while the
 * uncle is red, else one or two rotations), and symbols__find's walk;
 * written apart from read/pdsymtree.c, whose textbook form it checks.
 */
struct rbn {
	struct rbn *parent, *left, *right;
	int         red;
	uint64_t    start, end;
	size_t      line;
};

static void rb_rotate(struct rbn **root, struct rbn *x, int to_left)
{
	struct rbn *y = to_left ? x->right : x->left, *p = x->parent;

	if (to_left) {
		x->right = y->left;
		if (y->left)
			y->left->parent = x;
		y->left = x;
	} else {
		x->left = y->right;
		if (y->right)
			y->right->parent = x;
		y->right = x;
	}
	y->parent = p;
	x->parent = y;
	if (!p)
		*root = y;
	else if (p->left == x)
		p->left = y;
	else
		p->right = y;
}

static void rb_add(struct rbn **root, struct rbn *z)
{
	struct rbn **link = root, *parent = NULL;

	while (*link) {
		parent = *link;
		link = z->start < parent->start ? &parent->left : &parent->right;
	}
	z->parent = parent;
	z->left = z->right = NULL;
	z->red = 1;
	*link = z;
	for (;;) {
		struct rbn *p = z->parent, *g, *u;

		if (!p) {
			z->red = 0;
			break;
		}
		if (!p->red)
			break;
		g = p->parent;
		if (p == g->left) {
			u = g->right;
			if (u && u->red) {
				u->red = p->red = 0;
				g->red = 1;
				z = g;
				continue;
			}
			if (z == p->right) {
				rb_rotate(root, p, 1);
				p = z;
			}
			p->red = 0;
			g->red = 1;
			rb_rotate(root, g, 0);
		} else {
			u = g->left;
			if (u && u->red) {
				u->red = p->red = 0;
				g->red = 1;
				z = g;
				continue;
			}
			if (z == p->left) {
				rb_rotate(root, p, 0);
				p = z;
			}
			p->red = 0;
			g->red = 1;
			rb_rotate(root, g, 1);
		}
		break;
	}
}

static const struct rbn *rb_walk(const struct rbn *n, uint64_t ip)
{
	while (n) {
		if (ip < n->start)
			n = n->left;
		else if (ip > n->end || (ip == n->end && ip != n->start))
			n = n->right;
		else
			return n;
	}
	return NULL;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/*
 * n entries in [0, span): mostly short, some long regions over them, some
 * of size 0, some at a start taken before; written out and built into the
 * oracle (nodes, in file order).
 */
static struct rbn *random_map(size_t n, uint64_t span, struct rbn **root)
{
	struct rbn *nodes = calloc(n, sizeof(*nodes));
	FILE *fp = fopen(path, "wb");

	ck_assert_ptr_nonnull(nodes);
	ck_assert_ptr_nonnull(fp);
	*root = NULL;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = rnd() % 100, start, size;

		start = i > 0 && r < 15 ? nodes[rnd() % i].start : rnd() % span;
		size = r < 10 ? 0 : r < 20 ? rnd() % (span / 8) : 1 + rnd() % 64;
		fprintf(fp, "%" PRIx64 " %" PRIx64 " fn%zu\n", start, size, i);
		nodes[i] = (struct rbn){ .start = start, .end = size ? start + size : start,
					 .line = i + 1 };
		rb_add(root, &nodes[i]);
	}
	fclose(fp);
	return nodes;
}

/*
 * Whether pm_find names at addr what perf's walk names; a failing check
 * only, as a passing ck_assert costs a write to Check's pipe.
 */
static void same_as_perf(const struct pm_map *m, const struct rbn *root, uint64_t addr)
{
	const struct rbn *want = rb_walk(root, addr);
	const struct pm_sym *got = pm_find(m, addr);

	if (!want && got)
		ck_abort_msg("%#" PRIx64 ": line %zu, perf names none", addr, got->line);
	if (want && (!got || got->line != want->line))
		ck_abort_msg("%#" PRIx64 ": line %zu, perf's %zu", addr, got ? got->line : 0,
			     want->line);
}

/* Every address of a small space: pm_find and the pieces as perf's walk. */
START_TEST(random_small)
{
	const uint64_t span = 4096;

	for (int round = 0; round < 20; round++) {
		struct rbn *root, *nodes = random_map(40 + (size_t)round * 10, span, &root);
		struct pm_map *m;
		struct pm_piece *p;
		size_t np, k = 0;

		ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), 0);
		ck_assert_int_eq(pm_pieces(m, &p, &np), 0);
		for (uint64_t a = 0; a < span + 64; a++) {
			const struct rbn *want = rb_walk(root, a);

			same_as_perf(m, root, a);
			while (k < np && p[k].end <= a)
				k++;
			if (k < np && p[k].start <= a) {
				if (!want || p[k].sym->line != want->line)
					ck_abort_msg("%#" PRIx64 ": piece of line %zu", a,
						     p[k].sym->line);
			} else if (want) {
				ck_abort_msg("%#" PRIx64 ": in no piece, perf's line %zu", a,
					     want->line);
			}
		}
		/* pieces: in order, apart, each as large as it can be */
		for (size_t i = 1; i < np; i++)
			if (p[i - 1].end > p[i].start ||
			    (p[i - 1].end == p[i].start && p[i - 1].sym == p[i].sym))
				ck_abort_msg("pieces %zu and %zu", i - 1, i);
		free(p);
		pm_free(m);
		free(nodes);
	}
}
END_TEST

/*
 * 100,000 entries: pm_find at every start and end and beside them, and at
 * random addresses; every piece's ends; and the perf.data reader's table of
 * the same map (read/pdsym.c) names the same.
 */
START_TEST(random_large)
{
	const size_t n = 100000;
	const uint64_t span = 1 << 24;
	struct rbn *root, *nodes = random_map(n, span, &root);
	struct pd_symtab t = { 0 };
	struct pm_map *m;
	struct pm_piece *p;
	size_t np;

	ck_assert_int_eq(pm_read(path, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m->nsyms, n);
	ck_assert_int_eq(pd_symtab_load_perfmap(&t, path), 0);
	for (size_t i = 0; i < n + 200000; i++) {
		uint64_t a = i < n ? nodes[i].start : i < 2 * n ? nodes[i - n].end : rnd() % span;

		for (uint64_t d = 0; d < 3; d++) {
			const struct pd_sym *ps = pd_symtab_find(&t, a + d - 1);
			const struct pm_sym *s = pm_find(m, a + d - 1);

			same_as_perf(m, root, a + d - 1);
			if (!s != !ps || (s && strcmp(s->name, ps->name)))
				ck_abort_msg("%#" PRIx64 ": pdsym %s, perf map %s", a + d - 1,
					     ps ? ps->name : "-", s ? s->name : "-");
		}
	}
	ck_assert_int_eq(pm_pieces(m, &p, &np), 0);
	ck_assert_uint_gt(np, n / 4);
	for (size_t i = 0; i < np; i++) {
		int bad = p[i].start >= p[i].end || (i && p[i - 1].end > p[i].start) ||
			  pm_find(m, p[i].start) != p[i].sym || pm_find(m, p[i].end - 1) != p[i].sym;

		if (i == 0 || p[i - 1].end < p[i].start)
			bad |= pm_find(m, p[i].start - 1) != NULL;
		else
			bad |= p[i - 1].sym == p[i].sym;
		if (bad)
			ck_abort_msg("piece %zu: %#" PRIx64 "-%#" PRIx64, i, p[i].start, p[i].end);
	}
	free(p);
	pd_symtab_free(&t);
	pm_free(m);
	free(nodes);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("Perf map reader");
	TCase *tc = tcase_create("Reading");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, emitters);
	tcase_add_test(tc, reused_address);
	tcase_add_test(tc, perf_rules);
	tcase_add_test(tc, last_line);
	tcase_add_test(tc, empty_and_missing);
	tcase_add_test(tc, many);
	tcase_add_test(tc, not_regular);
	suite_add_tcase(s, tc);
	tc = tcase_create("Overlapping entries");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, stubs_then_region);
	tcase_add_test(tc, region_then_stubs);
	tcase_add_test(tc, same_start);
	tcase_add_test(tc, zero_size);
	tcase_add_test(tc, random_small);
	tcase_add_test(tc, random_large);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
