/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf__code_load_batch (lib/codebatch.h), the registration of a whole
 * object that the LLVM listener uses: the perf map and the jitdump hold the
 * same bytes as jitperf_code_load_ex writes for the functions one by one
 * (lines, unwind info, twins' tails; timestamps aside), every function is in
 * both files when the call returns (a SIGKILL right after it loses none),
 * and a batch that fails leaves both files as they were.
 */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "tests/check-subr.h"
#include "lib/codebatch.h"
#include "format/jitdump.h"

static char *dir;
static unsigned char code[64 * 1024];

static void setup(void)
{
	clear_env();
	for (size_t i = 0; i < sizeof(code); i++)
		code[i] = (unsigned char)(i * 7 + 3 + i / 256 * 101 + i / 65536);
	dir = make_tmpdir();
}

static void teardown(void)
{
	remove_perf_map(getpid());
	remove_tmpdir(dir);
}

/* An .eh_frame by the convention of jitperf.h: a "zR" CIE and one FDE over len bytes. */
static size_t make_eh_frame(unsigned char *eh, size_t len)
{
	static const unsigned char cie[24] = {
		20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
		0x0c, 7, 8, 0x90, 1, 0, 0,
	};
	int32_t pc_begin = -(int32_t)(((len + 7) & ~(size_t)7) + 32);
	uint32_t v;

	memcpy(eh, cie, sizeof(cie));
	v = 16;
	memcpy(eh + 24, &v, 4);
	v = 28;
	memcpy(eh + 28, &v, 4);
	memcpy(eh + 32, &pc_begin, 4);
	v = (uint32_t)len;
	memcpy(eh + 36, &v, 4);
	memset(eh + 40, 0, 4);
	return 44;
}

/*
 * An object's worth of functions: every third with lines, every fourth
 * with an .eh_frame, and some whose code repeats an earlier one's (twins:
 * their CODE_LOAD gets a tail, written from an iovec of its own, or from
 * the room after the last unit when the twin is last).
 */
#define MANY 300
static struct jitperf_code funcs[MANY];
static struct jitperf_line lines[MANY][3];
static unsigned char eh[MANY][48];
static unsigned char twins[4][64];
static char names[MANY][32];

static size_t make_funcs(size_t n)
{
	size_t at = 0;

	memset(funcs, 0, sizeof(funcs));
	for (size_t i = 0; i < 4; i++)
		memcpy(twins[i], code, sizeof(twins[i]));
	for (size_t i = 0; i < n; i++) {
		struct jitperf_code *c = &funcs[i];
		size_t len = 40 + i % 7 * 23;

		snprintf(names[i], sizeof(names[i]), "fn_%zu_of_batch", i);
		c->size = sizeof(*c);
		c->name = names[i];
		c->len = len;
		if (i >= 1 && i <= 4) {
			/* 1 and 2: the same 40 bytes (2 is a twin); 3 and 4: 64 bytes each */
			c->addr = twins[i - 1];
			c->len = i <= 2 ? 40 : 64;
		} else {
			c->addr = code + at;
			at += len + 1;
		}
		if (i % 3 == 0) {
			for (int k = 0; k < 3; k++) {
				lines[i][k].addr = (uintptr_t)c->addr + (uint64_t)k * 9;
				lines[i][k].line = (uint32_t)(10 * i + k);
				lines[i][k].discrim = (uint32_t)k % 2;
				lines[i][k].file = k == 2 ? "/src/other.jc" : "/src/batch.jc";
			}
			c->lines = lines[i];
			c->nlines = 3;
		}
		if (i % 4 == 0 && i != 4) {
			c->eh_frame = eh[i];
			c->eh_frame_len = make_eh_frame(eh[i], c->len);
		}
	}
	return n;
}

static jitperf *open_in(const char *d, unsigned outputs)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = outputs, .dir = d };
	jitperf *jp;

	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	ck_assert_uint_eq(jitperf_outputs(jp), outputs);
	return jp;
}

static char *subdir(const char *name)
{
	static char path[2][1024];
	static int k;
	char *p = path[k++ % 2];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	return p;
}

