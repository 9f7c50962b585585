/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The perf script parser: the corners of stackcollapse-perf.pl's rules that
 * FlameGraph's test inputs do not reach, the fields Chrome output needs
 * (pid, tid, time, period), streaming across buffer boundaries, and the
 * errors for input that is not perf script text.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/perfscript.h"
#include "tests/check-subr.h"

struct collect {
	char     folded[64][512];   /* pname;frame;... COUNT */
	size_t   n;
	struct ps_sample last;
	char     comm[64];
};

static int on_sample(const struct ps_sample *s, void *arg)
{
	struct collect *c = arg;
	char *d = c->folded[c->n % 64];
	int k = snprintf(d, 512, "%.*s", (int)s->pname.len, s->pname.s);

	for (size_t i = 0; i < s->nframes; i++)
		k += snprintf(d + k, 512 - k, ";%.*s", (int)s->frames[i].len, s->frames[i].s);
	snprintf(d + k, 512 - k, " %llu", (unsigned long long)s->period);
	c->last = *s;
	snprintf(c->comm, sizeof(c->comm), "%.*s", (int)s->comm.len, s->comm.s);
	c->n++;
	return 0;
}

/* parse text with flags; returns the parser's result, samples in *c */
static int parse(const char *text, unsigned flags, struct collect *c, char *err)
{
	struct ps_parser *p;
	int ret;

	memset(c, 0, sizeof(*c));
	p = ps_new(flags, "in.txt", on_sample, c);
	ck_assert_ptr_nonnull(p);
	ret = ps_feed(p, text, strlen(text));
	if (!ret)
		ret = ps_finish(p);
	if (err)
		strcpy(err, ps_error(p));
	ps_free(p);
	return ret;
}

static const char *fold1(const char *text, unsigned flags)
{
	static struct collect c;

	ck_assert_int_eq(parse(text, flags, &c, NULL), 0);
	ck_assert_uint_eq(c.n, 1);
	return c.folded[0];
}

START_TEST(header_fields)
{
	struct collect c;

	ck_assert_int_eq(parse("V8 WorkerThread 24636/25607 [002] 94564.109216: 100 cycles:\n"
			       "\t1 f (/x)\n\n", 0, &c, NULL), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.comm, "V8 WorkerThread");
	ck_assert_int_eq(c.last.has_pid, 1);
	ck_assert_uint_eq(c.last.pid, 24636);
	ck_assert_uint_eq(c.last.tid, 25607);
	ck_assert_int_eq(c.last.has_time, 1);
	ck_assert_uint_eq(c.last.time_ns, 94564109216000ull);
	ck_assert_uint_eq(c.last.period, 100);
	ck_assert_str_eq(c.folded[0], "V8_WorkerThread;f 100");
}
END_TEST

START_TEST(header_pid_tid_names)
{
	const char *in = "java 12688 6544038.708352: 10309278 cpu-clock:\n\t1 f (/x)\n\n";

	ck_assert_str_eq(fold1(in, PS_PID), "java-?;f 10309278");
	ck_assert_str_eq(fold1(in, PS_TID), "java-?/12688;f 10309278");
	/* a tid of 0 counts as missing, as Perl's "not $tid" */
	ck_assert_str_eq(fold1("swapper 0/0 [000] 1.0: cpu-clock:\n\t1 f (/x)\n\n", PS_TID),
			 "swapper-?/0;f 1");
	/* the shortest comm that is followed by a number wins */
	ck_assert_str_eq(fold1("a b 12 c 34 [000] 1.0: cpu-clock:\n\t1 f (/x)\n\n", PS_PID),
			 "a_b-?;f 1");
}
END_TEST

START_TEST(period_rules)
{
	/* no period: 1; "0": 1 (false in Perl); a period weights the stack */
	ck_assert_str_eq(fold1("cc 1/1 1.0: cpu-clock:\n\t1 f (/x)\n\n", 0), "cc;f 1");
	ck_assert_str_eq(fold1("cc 1/1 1.0: 0 cpu-clock:\n\t1 f (/x)\n\n", 0), "cc;f 1");
	ck_assert_str_eq(fold1("cc 1/1 1.0: 250 cpu-clock:\n\t1 f (/x)\n\n", 0), "cc;f 250");
	/* trailing blanks after the event are allowed */
	ck_assert_str_eq(fold1("cc 1/1 1.0: 7 cpu-clock: \t\n\t1 f (/x)\n\n", 0), "cc;f 7");
}
END_TEST

