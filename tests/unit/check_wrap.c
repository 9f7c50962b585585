/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_wrap: thunks pass any arguments and results through unchanged,
 * and the calls they record are exact (checked in the statistics file the
 * session writes, as `jitperf report` reads it, and in the perf map).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitperf.h"
#include "tests/check-subr.h"

#if defined(__x86_64__) && !defined(__ILP32__)
# define HAVE_THUNKS 1
# define STUB_HEX "30"          /* a stub's size in the perf map */
# include <immintrin.h>
#elif defined(__aarch64__) && !defined(__ILP32__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define HAVE_THUNKS 1
# define STUB_HEX "40"
# include <arm_neon.h>
#else
# define STUB_HEX "0"           /* no thunks: the test is not run */
#endif

#define NOINLINE __attribute__((noinline, noclone))

/* ---- a session writing statistics into a fresh directory */

static char *dir;
static jitperf *jp;

static void open_session(unsigned outputs)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = outputs };

	dir = make_tmpdir();
	o.dir = dir;
	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
}

static void setup(void)
{
	open_session(JITPERF_STATS);
}

static void teardown(void)
{
	if (jp)
		jitperf_close(jp);
	jp = NULL;
	remove_tmpdir(dir);
	dir = NULL;
}

static void *wrap(const char *name, const void *fn)
{
	jitperf_fn id = jitperf_fn_register(jp, name, fn, 1);
	void *w = NULL;

	ck_assert_uint_ne(id, 0);
	ck_assert_int_eq(jitperf_wrap(jp, id, fn, &w), 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_ne(w, fn);
	return w;
}

/* Close the session (once) and read "calls" and "unbalanced" of name from the stats. */
static void stats_of(const char *name, unsigned long *calls, unsigned long *unbalanced)
{
	char path[128], line[4096];
	size_t n = strlen(name);
	FILE *f;
	int found = 0;

	if (jp) {               /* statistics are written at close */
		ck_assert_int_eq(jitperf_close(jp), 0);
		jp = NULL;
	}
	snprintf(path, sizeof(path), "%s/jitperf-%d.stats", dir, (int)getpid());
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "no statistics file %s", path);
	while (fgets(line, sizeof(line), f)) {
		/* function calls timed total_ns self_ns min_ns mean_ns max_ns unbalanced */
		char *field[9], *p = line;
		int k;

		if (strncmp(line, name, n) != 0 || line[n] != '\t')
			continue;
		for (k = 0; k < 9 && p; k++) {
			field[k] = p;
			if ((p = strchr(p, '\t')))
				*p++ = 0;
		}
		ck_assert_int_eq(k, 9);
		*calls = strtoul(field[1], NULL, 10);
		*unbalanced = strtoul(field[8], NULL, 10);
		found = 1;
	}
	fclose(f);
	ck_assert_msg(found, "%s not in %s", name, path);
}

static unsigned long calls_of(const char *name)
{
	unsigned long calls, unbalanced;

	stats_of(name, &calls, &unbalanced);
	ck_assert_uint_eq(unbalanced, 0);
	return calls;
}

/* ---- Arguments and results */

struct big { long v[5]; };          /* passed and returned in memory */
struct pair { long a, b; };         /* returned in rax:rdx, x0:x1 */
struct dpair { double x, y; };      /* returned in xmm0:xmm1, d0:d1 */

/* 8 integer + 10 floating-point arguments, plus more on the stack: each
 * weighted differently so a swapped or shifted argument shows. */
static NOINLINE double many(long a1, long a2, long a3, long a4, long a5, long a6,
			    long a7, long a8, double d1, double d2, double d3,
			    double d4, double d5, double d6, double d7, double d8,
			    double d9, double d10, int s1, struct big b, float s2)
{
	return a1 + 2 * a2 + 3 * a3 + 4 * a4 + 5 * a5 + 6 * a6 + 7 * a7 + 8 * a8 +
	       d1 * 1.5 + d2 * 2.5 + d3 * 3.5 + d4 * 4.5 + d5 * 5.5 + d6 * 6.5 +
	       d7 * 7.5 + d8 * 8.5 + d9 * 9.5 + d10 * 10.5 + 11 * s1 +
	       13 * b.v[0] + 17 * b.v[4] + 19 * s2;
}

static NOINLINE long ints8(long a, long b, long c, long d, long e, long f, long g, long h)
{
	return a - 2 * b + 3 * c - 4 * d + 5 * e - 6 * f + 7 * g - 8 * h;
}

