/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tiers and compiles (lib/tiers.c): code of a compile is named func[tag]
 * in the perf map and the jitdump (func alone with tags off), compiles
 * nest per thread and run on many threads at once, bad input gets -EINVAL
 * or -ENOENT and writes nothing, jit-<pid>.tiers holds every completed
 * record after SIGKILL, and standby holds the records back until a
 * recorder attaches.  The file is read back with read/tiers_read.h.
 */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/check-subr.h"
#include "read/jitdump_read.h"
#include "read/tiers_read.h"

static char *dir;
static unsigned char code[4096];

static void setup(void)
{
	clear_env();
	memset(code, 0xc3, sizeof(code));
	dir = make_tmpdir();
}

static void teardown(void)
{
	remove_perf_map(getpid());
	remove_tmpdir(dir);
}

static jitperf *open_session(unsigned outputs, unsigned tier_tags)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = outputs, .dir = dir,
				     .tier_tags = tier_tags };
	jitperf *jp;

	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	return jp;
}

/* dir/jit-PID.ext, in one of four buffers that last a few calls */
static char *path_of(pid_t pid, const char *ext)
{
	static char path[4][512];
	static int k;
	char *p = path[k++ % 4];

	snprintf(p, 512, "%s/jit-%d.%s", dir, (int)pid, ext);
	return p;
}

#define TIERS_PATH(pid) path_of((pid), "tiers")
#define DUMP_PATH(pid)  path_of((pid), "dump")

/* Load len bytes of code at off as the code of compile, named name (NULL: by the compile). */
static int load(jitperf *jp, uint64_t compile, const char *name, size_t off, uint64_t *index)
{
	struct jitperf_code c = { .size = sizeof(c), .name = name, .addr = code + off, .len = 16,
				  .compile = compile };

	return jitperf_code_load_ex(jp, &c, index);
}

/* The names of the perf map's lines, one a line, in a malloc'ed string. */
static char *map_names(pid_t pid)
{
	char path[64], line[512], *out = calloc(1, 8192);
	FILE *fp;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp)) {
		char *name = strchr(strchr(line, ' ') + 1, ' ') + 1;

		strcat(out, name);
	}
	fclose(fp);
	return out;
}

/* The perf map's text, in a static buffer. */
static const char *map_line_of(pid_t pid)
{
	static char text[8192];
	char path[64];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = 0;
	fclose(fp);
	return text;
}

/* The CODE_LOAD names of the jitdump, one a line. */
static char *dump_names(pid_t pid)
{
	struct jd_file *f;
	struct jd_record r;
	char err[512], *out = calloc(1, 8192);

	ck_assert_msg(jd_open(&f, DUMP_PATH(pid), err, sizeof(err)) == 0, "%s", err);
	while (jd_next(f, &r, err, sizeof(err)) == 1)
		if (r.id == JIT_CODE_LOAD) {
			strcat(out, r.name);
			strcat(out, "\n");
		}
	jd_close(f);
	return out;
}

/* Every record of a tiers file; *n gets how many.  The file must read to its end. */
static struct tr_record *read_tiers(const char *path, size_t *n, char **texts)
{
	struct tr_file *f;
	struct tr_record r, *all = NULL;
	char err[512];
	size_t cap = 0, tlen = 0;
	int ret;

	*n = 0;
	*texts = NULL;
	ck_assert_msg(tr_open(&f, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(tr_header(f)->version, JPTIERS_VERSION);
	ck_assert_int_eq(tr_header(f)->pid, getpid());
	while ((ret = tr_next(f, &r, err, sizeof(err))) == 1) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			all = realloc(all, cap * sizeof(*all));
			ck_assert_ptr_nonnull(all);
		}
		all[(*n)++] = r;
		if (r.text) {   /* kept past tr_close: offsets into one buffer */
			size_t k = strlen(r.text) + 1;

			*texts = realloc(*texts, tlen + k);
			memcpy(*texts + tlen, r.text, k);
			all[*n - 1].text = (const char *)(uintptr_t)tlen;
			tlen += k;
		}
	}
	ck_assert_msg(ret == 0, "%s", err);
	tr_close(f);
	for (size_t i = 0; i < *n; i++)
		if (all[i].type == JPTIERS_TIER_NAME || all[i].type == JPTIERS_TIER_REQUEST ||
		    all[i].type == JPTIERS_COMPILE_BEGIN)
			all[i].text = *texts + (uintptr_t)all[i].text;
	return all;
}