START_TEST(event_filter)
{
	struct collect c;
	struct ps_parser *p;
	const char *in = "cc 1/1 1.0: 1 cycles:\n\t1 a (/x)\n\n"
			 "cc 1/1 2.0: 1 instructions:\n\t1 b (/x)\n\n"
			 "cc 1/1 3.0: 1 cycles:\n\t1 d (/x)\n\n";

	memset(&c, 0, sizeof(c));
	p = ps_new(0, "in.txt", on_sample, &c);
	ck_assert_int_eq(ps_feed(p, in, strlen(in)), 0);
	ck_assert_int_eq(ps_finish(p), 0);
	ck_assert_uint_eq(c.n, 2);           /* only the first event's samples */
	ck_assert_str_eq(c.folded[0], "cc;a 1");
	ck_assert_str_eq(c.folded[1], "cc;d 1");
	ck_assert_str_eq(ps_event(p), "cycles");
	ck_assert_int_eq(ps_filtered(p), 1);
	ps_free(p);
}
END_TEST

START_TEST(frame_tidying)
{
	/* offsets stripped, args dropped, quotes dropped, ';' -> ':' */
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\t1 f+0x1f (/x)\n\t2 g(int, char) (/x)\n\n", 0),
			 "cc;g;f 1");
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\t1 RegExp:[&<>\"'] (/tmp/perf-1.map)\n\n", 0),
			 "cc;RegExp:[&<>] 1");
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\t1 a;b (/x)\n\n", 0), "cc;a:b 1");
	/* Go methods and C++ anonymous namespaces keep their parentheses */
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\t1 net/http.(*Client).Do (/x)\n\n", 0),
			 "cc;net/http.(*Client).Do 1");
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\t1 ns::(anonymous namespace)::f(int) (/x)\n\n", 0),
			 "cc;ns::(anonymous namespace)::f 1");
	/* a "symbol" that is a process name in parentheses is skipped */
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\t1 f (/x)\n\t2 (/usr/bin/c) (/x)\n\n", 0), "cc;f 1");
}
END_TEST

START_TEST(unknown_frames)
{
	const char *in = "cc 1/1 1.0: x:\n\t7f01 [unknown] (/usr/lib/libfoo.so)\n"
			 "\t7f02 [unknown] ([unknown])\n\n";

	ck_assert_str_eq(fold1(in, 0), "cc;[unknown];[libfoo.so] 1");
	ck_assert_str_eq(fold1(in, PS_ADDRS), "cc;[unknown <7f02>];[libfoo.so <7f01>] 1");
}
END_TEST

START_TEST(inline_and_annotations)
{
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\t1 outer->inner-> (/x)\n\n", 0),
			 "cc;outer;inner_[i] 1");
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\tffff81 schedule ([kernel.kallsyms])\n"
			       "\t81 tcp (/lib/modules/x/vmlinux)\n\n", PS_KERNEL),
			 "cc;tcp_[k];schedule_[k] 1");
	/* jitted-PID-N.so of perf inject --jit counts as JIT code, as perf maps do */
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\t7f1 fib (/tmp/d/jitted-123-4.so)\n"
			       "\t7f2 loop (/tmp/perf-123.map)\n\t7f3 main (/usr/bin/c)\n\n", PS_JIT),
			 "cc;main;loop_[j];fib_[j] 1");
	/* Java signatures lose their "L" in a process called java */
	ck_assert_str_eq(fold1("java 1/1 1.0: x:\n\t1 Ljava/lang/Thread;::run (/tmp/perf-1.map)\n\n", 0),
			 "java;java/lang/Thread:::run 1");
}
END_TEST

START_TEST(stack_line_backtracking)
{
	/* no blank between address and " (": Perl backtracks into the address */
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\tffff (mod)\n\n", 0), "cc;f 1");
	/* the module is between the last " (" and the last ")" */
	ck_assert_str_eq(fold1("cc 1/1 1.0: x:\n\t1 [unknown] (/opt/a (1)/lib.so)\n\n", 0),
			 "cc;[unknown]  1");
}
END_TEST

START_TEST(sample_boundaries)
{
	struct collect c;

	/* a record without its blank line is dropped at the end (as the tool does);
	 * lines before any header are ignored; comments too */
	ck_assert_int_eq(parse("# comment\n\t1 orphan (/x)\n\ncc 1/1 1.0: x:\n\t1 f (/x)\n\n"
			       "cc 1/1 2.0: x:\n\t1 g (/x)\n", 0, &c, NULL), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.folded[0], "cc;f 1");
	/* a header without a blank line before it continues the stack */
	ck_assert_int_eq(parse("cc 1/1 1.0: x:\n\t1 f (/x)\ncc 1/1 2.0: x:\n\t1 g (/x)\n\n", 0, &c, NULL), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.folded[0], "cc;g;f 1");
}
END_TEST