static NOINLINE struct pair make_pair(long a, long b) { return (struct pair){ a * 3, b * 5 }; }
static NOINLINE struct dpair make_dpair(double a, double b) { return (struct dpair){ a / 3, b / 7 }; }
static NOINLINE struct big make_big(long a) { return (struct big){ { a, a + 1, a + 2, a + 3, a + 4 } }; }
static NOINLINE long double times3(long double x) { return x * 3; }
static NOINLINE float fquot(float a, float b) { return a / b; }

START_TEST(test_int_fp_stack_args)
{
	typedef double many_fn(long, long, long, long, long, long, long, long, double,
			       double, double, double, double, double, double, double,
			       double, double, int, struct big, float);
	typedef long ints8_fn(long, long, long, long, long, long, long, long);
	many_fn *mw = (many_fn *)wrap("many", (const void *)many);
	ints8_fn *iw = (ints8_fn *)wrap("ints8", (const void *)ints8);
	struct big b = { { 100, 200, 300, 400, 500 } };
	double want = many(1, -2, 3, -4, 5, -6, 7, -8, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6,
			   0.7, 0.8, 0.9, 1.1, 12, b, 2.25f);
	double got = mw(1, -2, 3, -4, 5, -6, 7, -8, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7,
			0.8, 0.9, 1.1, 12, b, 2.25f);

	ck_assert(got == want);         /* bit for bit: same code, same arguments */
	ck_assert_int_eq(iw(1, 2, 3, 4, 5, 6, 7, 8), ints8(1, 2, 3, 4, 5, 6, 7, 8));
	ck_assert_int_eq(iw(1, 2, 3, 4, 5, 6, 7, 8), -36);
	ck_assert_uint_eq(calls_of("many"), 1);
}
END_TEST

START_TEST(test_struct_results)
{
	struct pair (*pw)(long, long) = (struct pair (*)(long, long))wrap("pair", (const void *)make_pair);
	struct dpair (*dw)(double, double) =
		(struct dpair (*)(double, double))wrap("dpair", (const void *)make_dpair);
	struct big (*bw)(long) = (struct big (*)(long))wrap("big", (const void *)make_big);
	long double (*lw)(long double) = (long double (*)(long double))wrap("ld", (const void *)times3);
	float (*fw)(float, float) = (float (*)(float, float))wrap("fquot", (const void *)fquot);
	struct pair p = pw(4, 6);
	struct dpair d = dw(4.0, 6.0);
	struct big b = bw(10);

	ck_assert_int_eq(p.a, 12);
	ck_assert_int_eq(p.b, 30);
	ck_assert(d.x == 4.0 / 3 && d.y == 6.0 / 7);
	ck_assert_int_eq(b.v[0], 10);
	ck_assert_int_eq(b.v[4], 14);
	ck_assert(lw(1.25L) == 3.75L);  /* x87 st(0) passes through; q0 on AArch64 */
	ck_assert(fw(1.0f, 3.0f) == 1.0f / 3.0f);
	ck_assert_uint_eq(calls_of("pair"), 1);
}
END_TEST

/* Variadic: on x86-64 the caller sets %al to the number of vector registers used. */
static NOINLINE double vmix(int n, ...)
{
	double s = 0;
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += (i & 1 ? va_arg(ap, double) : (double)va_arg(ap, long)) * (i + 1);
	va_end(ap);
	return s;
}

START_TEST(test_varargs)
{
	double (*vw)(int, ...) = (double (*)(int, ...))wrap("vmix", (const void *)vmix);
	char buf[64];
	int (*sw)(char *, size_t, const char *, ...) =
		(int (*)(char *, size_t, const char *, ...))wrap("snprintf", (const void *)snprintf);

	ck_assert(vw(6, 1L, 2.5, 3L, 4.5, 5L, 6.5) == vmix(6, 1L, 2.5, 3L, 4.5, 5L, 6.5));
	/* 20 arguments: 10 integers and 10 doubles, some on the stack */
	ck_assert(vw(20, 1L, 2.5, 3L, 4.5, 5L, 6.5, 7L, 8.5, 9L, 10.5, 11L, 12.5, 13L,
		     14.5, 15L, 16.5, 17L, 18.5, 19L, 20.5) ==
		  vmix(20, 1L, 2.5, 3L, 4.5, 5L, 6.5, 7L, 8.5, 9L, 10.5, 11L, 12.5, 13L,
		       14.5, 15L, 16.5, 17L, 18.5, 19L, 20.5));
	ck_assert_int_eq(sw(buf, sizeof(buf), "%d %.2f %s %ld %g", 42, 3.25, "x", -7L, 0.5), 16);
	ck_assert_str_eq(buf, "42 3.25 x -7 0.5");
	ck_assert_uint_eq(calls_of("vmix"), 2);
}
END_TEST