/*
 * The order the file promises: records other than COMPILE_BEGIN in time
 * order; a BEGIN written with the first record that names its compile
 * (an END, an INSTALL, a nested BEGIN), before it and not later in time.
 */
static void check_order(const struct tr_record *r, size_t n)
{
	uint64_t last = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t named[2] = { 0, 0 };

		if (r[i].type != JPTIERS_COMPILE_BEGIN) {
			ck_assert_uint_ge(r[i].timestamp, last);
			last = r[i].timestamp;
		}
		if (r[i].type == JPTIERS_COMPILE_END)
			named[0] = r[i].id;
		else if (r[i].type == JPTIERS_INSTALL)
			named[0] = r[i].compile;
		else if (r[i].type == JPTIERS_COMPILE_BEGIN)
			named[1] = r[i].parent;
		for (int k = 0; k < 2; k++) {
			size_t j = 0;

			if (!named[k])
				continue;
			while (j < i && !(r[j].type == JPTIERS_COMPILE_BEGIN && r[j].id == named[k]))
				j++;
			ck_assert_msg(j < i, "record %zu names compile %llu before its BEGIN", i,
				      (unsigned long long)named[k]);
			ck_assert_uint_le(r[j].timestamp, r[i].timestamp);
		}
	}
}

START_TEST(test_names_tagged)
{
	jitperf *jp = open_session(JITPERF_PERFMAP | JITPERF_JITDUMP, 0);
	uint64_t c0, c1, c2, idx;
	char *names;

	ck_assert_int_eq(jitperf_tier_name(jp, 1, "opt"), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 0, &c0), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, c0, 0), 0);
	ck_assert_int_eq(load(jp, c0, NULL, 0, &idx), 0);      /* installed after its end */
	ck_assert_uint_eq(idx, 1);
	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 1, &c1), 0);
	ck_assert_int_eq(load(jp, c1, NULL, 64, NULL), 0);     /* and before */
	ck_assert_int_eq(jitperf_compile_end(jp, c1, 0), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "mul", 15, &c2), 0);
	ck_assert_int_eq(load(jp, c2, "mul_own_name", 128, NULL), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, c2, 0), 0);
	ck_assert_int_eq(jitperf_tier_name(jp, 1, NULL), 0);    /* back to tier1 */
	ck_assert_int_eq(load(jp, c1, NULL, 192, NULL), 0);
	ck_assert_uint_eq(c0, 1);
	ck_assert_uint_eq(c1, 2);
	ck_assert_uint_eq(c2, 3);

	names = map_names(getpid());
	ck_assert_str_eq(names, "sum[tier0]\nsum[opt]\nmul_own_name\nsum[tier1]\n");
	free(names);
	names = dump_names(getpid());
	ck_assert_str_eq(names, "sum[tier0]\nsum[opt]\nmul_own_name\nsum[tier1]\n");
	free(names);
	ck_assert_int_eq(jitperf_close(jp), 0);
}
END_TEST

START_TEST(test_names_untagged)
{
	jitperf *jp;
	uint64_t c;
	char *names;

	/* the option */
	jp = open_session(JITPERF_PERFMAP, JITPERF_TIER_TAGS_OFF);
	ck_assert_int_eq(jitperf_tier_name(jp, 2, "opt"), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 2, &c), 0);
	ck_assert_int_eq(load(jp, c, NULL, 0, NULL), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, c, 0), 0);
	names = map_names(getpid());
	ck_assert_str_eq(names, "sum\n");
	free(names);
	ck_assert_int_eq(jitperf_close(jp), 0);
	remove_perf_map(getpid());

	/* the environment, and the option over it */
	setenv("JITPERF_TIER_TAGS", "0", 1);
	jp = open_session(JITPERF_PERFMAP, 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 2, &c), 0);
	ck_assert_int_eq(load(jp, c, NULL, 0, NULL), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	names = map_names(getpid());
	ck_assert_str_eq(names, "sum\n");
	free(names);
	jp = open_session(JITPERF_PERFMAP, JITPERF_TIER_TAGS_ON);
	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 2, &c), 0);
	ck_assert_int_eq(load(jp, c, NULL, 0, NULL), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	names = map_names(getpid());
	ck_assert_str_eq(names, "sum[tier2]\n");
	free(names);
}
END_TEST