static unsigned char *read_dump(const char *d, pid_t pid, size_t *len)
{
	char path[1100];

	snprintf(path, sizeof(path), "%s/jit-%d.dump", d, (int)pid);
	return slurp(path, len);
}

static unsigned char *read_map(pid_t pid, size_t *len)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	return slurp(path, len);
}

/*
 * The records after the file header, walked to the end (nothing but whole
 * records), with every timestamp set to 0; how many CODE_LOADs, and
 * whether all timestamps were equal.
 */
static size_t records_untimed(unsigned char *buf, size_t len, int *one_time)
{
	size_t off = sizeof(struct jitdump_file_header), loads = 0;
	uint64_t first = 0;

	*one_time = 1;
	while (off < len) {
		struct jitdump_record_header r;

		ck_assert_uint_ge(len - off, sizeof(r));
		memcpy(&r, buf + off, sizeof(r));
		ck_assert_uint_ge(r.total_size, sizeof(r));
		ck_assert_uint_le(r.total_size, len - off);
		if (r.id == JIT_CODE_LOAD)
			loads++;
		if (r.id != JIT_CODE_CLOSE) {
			if (!first)
				first = r.timestamp;
			if (r.timestamp != first)
				*one_time = 0;
		}
		r.timestamp = 0;
		memcpy(buf + off, &r, sizeof(r));
		off += r.total_size;
	}
	ck_assert_uint_eq(off, len);
	return loads;
}

/* The same functions, batched and one by one: the same bytes in both files. */
static void same_bytes(size_t n)
{
	char *da = subdir("batch"), *db = subdir("single");
	uint64_t idx[MANY], one;
	unsigned char *a, *b, *ma, *mb;
	size_t la, lb, mla, mlb;
	int same_a, same_b;
	jitperf *jp;

	make_funcs(n);
	jp = open_in(da, JITPERF_PERFMAP | JITPERF_JITDUMP);
	ck_assert_int_eq(jitperf__code_load_batch(jp, funcs, n, idx), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(idx[i], i + 1);
	/* in the files when the call returns, before any close */
	a = read_dump(da, getpid(), &la);
	ma = read_map(getpid(), &mla);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(ma);
	ck_assert_int_eq(jitperf_close(jp), 0);

	jp = open_in(db, JITPERF_PERFMAP | JITPERF_JITDUMP);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(jitperf_code_load_ex(jp, &funcs[i], &one), 0);
		ck_assert_uint_eq(one, i + 1);
	}
	b = read_dump(db, getpid(), &lb);
	mb = read_map(getpid(), &mlb);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(mb);
	ck_assert_int_eq(jitperf_close(jp), 0);

	ck_assert_uint_eq(records_untimed(a, la, &same_a), n);
	ck_assert_uint_eq(records_untimed(b, lb, &same_b), n);
	ck_assert_int_eq(same_a, 1);            /* one time for the whole batch */
	ck_assert_uint_eq(la, lb);
	ck_assert_mem_eq(a + sizeof(struct jitdump_file_header),
			 b + sizeof(struct jitdump_file_header),
			 la - sizeof(struct jitdump_file_header));
	ck_assert_uint_eq(mla, mlb);
	ck_assert_mem_eq(ma, mb, mla);
	free(a);
	free(b);
	free(ma);
	free(mb);
}

START_TEST(test_same_bytes_small)
{
	same_bytes(6);                  /* fits the stack buffers; twins 1/2 */
}
END_TEST

START_TEST(test_same_bytes_last_twin)
{
	same_bytes(3);                  /* the last function is a twin: its tail in the room */
}
END_TEST

START_TEST(test_same_bytes_many)
{
	same_bytes(MANY);               /* the buffers grow on the heap */
}
END_TEST

/*
 * In standby a batch writes nothing and keeps what each function needs: the
 * wake writes all of them with their lines and unwind info, in time order.
 */