#if defined(HAVE_THUNKS) && defined(__x86_64__)
/* Vector arguments use the full ymm/zmm registers (added only where the CPU has them). */
__attribute__((target("avx"), noinline, noclone))
static __m256d v256(__m256d a, __m256d b, __m256d c, __m256d d, __m256d e,
		    __m256d f, __m256d g, __m256d h)
{
	return _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(a, b), _mm256_add_pd(c, d)),
			     _mm256_mul_pd(_mm256_add_pd(e, f), _mm256_sub_pd(g, h)));
}

__attribute__((target("avx")))
static void check_v256(void)
{
	__m256d (*w)(__m256d, __m256d, __m256d, __m256d, __m256d, __m256d, __m256d, __m256d) =
		(__m256d (*)(__m256d, __m256d, __m256d, __m256d, __m256d, __m256d, __m256d,
			     __m256d))wrap("v256", (const void *)v256);
	__m256d x[8];
	double got[4], want[4];

	for (int i = 0; i < 8; i++)
		x[i] = _mm256_set_pd(i + 1, 10 * i + 2, 100 * i + 3, 1000 * i + 4);
	_mm256_storeu_pd(got, w(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]));
	_mm256_storeu_pd(want, v256(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]));
	ck_assert_mem_eq(got, want, sizeof(got));
}

START_TEST(test_avx_args)
{
	check_v256();
	ck_assert_uint_eq(calls_of("v256"), 1);
}
END_TEST

__attribute__((target("avx512f"), noinline, noclone))
static __m512d v512(__m512d a, __m512d b, __m512d c)
{
	return _mm512_add_pd(a, _mm512_mul_pd(b, c));
}

__attribute__((target("avx512f")))
static void check_v512(void)
{
	__m512d (*w)(__m512d, __m512d, __m512d) =
		(__m512d (*)(__m512d, __m512d, __m512d))wrap("v512", (const void *)v512);
	__m512d a = _mm512_set_pd(1, 2, 3, 4, 5, 6, 7, 8);
	__m512d b = _mm512_set_pd(9, 10, 11, 12, 13, 14, 15, 16);
	__m512d c = _mm512_set1_pd(0.5);
	double got[8], want[8];

	_mm512_storeu_pd(got, w(a, b, c));
	_mm512_storeu_pd(want, v512(a, b, c));
	ck_assert_mem_eq(got, want, sizeof(got));
}

START_TEST(test_avx512_args)
{
	check_v512();
	ck_assert_uint_eq(calls_of("v512"), 1);
}
END_TEST

#endif

#if defined(HAVE_THUNKS) && defined(__aarch64__)
/* AAPCS64: homogeneous aggregates travel in v0-v7 (results in v0-v3),
 * 128-bit vectors in q registers, __int128 in register pairs. */
struct hfa4 { double a, b, c, d; };
struct hva4 { float32x4_t v[4]; };

static NOINLINE struct hfa4 hfa_mix(struct hfa4 h, struct hfa4 k, double s)
{
	return (struct hfa4){ h.a + k.d * s, h.b - k.c, h.c * k.b, h.d / k.a };
}

static NOINLINE struct hva4 hva_mix(float32x4_t a, float32x4_t b, float32x4_t c,
				    float32x4_t d, float32x4_t e, float32x4_t f,
				    float32x4_t g, float32x4_t h, float32x4_t i)
{
	return (struct hva4){ { vaddq_f32(a, i), vmulq_f32(b, h), vsubq_f32(c, g),
				vaddq_f32(vaddq_f32(d, e), f) } };
}

static NOINLINE __int128 i128_mix(long a, __int128 b, __int128 c, __int128 d,
				  __int128 e)
{
	return a + b * 3 - c + (d >> 7) + (e << 2);
}