START_TEST(test_bad_settings)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_PERFMAP, .dir = dir,
				     .tier_tags = 3 };
	jitperf *jp;

	ck_assert_int_eq(jitperf_open(&jp, &o), -EINVAL);
	o.tier_tags = 0;
	setenv("JITPERF_TIER_TAGS", "no", 1);
	ck_assert_int_eq(jitperf_open(&jp, &o), -EINVAL);
}
END_TEST

START_TEST(test_nesting)
{
	jitperf *jp = open_session(JITPERF_JITDUMP, 0);
	uint64_t a, b, c, d, x, y, z;
	struct tr_record *r;
	char *texts;
	size_t n, k = 0;

	ck_assert_int_eq(jitperf_compile_begin(jp, "outer", 1, &a), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "inlined", 0, &b), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, b, 0), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "inlined2", 0, &c), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, c, -1), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, a, 0), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "alone", 1, &d), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, d, 0), 0);
	/* the outer one ends first: the next nests in the inner one, still open */
	ck_assert_int_eq(jitperf_compile_begin(jp, "x", 1, &x), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "y", 1, &y), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, x, 0), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "z", 1, &z), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, z, 0), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, y, 0), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);

	r = read_tiers(TIERS_PATH(getpid()), &n, &texts);
	ck_assert_uint_eq(n, 15);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(r[i].tid, i == n - 1 ? 0 : getpid());
	check_order(r, n);
#define BEGIN(id_, parent_, tier_, func_) do { \
		ck_assert_uint_eq(r[k].type, JPTIERS_COMPILE_BEGIN); \
		ck_assert_uint_eq(r[k].id, id_); ck_assert_uint_eq(r[k].parent, parent_); \
		ck_assert_uint_eq(r[k].tier, tier_); ck_assert_str_eq(r[k].text, func_); k++; \
	} while (0)
#define END(id_, status_) do { \
		ck_assert_uint_eq(r[k].type, JPTIERS_COMPILE_END); \
		ck_assert_uint_eq(r[k].id, id_); ck_assert_int_eq(r[k].status, status_); k++; \
	} while (0)
	BEGIN(a, 0, 1, "outer");
	BEGIN(b, a, 0, "inlined");
	END(b, 0);
	BEGIN(c, a, 0, "inlined2");
	END(c, -1);
	END(a, 0);
	BEGIN(d, 0, 1, "alone");
	END(d, 0);
	BEGIN(x, 0, 1, "x");
	END(x, 0);
	BEGIN(y, x, 1, "y");    /* written with z's end, before z's BEGIN */
	BEGIN(z, y, 1, "z");
	END(z, 0);
	END(y, 0);
	ck_assert_uint_eq(r[k].type, JPTIERS_CLOSE);
	free(r);
	free(texts);
}
END_TEST

#define THREADS 4
#define PER_THREAD 300

struct worker {
	jitperf *jp;
	int      n;
	pid_t    tid;
	int      failed;
};

static void *compile_loop(void *arg)
{
	struct worker *w = arg;
	char func[32];

	w->tid = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < PER_THREAD; i++) {
		uint64_t outer, inner;

		snprintf(func, sizeof(func), "f%d_%d", w->n, i);
		w->failed |= jitperf_compile_begin(w->jp, func, 1, &outer);
		w->failed |= jitperf_compile_begin(w->jp, "callee", 0, &inner);
		w->failed |= jitperf_compile_end(w->jp, inner, 0);
		w->failed |= load(w->jp, outer, NULL, (size_t)(w->n * 16), NULL);
		w->failed |= jitperf_compile_end(w->jp, outer, 0);
	}
	return NULL;
}