START_TEST(perfdata_mode)
{
	struct collect c;
	/* perf script without a call graph: the frame is on the header line */
	const char *in = "            perl 14048/14049   492.755035334:    1001001 cpu-clock:  "
			 "ffffffff817be332 ext4_file_getattr ([kernel.kallsyms])\n"
			 "            perl 14048/14049   492.756065011:    1001001 cpu-clock:  "
			 "55f38587ee0e Perl_pp_add (/usr/bin/perl)\n";

	ck_assert_int_eq(parse(in, PS_PERFDATA, &c, NULL), 0);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_str_eq(c.folded[0], "perl;ext4_file_getattr 1001001");
	ck_assert_str_eq(c.folded[1], "perl;Perl_pp_add 1001001");
	ck_assert_uint_eq(c.last.time_ns, 492756065011ull);
	ck_assert_uint_eq(c.last.pid, 14048);
	ck_assert_uint_eq(c.last.tid, 14049);
	/* with a call graph */
	ck_assert_int_eq(parse("perl 5/6   1.000000001:    7 cpu-clock: \n\t1 a (/x)\n\t2 b (/x)\n\n",
			       PS_PERFDATA, &c, NULL), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.folded[0], "perl;b;a 7");
	ck_assert_uint_eq(c.last.time_ns, 1000000001ull);
}
END_TEST

START_TEST(streaming_split)
{
	const char *in = "demo 1/2 [000] 1.5: 3 cpu-clock:\n\t1 leaf (/x)\n\t2 root (/x)\n\n";
	size_t len = strlen(in);

	/* every split point gives the same sample */
	for (size_t cut = 0; cut <= len; cut++) {
		struct collect c;
		struct ps_parser *p;

		memset(&c, 0, sizeof(c));
		p = ps_new(0, "in.txt", on_sample, &c);
		ck_assert_int_eq(ps_feed(p, in, cut), 0);
		ck_assert_int_eq(ps_feed(p, in + cut, len - cut), 0);
		ck_assert_int_eq(ps_finish(p), 0);
		ck_assert_uint_eq(c.n, 1);
		ck_assert_str_eq(c.folded[0], "demo;root;leaf 3");
		ps_free(p);
	}
}
END_TEST

START_TEST(errors)
{
	struct collect c;
	char err[600];

	ck_assert_int_lt(parse("cc 1/1 1.0: x:\n\t1 f (/x)\n\nhello world\n", 0, &c, err), 0);
	ck_assert_str_eq(err, "in.txt:4: not perf script output: 'hello world'");
	ck_assert_int_lt(parse("cc 1/1 1.0: x:\n\t1 f (/x)", 0, &c, err), 0);
	ck_assert_str_eq(err, "in.txt:2: truncated: the last line has no newline");
	ck_assert_int_lt(parse("cc 1/1 1.0: x:\n\t1 f\0 (/x)\nzz\0\n", 0, &c, err), 0);
}
END_TEST

/* names frames of perf-PID.map at 0x7f10 "fromcopy"; keeps the rest */
static const char *resolve(void *arg, const char *mod, size_t modn, const char *pc, size_t pcn,
			   const char *sym, size_t symn)
{
	(*(int *)arg)++;
	(void)sym;
	(void)symn;
	if (modn == 18 && !memcmp(mod, "/tmp/perf-4242.map", 18) && pcn == 4 &&
	    !memcmp(pc, "7f10", 4))
		return "fromcopy->inner";
	return NULL;
}

/* A resolver renames frames before they are tidied, and only those it names. */
START_TEST(resolver)
{
	static const char text[] =
		"jit 4242/4242 1.0: 1 cpu-clock:\n"
		"\t7f10 [unknown] (/tmp/perf-4242.map)\n"
		"\t7f20 [unknown] (/tmp/perf-4242.map)\n"
		"\t401000 main (/usr/bin/jit)\n\n";
	struct ps_parser *p;
	struct collect c = { 0 };
	int calls = 0;

	p = ps_new(PS_JIT, "in.txt", on_sample, &c);
	ck_assert_ptr_nonnull(p);
	ps_set_resolver(p, resolve, &calls);
	ck_assert_int_eq(ps_feed(p, text, strlen(text)), 0);
	ck_assert_int_eq(ps_finish(p), 0);
	ps_free(p);
	ck_assert_int_eq(calls, 3);
	ck_assert_uint_eq(c.n, 1);
	/* "->" splits the name as an inline chain; [unknown] keeps its module's name */
	ck_assert_str_eq(c.folded[0], "jit;main;[perf-4242.map]_[j];fromcopy_[j];inner_[i] 1");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("perf script parser");
	TCase *tc;

	tc = tcase_create("Sample headers");
	tcase_add_test(tc, header_fields);
	tcase_add_test(tc, header_pid_tid_names);
	tcase_add_test(tc, period_rules);
	tcase_add_test(tc, event_filter);
	suite_add_tcase(s, tc);

	tc = tcase_create("Frames");
	tcase_add_test(tc, frame_tidying);
	tcase_add_test(tc, unknown_frames);
	tcase_add_test(tc, inline_and_annotations);
	tcase_add_test(tc, stack_line_backtracking);
	tcase_add_test(tc, resolver);
	suite_add_tcase(s, tc);

	tc = tcase_create("Input framing");
	tcase_add_test(tc, sample_boundaries);
	tcase_add_test(tc, perfdata_mode);
	tcase_add_test(tc, streaming_split);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