START_TEST(test_neon_args)
{
	struct hfa4 (*hw)(struct hfa4, struct hfa4, double) =
		(struct hfa4 (*)(struct hfa4, struct hfa4, double))wrap("hfa", (const void *)hfa_mix);
	struct hva4 (*vw)(float32x4_t, float32x4_t, float32x4_t, float32x4_t, float32x4_t,
			  float32x4_t, float32x4_t, float32x4_t, float32x4_t) =
		(struct hva4 (*)(float32x4_t, float32x4_t, float32x4_t, float32x4_t,
				 float32x4_t, float32x4_t, float32x4_t, float32x4_t,
				 float32x4_t))wrap("hva", (const void *)hva_mix);
	__int128 (*iw)(long, __int128, __int128, __int128, __int128) =
		(__int128 (*)(long, __int128, __int128, __int128, __int128))
		wrap("i128", (const void *)i128_mix);
	struct hfa4 h = { 1.5, 2.5, 3.5, 4.5 }, k = { 8, 7, 6, 5 };
	struct hfa4 hg = hw(h, k, 0.25), hx = hfa_mix(h, k, 0.25);
	float32x4_t x[9];
	struct hva4 vg, vx;
	__int128 big = (__int128)0x123456789abcdefLL << 40;

	for (int i = 0; i < 9; i++)
		x[i] = (float32x4_t){ i + 1.0f, 10.0f * i + 2, 100.0f * i + 3, -1.0f * i };
	vg = vw(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]);
	vx = hva_mix(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]);
	ck_assert_mem_eq(&hg, &hx, sizeof(hg));
	ck_assert(hg.a == 1.5 + 5 * 0.25 && hg.d == 4.5 / 8);
	ck_assert_mem_eq(&vg, &vx, sizeof(vg));
	ck_assert(iw(7, big, -big, big + 5, 3) == i128_mix(7, big, -big, big + 5, 3));
	ck_assert_uint_eq(calls_of("hva"), 1);
}
END_TEST
#endif

/* ---- Recursion through the wrapper */

static long (*fib_w)(long);

static NOINLINE long fib(long n)
{
	return n < 2 ? n : fib_w(n - 1) + fib_w(n - 2);
}

/* calls made by fib(n): c(n) = 1 + c(n-1) + c(n-2), c(0) = c(1) = 1 */
static unsigned long fib_calls(long n)
{
	unsigned long a = 1, b = 1;

	for (long i = 2; i <= n; i++) {
		unsigned long c = 1 + a + b;
		a = b;
		b = c;
	}
	return b;
}

START_TEST(test_recursion)
{
	fib_w = (long (*)(long))wrap("fib", (const void *)fib);
	ck_assert_int_eq(fib_w(20), 6765);
	ck_assert_int_eq(fib_w(1), 1);
	ck_assert_uint_eq(calls_of("fib"), fib_calls(20) + 1);
	ck_assert_uint_eq(fib_calls(20), 21891);
}
END_TEST

/* Deep: the shadow stack grows over many chunks and shrinks back, every
 * level returning to its own caller with its own value. */
#define DEPTH 20000
static long (*down_w)(long);

static NOINLINE long down(long n)
{
	long below = n ? down_w(n - 1) : -1;

	return below + 1 == n ? n : -1000000;  /* each level sees its own result */
}

START_TEST(test_deep_recursion)
{
	down_w = (long (*)(long))wrap("down", (const void *)down);
	ck_assert_int_eq(down_w(DEPTH), DEPTH);
	ck_assert_int_eq(down_w(3), 3);
	ck_assert_uint_eq(calls_of("down"), DEPTH + 1 + 4);
}
END_TEST

/* ---- Threads */

#define NTHREADS 4
#define ROUNDS   300

static void *thread_main(void *arg)
{
	long sum = 0;

	(void)arg;
	for (int i = 0; i < ROUNDS; i++)
		sum += fib_w(12);
	return (void *)sum;
}

START_TEST(test_threads)
{
	pthread_t t[NTHREADS];

	fib_w = (long (*)(long))wrap("fib", (const void *)fib);
	for (int i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, thread_main, NULL), 0);
	for (int i = 0; i < NTHREADS; i++) {
		void *ret;

		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_int_eq((long)ret, 144L * ROUNDS);
	}
	ck_assert_uint_eq(calls_of("fib"), (unsigned long)NTHREADS * ROUNDS * fib_calls(12));
}
END_TEST

/* jitperf_wrap itself from several threads at once: every thunk distinct and working */
#define PER_THREAD 200