START_TEST(test_threads)
{
	jitperf *jp = open_session(JITPERF_JITDUMP, 0);
	struct worker w[THREADS];
	pthread_t t[THREADS];
	struct tr_record *r;
	static uint32_t begun_by[THREADS * PER_THREAD * 2 + 1];
	static int ended[THREADS * PER_THREAD * 2 + 1];
	char *texts;
	size_t n, begins = 0, ends = 0, installs = 0;

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .jp = jp, .n = i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, compile_loop, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(w[i].failed, 0);
	}
	ck_assert_int_eq(jitperf_close(jp), 0);

	r = read_tiers(TIERS_PATH(getpid()), &n, &texts);
	ck_assert_uint_eq(n, (size_t)THREADS * PER_THREAD * 5 + 1);
	check_order(r, n);
	for (size_t i = 0; i < n; i++) {
		switch (r[i].type) {
		case JPTIERS_COMPILE_BEGIN:
			ck_assert_uint_le(r[i].id, THREADS * PER_THREAD * 2);
			ck_assert_uint_eq(begun_by[r[i].id], 0);
			begun_by[r[i].id] = r[i].tid;
			/* a callee nests in its caller's compile, on the same thread */
			if (!strcmp(r[i].text, "callee")) {
				ck_assert_uint_ne(r[i].parent, 0);
				ck_assert_uint_eq(begun_by[r[i].parent], r[i].tid);
				ck_assert_int_eq(ended[r[i].parent], 0);
			} else {
				ck_assert_uint_eq(r[i].parent, 0);
			}
			begins++;
			break;
		case JPTIERS_COMPILE_END:
			ck_assert_uint_eq(begun_by[r[i].id], r[i].tid);
			ck_assert_int_eq(ended[r[i].id], 0);
			ended[r[i].id] = 1;
			ends++;
			break;
		case JPTIERS_INSTALL:
			ck_assert_uint_eq(begun_by[r[i].compile], r[i].tid);
			ck_assert_int_eq(ended[r[i].compile], 0);
			installs++;
			break;
		}
	}
	ck_assert_uint_eq(begins, THREADS * PER_THREAD * 2);
	ck_assert_uint_eq(ends, THREADS * PER_THREAD * 2);
	ck_assert_uint_eq(installs, THREADS * PER_THREAD);
	free(r);
	free(texts);
}
END_TEST

START_TEST(test_errors)
{
	jitperf *jp = open_session(JITPERF_PERFMAP | JITPERF_JITDUMP, 0);
	uint64_t c = 77, idx = 5;
	struct tr_record *r;
	char *texts, *names;
	size_t n;

	ck_assert_int_eq(jitperf_compile_begin(jp, "f", 16, &c), -EINVAL);
	ck_assert_uint_eq(c, 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, NULL, 0, &c), -EINVAL);
	ck_assert_int_eq(jitperf_compile_begin(jp, "f", 0, NULL), -EINVAL);
	ck_assert_int_eq(jitperf_tier_request(jp, NULL, 1), -EINVAL);
	ck_assert_int_eq(jitperf_tier_request(jp, "f", 16), -EINVAL);
	ck_assert_int_eq(jitperf_tier_name(jp, 16, "x"), -EINVAL);
	ck_assert_int_eq(jitperf_tier_name(jp, 1, ""), -EINVAL);
	ck_assert_int_eq(jitperf_tier_name(jp, 1, "a[b]"), -EINVAL);
	ck_assert_int_eq(jitperf_tier_name(jp, 1, "a\nb"), -EINVAL);
	ck_assert_int_eq(jitperf_tier_name(jp, 1, "0123456789012345678901234567890123456789"
					   "012345678901234567890123"), -EINVAL);
	ck_assert_int_eq(jitperf_compile_end(jp, 1, 0), -ENOENT);
	ck_assert_int_eq(jitperf_compile_end(jp, 0, 0), -ENOENT);
	ck_assert_int_eq(load(jp, 1, NULL, 0, &idx), -ENOENT);
	ck_assert_uint_eq(idx, 0);
	ck_assert_int_eq(load(jp, 1, "named", 0, NULL), -ENOENT);

	ck_assert_int_eq(jitperf_compile_begin(jp, "f", 0, &c), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, c, 1), -EINVAL);
	ck_assert_int_eq(jitperf_compile_end(jp, c + 1, 0), -ENOENT);
	ck_assert_int_eq(load(jp, c + 1, NULL, 0, NULL), -ENOENT);
	ck_assert_int_eq(jitperf_compile_end(jp, c, -ECANCELED), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, c, 0), -ENOENT);     /* ended already */
	ck_assert_int_eq(load(jp, c, NULL, 0, &idx), 0);               /* but still known */
	ck_assert_uint_eq(idx, 1);
	ck_assert_int_eq(jitperf_close(jp), 0);

	/* every code has its own words */
	ck_assert_ptr_nonnull(strstr(jitperf_strerror(-EINVAL), "tier over 15"));
	ck_assert_ptr_nonnull(strstr(jitperf_strerror(-ENOENT), "open compile"));

	/* what was refused left nothing: one load, one compile */
	names = map_names(getpid());
	ck_assert_str_eq(names, "f[tier0]\n");
	free(names);
	r = read_tiers(TIERS_PATH(getpid()), &n, &texts);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(r[0].type, JPTIERS_COMPILE_BEGIN);
	ck_assert_uint_eq(r[1].type, JPTIERS_COMPILE_END);
	ck_assert_int_eq(r[1].status, -ECANCELED);
	ck_assert_uint_eq(r[2].type, JPTIERS_INSTALL);
	ck_assert_uint_eq(r[2].compile, c);
	ck_assert_uint_eq(r[2].code_index, 1);
	ck_assert_uint_eq(r[2].code_addr, (uintptr_t)code);
	ck_assert_uint_eq(r[2].code_size, 16);
	ck_assert_uint_eq(r[3].type, JPTIERS_CLOSE);
	free(r);
	free(texts);
}
END_TEST