START_TEST(test_standby_batch)
{
	char *d = subdir("standby"), req[1200], reply[1200], want[1200];
	unsigned char *buf;
	uint64_t idx[6], last = 0;
	size_t len, off, loads = 0, debug = 0, unwind = 0;
	jitperf *jp;

	make_funcs(6);
	jp = open_in(d, JITPERF_STANDBY | JITPERF_PERFMAP | JITPERF_JITDUMP);
	ck_assert_int_eq(jitperf__code_load_batch(jp, funcs, 6, idx), 0);
	for (size_t i = 0; i < 6; i++)
		ck_assert_uint_eq(idx[i], i + 1);
	ck_assert_ptr_null(read_dump(d, getpid(), &len));
	ck_assert_ptr_null(read_map(getpid(), &len));
	snprintf(req, sizeof(req), "attach %s\n", d);
	knock(req, reply, sizeof(reply));
	snprintf(want, sizeof(want), "ok 6 %s/jit-%d.dump\n", d, (int)getpid());
	ck_assert_str_eq(reply, want);
	buf = read_dump(d, getpid(), &len);
	ck_assert_ptr_nonnull(buf);
	for (off = sizeof(struct jitdump_file_header); off < len;) {
		struct jitdump_record_header r;

		memcpy(&r, buf + off, sizeof(r));
		ck_assert_uint_ge(r.timestamp, last);
		last = r.timestamp;
		loads += r.id == JIT_CODE_LOAD;
		debug += r.id == JIT_CODE_DEBUG_INFO;
		unwind += r.id == JIT_CODE_UNWINDING_INFO;
		off += r.total_size;
	}
	ck_assert_uint_eq(loads, 6);
	ck_assert_uint_eq(debug, 2);            /* functions 0 and 3 have lines */
	ck_assert_uint_eq(unwind, 1);           /* function 0 has an .eh_frame */
	free(buf);
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

/* A kill right after the call: plain perf still finds every function. */
START_TEST(test_killed_after_batch)
{
	char *d = subdir("killed");
	unsigned char *dump, *map;
	size_t dlen, mlen, nl = 0;
	int status, one_time;
	pid_t pid;

	make_funcs(MANY);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		uint64_t idx[MANY];
		jitperf *jp;
		struct jitperf_options o = { .size = sizeof(o),
					     .outputs = JITPERF_PERFMAP | JITPERF_JITDUMP, .dir = d };

		if (jitperf_open(&jp, &o) || jitperf__code_load_batch(jp, funcs, MANY, idx))
			_exit(1);
		raise(SIGKILL);
		_exit(2);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	dump = read_dump(d, pid, &dlen);
	map = read_map(pid, &mlen);
	remove_perf_map(pid);
	ck_assert_ptr_nonnull(dump);
	ck_assert_ptr_nonnull(map);
	ck_assert_uint_eq(records_untimed(dump, dlen, &one_time), MANY);
	for (size_t i = 0; i < mlen; i++)
		nl += map[i] == '\n';
	ck_assert_uint_eq(nl, MANY);
	ck_assert_uint_eq(map[mlen - 1], '\n');
	ck_assert_ptr_nonnull(memmem(map, mlen, " fn_299_of_batch\n", 17));
	free(dump);
	free(map);
}
END_TEST

/* A function the library refuses: nothing of the batch is written. */
START_TEST(test_refused_writes_nothing)
{
	char *d = subdir("refused");
	unsigned char *dump, *map;
	size_t dlen = 0, mlen = 0;
	uint64_t idx[MANY];
	jitperf *jp;

	make_funcs(10);
	lines[6][1].addr = (uintptr_t)funcs[6].addr + funcs[6].len;    /* past the code */
	jp = open_in(d, JITPERF_PERFMAP | JITPERF_JITDUMP);
	idx[0] = 77;
	ck_assert_int_eq(jitperf__code_load_batch(jp, funcs, 10, idx), -EINVAL);
	for (int i = 0; i < 10; i++)
		ck_assert_uint_eq(idx[i], 0);
	funcs[6].size = sizeof(funcs[6]) - 8;   /* not this library's struct */
	lines[6][1].addr = (uintptr_t)funcs[6].addr;
	ck_assert_int_eq(jitperf__code_load_batch(jp, funcs, 10, idx), -EINVAL);
	ck_assert_int_eq(jitperf__code_load_batch(NULL, funcs, 10, idx), -EINVAL);
	ck_assert_int_eq(jitperf__code_load_batch(jp, NULL, 10, idx), -EINVAL);
	ck_assert_int_eq(jitperf__code_load_batch(jp, funcs, 0, NULL), 0);
	dump = read_dump(d, getpid(), &dlen);
	map = read_map(getpid(), &mlen);
	ck_assert_ptr_nonnull(dump);
	ck_assert_ptr_nonnull(map);
	ck_assert_uint_eq(dlen, sizeof(struct jitdump_file_header));
	ck_assert_uint_eq(mlen, 0);
	/* the next load is index 1: nothing was taken */
	funcs[6].size = sizeof(funcs[6]);
	ck_assert_int_eq(jitperf__code_load_batch(jp, funcs, 10, idx), 0);
	ck_assert_uint_eq(idx[0], 1);
	ck_assert_uint_eq(idx[9], 10);
	ck_assert_int_eq(jitperf_close(jp), 0);
	free(dump);
	free(map);
}
END_TEST

/*
 * A full disk (a 16 KiB tmpfs, root only; elsewhere this case says so and
 * ends): a batch bigger than the room left fails half-way through its
 * write, and both files are cut back to what they held before it.
 */
START_TEST(test_full_disk)
{
	char mnt[600];
	unsigned char *dump, *map, *map0;
	size_t dlen, dlen0, mlen, mlen0;
	uint64_t idx[MANY];
	int one_time;
	jitperf *jp;

	snprintf(mnt, sizeof(mnt), "%s/small", dir);
	ck_assert_int_eq(mkdir(mnt, 0755), 0);
	if (mount_private_tmpfs(mnt, "16k") < 0) {
		fprintf(stderr, "check_codebatch: cannot mount a tmpfs (%s): full-disk case not run\n",
			strerror(errno));
		return;
	}
	make_funcs(MANY);
	jp = open_in(mnt, JITPERF_PERFMAP | JITPERF_JITDUMP);
	ck_assert_int_eq(jitperf__code_load_batch(jp, funcs, 5, idx), 0);
	dump = read_dump(mnt, getpid(), &dlen0);
	map0 = read_map(getpid(), &mlen0);
	free(dump);
	/* some 40 KiB of records: more than the room left */
	ck_assert_int_eq(jitperf__code_load_batch(jp, funcs + 5, MANY - 5, idx), -ENOSPC);
	for (int i = 0; i < MANY - 5; i++)
		ck_assert_uint_eq(idx[i], 0);
	dump = read_dump(mnt, getpid(), &dlen);
	map = read_map(getpid(), &mlen);
	ck_assert_uint_eq(dlen, dlen0);
	ck_assert_uint_eq(records_untimed(dump, dlen, &one_time), 5);
	ck_assert_uint_eq(mlen, mlen0);
	ck_assert_mem_eq(map, map0, mlen);
	/* what fits still goes in, with the next index */
	ck_assert_int_eq(jitperf__code_load_batch(jp, funcs + 5, 2, idx), 0);
	ck_assert_uint_eq(idx[0], 6);
	jitperf_close(jp);
	free(dump);
	free(map);
	free(map0);
	ck_assert_int_eq(umount(mnt), 0);
}
END_TEST

static Suite *codebatch_suite(void)
{
	Suite *s = suite_create("codebatch");
	TCase *tc;

	tc = tcase_create("Batch");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_same_bytes_small);
	tcase_add_test(tc, test_same_bytes_last_twin);
	tcase_add_test(tc, test_same_bytes_many);
	tcase_add_test(tc, test_killed_after_batch);
	tcase_add_test(tc, test_refused_writes_nothing);
	tcase_add_test(tc, test_full_disk);
	tcase_add_test(tc, test_standby_batch);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(codebatch_suite());
}