static void *wrap_many(void *arg)
{
	long base = (long)arg;
	static long (*w[NTHREADS][PER_THREAD])(long);
	char name[32];

	for (int i = 0; i < PER_THREAD; i++) {
		jitperf_fn id;

		snprintf(name, sizeof(name), "t%ld_%d", base, i);
		id = jitperf_fn_register(jp, name, (const void *)fib, 1);
		if (!id || jitperf_wrap(jp, id, (const void *)fib, (void **)&w[base][i]))
			return (void *)1;
	}
	for (int i = 0; i < PER_THREAD; i++)
		if (w[base][i](10) != 55)
			return (void *)2;
	return NULL;
}

START_TEST(test_wrap_concurrently)
{
	pthread_t t[NTHREADS];

	fib_w = (long (*)(long))wrap("fib", (const void *)fib);
	for (long i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, wrap_many, (void *)i), 0);
	for (int i = 0; i < NTHREADS; i++) {
		void *ret;

		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_ptr_null(ret);
	}
	/* each wrapper called once; the recursion below goes through fib_w */
	ck_assert_uint_eq(calls_of("t0_0"), 1);
	ck_assert_uint_eq(calls_of("t3_199"), 1);
	ck_assert_uint_eq(calls_of("fib"), NTHREADS * PER_THREAD * (fib_calls(10) - 1));
}
END_TEST

/* ---- errno passes through both ways */

static NOINLINE int swap_errno(int e)
{
	int seen = errno;

	errno = e;
	return seen;
}

START_TEST(test_errno)
{
	int (*w)(int) = (int (*)(int))wrap("swap_errno", (const void *)swap_errno);

	errno = 1234;
	ck_assert_int_eq(w(ENOENT), 1234);
	ck_assert_int_eq(errno, ENOENT);
	errno = 0;
	ck_assert_int_eq(w(EAGAIN), 0);
	ck_assert_int_eq(errno, EAGAIN);
}
END_TEST

/* ---- longjmp over thunks */

static jmp_buf jb;
static void (*jump_w)(int);
static long (*outer_w)(long);

static NOINLINE void jump(int v) { longjmp(jb, v); }

static NOINLINE long add1(long x) { return x + 1; }

/* setjmp inside a wrapped function; a deeper wrapped function jumps back */
static NOINLINE long outer(long x)
{
	jmp_buf saved;
	volatile long r = x;

	memcpy(saved, jb, sizeof(jb));
	if (!setjmp(jb))
		jump_w(1);
	memcpy(jb, saved, sizeof(jb));
	return r * 2;
}

START_TEST(test_longjmp)
{
	long (*aw)(long) = (long (*)(long))wrap("add1", (const void *)add1);
	unsigned long calls, unbalanced;
	volatile int i;

	jump_w = (void (*)(int))wrap("jump", (const void *)jump);
	outer_w = (long (*)(long))wrap("outer", (const void *)outer);
	for (i = 0; i < 100; i++)
		if (!setjmp(jb))
			jump_w(i);
	/* the thunks' shadow stack dropped every skipped frame: calls still work */
	ck_assert_int_eq(aw(41), 42);
	ck_assert_int_eq(outer_w(21), 42);
	ck_assert_int_eq(outer_w(5), 10);
	stats_of("jump", &calls, &unbalanced);
	ck_assert_uint_eq(calls, 102);
	ck_assert_uint_eq(unbalanced, 102);     /* no call of jump returned */
	ck_assert_uint_eq(calls_of("add1"), 1);
	ck_assert_uint_eq(calls_of("outer"), 2);
}
END_TEST

/* ---- pthread_exit inside a wrapped function ends the thread cleanly */

static long (*quit_w)(long);

static NOINLINE long quit_at_7(long x)
{
	if (x == 7)
		pthread_exit((void *)-7L);
	return x + 1;
}

static void *call_quit(void *arg)
{
	return (void *)quit_w((long)arg);
}

START_TEST(test_pthread_exit)
{
	unsigned long calls, unbalanced;

	quit_w = (long (*)(long))wrap("quit_at_7", (const void *)quit_at_7);
	for (long i = 5; i < 9; i++) {
		pthread_t t;
		void *ret;

		ck_assert_int_eq(pthread_create(&t, NULL, call_quit, (void *)i), 0);
		ck_assert_int_eq(pthread_join(t, &ret), 0);
		ck_assert_int_eq((long)ret, i == 7 ? -7 : i + 1);
	}
	stats_of("quit_at_7", &calls, &unbalanced);
	ck_assert_uint_eq(calls, 4);
	ck_assert_uint_eq(unbalanced, 1);   /* the call the thread never returned from */
}
END_TEST