START_TEST(test_inactive)
{
	struct jitperf_options o = { .size = sizeof(o), .dir = dir };
	jitperf *jp;
	uint64_t c = 9;

	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	ck_assert_uint_eq(jitperf_outputs(jp), 0);
	ck_assert_int_eq(jitperf_tier_name(jp, 3, "opt"), 0);
	ck_assert_int_eq(jitperf_tier_request(jp, "f", 3), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "f", 3, &c), 0);
	ck_assert_uint_eq(c, 0);
	ck_assert_int_eq(jitperf_compile_end(jp, c, 0), 0);
	/* arguments are checked all the same */
	ck_assert_int_eq(jitperf_compile_begin(jp, "f", 16, &c), -EINVAL);
	ck_assert_int_eq(jitperf_compile_begin(jp, NULL, 1, &c), -EINVAL);
	ck_assert_int_eq(jitperf_close(jp), 0);
	/* NULL: the default session, inactive without JITPERF */
	ck_assert_int_eq(jitperf_compile_begin(NULL, "f", 1, &c), 0);
	ck_assert_uint_eq(c, 0);
	ck_assert_int_eq(jitperf_compile_end(NULL, 0, 0), 0);
	ck_assert_int_eq(access(TIERS_PATH(getpid()), F_OK), -1);
}
END_TEST