/* ---- a signal handler on an alternate stack calls wrapped functions */

static long (*add1_w)(long);
static volatile long handler_sum;

static void on_signal(int sig)
{
	(void)sig;
	for (int i = 0; i < 10; i++)
		handler_sum += add1_w(i);
}

static NOINLINE long raise_inside(long x)
{
	raise(SIGUSR1);
	return x * 3;
}

START_TEST(test_signal_altstack)
{
	long (*rw)(long) = (long (*)(long))wrap("raise_inside", (const void *)raise_inside);
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_ONSTACK };
	stack_t ss = { .ss_size = 1 << 16 };

	add1_w = (long (*)(long))wrap("add1", (const void *)add1);
	ss.ss_sp = malloc(ss.ss_size);
	ck_assert_ptr_nonnull(ss.ss_sp);
	ck_assert_int_eq(sigaltstack(&ss, NULL), 0);
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	ck_assert_int_eq(rw(14), 42);
	ck_assert_int_eq(rw(1), 3);
	ck_assert_int_eq(handler_sum, 2 * 55);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	ck_assert_uint_eq(calls_of("add1"), 20);
	ck_assert_uint_eq(calls_of("raise_inside"), 2);
	free(ss.ss_sp);
}
END_TEST

/* ---- more thunks than fit one page: the pool grows, older stubs keep working */

START_TEST(test_many_thunks)
{
	enum { N = 600 };
	static long (*w[N])(long);
	char name[32];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "add1_%d", i);
		w[i] = (long (*)(long))wrap(name, (const void *)add1);
	}
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(w[i](i), i + 1);
	ck_assert_int_eq(w[0](-1), 0);
	ck_assert_uint_eq(calls_of("add1_0"), 2);
	ck_assert_uint_eq(calls_of("add1_599"), 1);
}
END_TEST

/* ---- nothing records: the stub goes straight to the function */

START_TEST(test_recording_off)
{
	typedef long ints8_fn(long, long, long, long, long, long, long, long);
	ints8_fn *iw;
	double (*vw)(int, ...);
	char path[64];

	teardown();
	open_session(JITPERF_PERFMAP);
	ck_assert_uint_eq(jitperf_outputs(jp) & (JITPERF_TRACE | JITPERF_STATS), 0);
	iw = (ints8_fn *)wrap("ints8", (const void *)ints8);
	vw = (double (*)(int, ...))wrap("vmix", (const void *)vmix);
	fib_w = (long (*)(long))wrap("fib", (const void *)fib);
	ck_assert_int_eq(iw(1, 2, 3, 4, 5, 6, 7, 8), ints8(1, 2, 3, 4, 5, 6, 7, 8));
	ck_assert(vw(20, 1L, 2.5, 3L, 4.5, 5L, 6.5, 7L, 8.5, 9L, 10.5, 11L, 12.5, 13L,
		     14.5, 15L, 16.5, 17L, 18.5, 19L, 20.5) ==
		  vmix(20, 1L, 2.5, 3L, 4.5, 5L, 6.5, 7L, 8.5, 9L, 10.5, 11L, 12.5, 13L,
		       14.5, 15L, 16.5, 17L, 18.5, 19L, 20.5));
	ck_assert_int_eq(fib_w(20), 6765);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
}
END_TEST

/* ---- no memory for a thread's shadow stack: the call still runs, unrecorded */

static void *limited_thread(void *arg)
{
	struct rlimit rl;
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	(void)arg;
	if (!f || fscanf(f, "%lu", &pages) != 1 || getrlimit(RLIMIT_AS, &rl) != 0)
		return (void *)-1L;
	fclose(f);
	/* no new mapping from here on: the thread's first thunk call cannot
	 * map its shadow stack */
	rl.rlim_cur = pages * (unsigned long)sysconf(_SC_PAGESIZE);
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		return (void *)-1L;
	return (void *)add1_w(41);
}

START_TEST(test_no_memory)
{
	const char *preload = getenv("LD_PRELOAD");
	pid_t pid;
	int status;

	/* valgrind and the sanitizers map memory of their own at every turn */
	if ((preload && strstr(preload, "vgpreload")) || sanitized())
		return;
	add1_w = (long (*)(long))wrap("add1", (const void *)add1);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		pthread_t t;
		void *ret = NULL;

		if (pthread_create(&t, NULL, limited_thread, NULL) != 0 ||
		    pthread_join(t, &ret) != 0)
			_exit(2);
		_exit((long)ret == 42 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child status %#x: the unrecorded call failed", status);
}
END_TEST

/* ---- Errors */

START_TEST(test_errors)
{
	jitperf_fn id = jitperf_fn_register(jp, "add1", (const void *)add1, 1);
	void *w = NULL;

	ck_assert_uint_ne(id, 0);
	/* NULL is the default session, which has no function id */
	ck_assert_int_eq(jitperf_wrap(NULL, id, (const void *)add1, &w), -EINVAL);
	ck_assert_int_eq(jitperf_wrap(jp, 0, (const void *)add1, &w), -EINVAL);
	ck_assert_int_eq(jitperf_wrap(jp, id + 1000, (const void *)add1, &w), -EINVAL);
	ck_assert_int_eq(jitperf_wrap(jp, id, NULL, &w), -EINVAL);
	ck_assert_int_eq(jitperf_wrap(jp, id, (const void *)add1, NULL), -EINVAL);
	ck_assert_ptr_null(w);
}
END_TEST

/* ---- perf sees the thunk as "wrap:<name>" */

START_TEST(test_perf_map)
{
	char path[64], line[256], want[128];
	void *w;
	FILE *f;
	int found = 0;

	teardown();
	open_session(JITPERF_PERFMAP | JITPERF_STATS);
	w = wrap("answer", (const void *)add1);
	ck_assert_int_eq(((long (*)(long))w)(1), 2);
	snprintf(want, sizeof(want), "%lx " STUB_HEX " wrap:answer\n", (unsigned long)(uintptr_t)w);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	/* the map's last line has no newline while the session writes it (its
	 * grown tail of zeros follows): compare up to the newline */
	while (fgets(line, sizeof(line), f))
		found |= strncmp(line, want, strlen(want) - 1) == 0 &&
			 (line[strlen(want) - 1] == '\n' || line[strlen(want) - 1] == 0);
	fclose(f);
	unlink(path);
	ck_assert_msg(found, "no line \"%.*s\" in %s", (int)strlen(want) - 1, want, path);
}
END_TEST

/* ---- no thunk generator for this architecture */

#ifndef HAVE_THUNKS
START_TEST(test_unsupported)
{
	jitperf_fn id = jitperf_fn_register(jp, "add1", (const void *)add1, 1);
	void *w = NULL;

	ck_assert_uint_ne(id, 0);
	ck_assert_int_eq(jitperf_wrap(jp, id, (const void *)add1, &w), -EOPNOTSUPP);
	ck_assert_ptr_null(w);
}
END_TEST
#endif

static Suite *wrap_suite(void)
{
	Suite *s = suite_create("jitperf_wrap");
	TCase *tc;

#ifndef HAVE_THUNKS
	tc = tcase_create("Unsupported architecture");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_unsupported);
	suite_add_tcase(s, tc);
	return s;
#endif

	tc = tcase_create("Arguments and results");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_int_fp_stack_args);
	tcase_add_test(tc, test_struct_results);
	tcase_add_test(tc, test_varargs);
#if defined(HAVE_THUNKS) && defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx"))
		tcase_add_test(tc, test_avx_args);
	if (__builtin_cpu_supports("avx512f"))
		tcase_add_test(tc, test_avx512_args);
#elif defined(HAVE_THUNKS) && defined(__aarch64__)
	tcase_add_test(tc, test_neon_args);
#endif
	suite_add_tcase(s, tc);

	tc = tcase_create("Recursion and threads");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_recursion);
	tcase_add_test(tc, test_deep_recursion);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_wrap_concurrently);
	suite_add_tcase(s, tc);

	tc = tcase_create("Program state");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_errno);
	tcase_add_test(tc, test_longjmp);
	tcase_add_test(tc, test_signal_altstack);
	tcase_add_test(tc, test_pthread_exit);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors, perf map, stub pool, recording off");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_many_thunks);
	tcase_add_test(tc, test_perf_map);
	tcase_add_test(tc, test_recording_off);
	tcase_add_test(tc, test_no_memory);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(wrap_suite());
}