START_TEST(test_no_tiers_no_file)
{
	jitperf *jp = open_session(JITPERF_JITDUMP, 0);

	ck_assert_int_eq(jitperf_code_load(jp, "plain", code, 16, NULL), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert_int_eq(access(DUMP_PATH(getpid()), F_OK), 0);
	ck_assert_int_eq(access(TIERS_PATH(getpid()), F_OK), -1);
}
END_TEST

/*
 * A child compiles until it is killed, saying on a pipe how many compiles
 * it completed (begin, install, end); every one it said is in its file,
 * which reads to its end without a partial record.
 */
START_TEST(test_sigkill)
{
	int fds[2];
	pid_t pid;
	uint64_t said = 0, done;
	size_t n, ends = 0, installs = 0, begins = 0;
	int status;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		jitperf *jp = open_session(JITPERF_PERFMAP | JITPERF_JITDUMP, 0);

		close(fds[0]);
		jitperf_tier_name(jp, 1, "opt");
		for (done = 1;; done++) {
			uint64_t c;

			if (jitperf_tier_request(jp, "loop", 1) ||
			    jitperf_compile_begin(jp, "loop", 1, &c) ||
			    load(jp, c, NULL, done % 200 * 16, NULL) ||
			    jitperf_compile_end(jp, c, 0))
				_exit(1);
			if (write(fds[1], &done, sizeof(done)) != sizeof(done))
				_exit(1);
		}
	}
	close(fds[1]);
	while (said < 300 && read(fds[0], &done, sizeof(done)) == sizeof(done))
		said = done;
	ck_assert_uint_ge(said, 300);
	kill(pid, SIGKILL);
	while (read(fds[0], &done, sizeof(done)) == sizeof(done))
		said = done;    /* what it said before it died */
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
	remove_perf_map(pid);

	/* read_tiers checks the pid: read as if it were ours */
	{
		struct tr_file *f;
		struct tr_record rec;
		char err[512];
		int ret;

		ck_assert_msg(tr_open(&f, TIERS_PATH(pid), err, sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(tr_header(f)->pid, pid);
		n = 0;
		while ((ret = tr_next(f, &rec, err, sizeof(err))) == 1) {
			n++;
			if (rec.type == JPTIERS_COMPILE_BEGIN)
				begins++;
			else if (rec.type == JPTIERS_COMPILE_END)
				ck_assert_uint_eq(rec.id, ++ends);
			else if (rec.type == JPTIERS_INSTALL)
				installs++;
			ck_assert_uint_ne(rec.type, JPTIERS_CLOSE);
		}
		ck_assert_msg(ret == 0, "%s", err);
		tr_close(f);
	}
	ck_assert_uint_ge(ends, said);
	ck_assert_uint_ge(installs, said);
	ck_assert_uint_ge(begins, said);
	ck_assert_uint_ge(n, 4 * said);
}
END_TEST

/* Standby: nothing before a recorder attaches; then every record, with its own time. */
START_TEST(test_standby)
{
	jitperf *jp = open_session(JITPERF_STANDBY, 0);
	char reply[512], req[600];
	uint64_t c, before;
	struct tr_record *r;
	char *texts, *names;
	size_t n;

	before = 0;
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		before = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	ck_assert_int_eq(jitperf_tier_name(jp, 1, "opt"), 0);
	ck_assert_int_eq(jitperf_tier_request(jp, "sum", 1), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 1, &c), 0);
	ck_assert_int_eq(jitperf_compile_end(jp, c, 0), 0);
	ck_assert_int_eq(load(jp, c, NULL, 0, NULL), 0);
	ck_assert_int_eq(access(TIERS_PATH(getpid()), F_OK), -1);
	ck_assert_int_eq(access(DUMP_PATH(getpid()), F_OK), -1);

	snprintf(req, sizeof(req), "attach %s\n", dir);
	knock(req, reply, sizeof(reply));
	ck_assert_msg(!strncmp(reply, "ok 1 ", 5), "reply: %s", reply);
	/* awake: written as they come */
	ck_assert_int_eq(jitperf_compile_begin(jp, "sum", 2, &c), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);

	names = dump_names(getpid());
	ck_assert_str_eq(names, "sum[opt]\n");
	free(names);
	r = read_tiers(TIERS_PATH(getpid()), &n, &texts);
	ck_assert_uint_eq(n, 7);
	ck_assert_uint_eq(r[0].type, JPTIERS_TIER_NAME);
	ck_assert_str_eq(r[0].text, "opt");
	ck_assert_uint_ge(r[0].timestamp, before);
	ck_assert_uint_eq(r[1].type, JPTIERS_TIER_REQUEST);
	ck_assert_str_eq(r[1].text, "sum");
	ck_assert_uint_eq(r[2].type, JPTIERS_COMPILE_BEGIN);
	ck_assert_uint_eq(r[3].type, JPTIERS_COMPILE_END);
	ck_assert_uint_eq(r[4].type, JPTIERS_INSTALL);
	ck_assert_uint_eq(r[5].type, JPTIERS_COMPILE_BEGIN);
	ck_assert_uint_eq(r[5].tier, 2);
	ck_assert_uint_eq(r[6].type, JPTIERS_CLOSE);
	check_order(r, n);
	free(r);
	free(texts);
}
END_TEST

/* A fork child writes its own file, which names the tags set before the fork. */
START_TEST(test_fork)
{
	jitperf *jp = open_session(JITPERF_JITDUMP, 0);
	uint64_t c;
	pid_t pid;
	int status;

	ck_assert_int_eq(jitperf_tier_name(jp, 1, "opt"), 0);
	ck_assert_int_eq(jitperf_compile_begin(jp, "parent", 1, &c), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		uint64_t k;

		_exit(jitperf_compile_end(jp, c, 0) || jitperf_compile_begin(jp, "child", 1, &k) ||
		      jitperf_compile_end(jp, k, 0) || jitperf_close(jp));
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(jitperf_compile_end(jp, c, 0), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	{
		struct tr_file *f;
		struct tr_record rec;
		char err[512], seen[256] = "";
		int ret;

		ck_assert_msg(tr_open(&f, TIERS_PATH(pid), err, sizeof(err)) == 0, "%s", err);
		while ((ret = tr_next(f, &rec, err, sizeof(err))) == 1) {
			char one[64];

			snprintf(one, sizeof(one), "%s %llu %s\n", tr_type_name(rec.type),
				 (unsigned long long)(rec.id ? rec.id : rec.tier),
				 rec.text ? rec.text : "-");
			strcat(seen, one);
		}
		ck_assert_int_eq(ret, 0);
		tr_close(f);
		/* the parent's compile, not yet written at the fork: its BEGIN comes along */
		ck_assert_str_eq(seen, "TIER_NAME 1 opt\nCOMPILE_BEGIN 1 parent\nCOMPILE_END 1 -\n"
			       "COMPILE_BEGIN 2 child\nCOMPILE_END 2 -\nCLOSE 0 -\n");
	}
	ck_assert_int_eq(access(DUMP_PATH(pid), F_OK), 0);
}
END_TEST

/* ---- trampolines */

#if defined(__x86_64__) || defined(__aarch64__)
#include <unwind.h>

/* where the target returns into a trampoline, the code's length, and
 * where its FDE's pc_begin sits in its .eh_frame (lib/trampoline.c) */
#if defined(__x86_64__)
# define TRAMP_RET 17
# define TRAMP_LEN_HEX "13"
# define PC_BEGIN_AT 32
#else
# define TRAMP_RET 20
# define TRAMP_LEN_HEX "1c"
# define PC_BEGIN_AT 28
#endif

void __register_frame(void *begin);
void __deregister_frame(void *begin);

static void *seen_ret, *seen_up;        /* what the target found above itself */
static uintptr_t ips[16];
static int nips;

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
	(void)arg;
	if (nips < 16)
		ips[nips++] = _Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

/* Many arguments in registers; looks at its own callers, by frame pointers and by DWARF. */
static __attribute__((noinline)) double target(long a, long b, long c, long d, long e, long f,
					       double x, double y)
{
	void **fp = __builtin_frame_address(0);

	seen_ret = fp[1];               /* our return address: inside the trampoline */
	seen_up = ((void **)fp[0])[1];  /* the trampoline frame's: its caller */
	nips = 0;
	_Unwind_Backtrace(one_frame, NULL);
	return (double)(a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f) + x * y;
}

static __attribute__((noinline)) double call_it(void *entry)
{
	double (*fn)(long, long, long, long, long, long, double, double) =
		(double (*)(long, long, long, long, long, long, double, double))entry;
	double r = fn(1, 2, 3, 4, 5, 6, 1.5, 4.0);

	__asm__ volatile("" ::: "memory");     /* not a tail call: this frame stays */
	return r;
}

/* The trampoline's .eh_frame from the jitdump, moved to buf as libgcc reads it. */
static void eh_frame_of(pid_t pid, uint64_t addr, unsigned char *buf, size_t *len)
{
	struct jd_file *f;
	struct jd_record r;
	struct jd_unwinding u;
	char err[512];
	size_t eh;
	int32_t pc;

	*len = 0;
	ck_assert_msg(jd_open(&f, DUMP_PATH(pid), err, sizeof(err)) == 0, "%s", err);
	while (jd_next(f, &r, err, sizeof(err)) == 1)
		if (r.id == JIT_CODE_UNWINDING_INFO) {
			ck_assert_int_eq(jd_unwinding_info(f, &r, &u, err, sizeof(err)), 0);
			eh = u.unwinding_size - u.eh_frame_hdr_size;
			ck_assert_uint_le(eh + 4, 256);
			memcpy(buf, u.data, eh);
			memset(buf + eh, 0, 4);         /* the terminator */
			*len = eh;
		}
	jd_close(f);
	ck_assert_uint_eq(*len, 56);
	/* the FDE's pc_begin, relative to where the bytes now are (within 2 GiB) */
	ck_assert((int64_t)(addr - (uintptr_t)(buf + PC_BEGIN_AT)) ==
		  (int32_t)(addr - (uintptr_t)(buf + PC_BEGIN_AT)));
	pc = (int32_t)(addr - (uintptr_t)(buf + PC_BEGIN_AT));
	memcpy(buf + PC_BEGIN_AT, &pc, 4);
}

START_TEST(test_trampoline)
{
	jitperf *jp = open_session(JITPERF_PERFMAP | JITPERF_JITDUMP, 0);
	/* mapped, as the trampolines are: near them, for a 32-bit pc_begin */
	unsigned char *eh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);
	void *entry, *again;
	char *names, want[128];
	size_t ehlen;
	double r;

	ck_assert_ptr_ne(eh, MAP_FAILED);
	ck_assert_int_eq(jitperf_tier_name(jp, 0, "interp"), 0);
	ck_assert_int_eq(jitperf_trampoline(jp, "sum", 0, (void *)target, &entry), 0);
	ck_assert_ptr_ne(entry, (void *)target);
	ck_assert_int_eq(jitperf_trampoline(jp, "mul", 0, (void *)target, &again), 0);
	ck_assert_ptr_ne(again, entry);

	/* the arguments arrive, the result comes back */
	r = call_it(entry);
	ck_assert(r == 1 + 4 + 9 + 16 + 25 + 36 + 6.0);
	/* frame pointers: target returns into the trampoline, whose frame returns to us */
	ck_assert_ptr_eq(seen_ret, (char *)entry + TRAMP_RET);
	ck_assert((uintptr_t)seen_up > (uintptr_t)call_it &&
		  (uintptr_t)seen_up < (uintptr_t)call_it + 256);

	/* DWARF: with its .eh_frame from the jitdump, libgcc unwinds through it */
	eh_frame_of(getpid(), (uintptr_t)entry, eh, &ehlen);
	__register_frame(eh);
	call_it(entry);
	__deregister_frame(eh);
	ck_assert_int_ge(nips, 3);
	ck_assert_uint_eq(ips[1], (uintptr_t)entry + TRAMP_RET);
	ck_assert(ips[2] > (uintptr_t)call_it && ips[2] < (uintptr_t)call_it + 256);

	names = map_names(getpid());
	ck_assert_str_eq(names, "sum[interp]\nmul[interp]\n");
	free(names);
	snprintf(want, sizeof(want), "%lx " TRAMP_LEN_HEX " sum[interp]",
		 (unsigned long)(uintptr_t)entry);
	ck_assert_ptr_nonnull(strstr(map_line_of(getpid()), want));
	ck_assert_int_eq(jitperf_close(jp), 0);
	munmap(eh, 4096);
}
END_TEST

START_TEST(test_trampoline_errors)
{
	jitperf *jp = open_session(JITPERF_PERFMAP, 0);
	void *entry = (void *)1;

	ck_assert_int_eq(jitperf_trampoline(jp, NULL, 0, (void *)target, &entry), -EINVAL);
	ck_assert_ptr_null(entry);
	ck_assert_int_eq(jitperf_trampoline(jp, "f", 16, (void *)target, &entry), -EINVAL);
	ck_assert_int_eq(jitperf_trampoline(jp, "f", 0, NULL, &entry), -EINVAL);
	ck_assert_int_eq(jitperf_trampoline(jp, "f", 0, (void *)target, NULL), -EINVAL);
	ck_assert_int_eq(jitperf_close(jp), 0);
	/* nothing records: the target itself, no detour */
	ck_assert_int_eq(jitperf_trampoline(NULL, "f", 0, (void *)target, &entry), 0);
	ck_assert_ptr_eq(entry, (void *)target);
}
END_TEST
#endif

static Suite *suite(void)
{
	Suite *s = suite_create("Tiers and compiles");
	TCase *tc;

	tc = tcase_create("Names of tier code");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_names_tagged);
	tcase_add_test(tc, test_names_untagged);
	tcase_add_test(tc, test_bad_settings);
	suite_add_tcase(s, tc);

	tc = tcase_create("Compiles");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_nesting);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_inactive);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

	tc = tcase_create("The tiers file");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_no_tiers_no_file);
	tcase_add_test(tc, test_sigkill);
	tcase_add_test(tc, test_standby);
	tcase_add_test(tc, test_fork);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

#if defined(__x86_64__) || defined(__aarch64__)
	tc = tcase_create("Trampolines");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_trampoline);
	tcase_add_test(tc, test_trampoline_errors);
	suite_add_tcase(s, tc);
#endif
	return s;
}

int main(void)
{
	return run_suite(suite());
}
