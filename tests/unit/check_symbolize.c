/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sym_native_name: "@native:<module>+0x<ELF address>" names of this
 * very program and of the C library come back as "function (file.c:line)",
 * and bad names come back unchanged with an error.
 */
#include "config.h"

#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/symbolize.h"
#include "tests/check-subr.h"

/* the line of the function's name, which DWARF records as its declaration */
static const int marker_line = __LINE__ + 2;
static __attribute__((noinline, used)) int
marker_function(int x)
{
	return x * 7;
}

/* the @native name libjitperf-cyg would record for addr */
static void native_name(const void *addr, char *buf, size_t len)
{
	Dl_info info;
	struct link_map *map = NULL;
	char exe[4096];
	const char *path;
	ssize_t n;

	ck_assert(dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP) && map);
	path = map->l_name;
	if (!path || !path[0]) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		ck_assert_int_gt(n, 0);
		exe[n] = '\0';
		path = exe;
	}
	snprintf(buf, len, "@native:%s+0x%lx", path,
		 (unsigned long)((uintptr_t)addr - map->l_addr));
}

START_TEST(test_own_function)
{
	char name[4200], out[256], want[64];

	native_name((const void *)marker_function, name, sizeof(name));
	ck_assert_int_eq(sym_native_name(name, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "marker_function (check_symbolize.c:%d)", marker_line);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(marker_function(6), 42);
	/* the same module again comes from the cache, same answer */
	ck_assert_int_eq(sym_native_name(name, out, sizeof(out)), 0);
	ck_assert_str_eq(out, want);
}
END_TEST

START_TEST(test_inside_function)
{
	char name[4200], out[256];

	native_name((const char *)marker_function + 1, name, sizeof(name));
	ck_assert_int_eq(sym_native_name(name, out, sizeof(out)), 0);
	ck_assert_msg(strncmp(out, "marker_function+0x1", 19) == 0, "got %s", out);
}
END_TEST

START_TEST(test_shared_library)
{
	char name[4200], out[256];
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *fn = libc ? dlsym(libc, "qsort") : NULL;

	ck_assert_ptr_nonnull(fn);
	native_name(fn, name, sizeof(name));
	ck_assert_int_eq(sym_native_name(name, out, sizeof(out)), 0);
	/* the dynamic symbol table names it even without debug information */
	ck_assert_msg(strncmp(out, "qsort", 5) == 0 && (out[5] == '\0' || out[5] == ' '),
		      "%s symbolized as %s", name, out);
	dlclose(libc);
}
END_TEST

/* the line of an address from the line table: the function's first line */
START_TEST(test_source_line)
{
	char name[4200], file[1024];
	const char *plus;
	int line = 0;

	native_name((const void *)marker_function, name, sizeof(name));
	plus = strrchr(name, '+');
	*(char *)plus = 0;
	ck_assert_int_eq(sym_source_line(name + strlen(SYM_NATIVE_PREFIX), strtoull(plus + 1, NULL, 16),
					file, sizeof(file), &line), 0);
	ck_assert_msg(strstr(file, "check_symbolize.c"), "%s", file);
	ck_assert_int_ge(line, marker_line);
	ck_assert_int_le(line, marker_line + 2);
	ck_assert_int_eq(sym_source_line("/nonexistent", 0x10, file, sizeof(file), &line), -ENOENT);
}
END_TEST

START_TEST(test_bad_names)
{
	static const struct { const char *name; int err; } cases[] = {
		{ "fib", -EINVAL },
		{ "@native:", -EINVAL },
		{ "@native:/bin/sh", -EINVAL },
		{ "@native:+0x10", -EINVAL },
		{ "@native:/bin/sh+0x", -EINVAL },
		{ "@native:/bin/sh+0xzz", -EINVAL },
		{ "@native:/nonexistent/module+0x1000", -ENOENT },
		{ "@native:/proc/self/status+0x10", -ENOENT },
	};
	char out[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(sym_native_name(cases[i].name, out, sizeof(out)), cases[i].err);
		ck_assert_str_eq(out, cases[i].name);   /* the raw name is kept */
	}
	ck_assert_int_eq(sym_native_name(NULL, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(sym_native_name("x", NULL, 0), -EINVAL);
}
END_TEST

START_TEST(test_short_buffer)
{
	char name[4200], out[8];

	native_name((const void *)marker_function, name, sizeof(name));
	ck_assert_int_eq(sym_native_name(name, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "marker_");       /* truncated, still terminated */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("Symbolizer");
	TCase *tc = tcase_create("Native names");

	tcase_add_test(tc, test_own_function);
	tcase_add_test(tc, test_inside_function);
	tcase_add_test(tc, test_shared_library);
	suite_add_tcase(s, tc);
	tc = tcase_create("Bad input");
	tcase_add_test(tc, test_source_line);
	tcase_add_test(tc, test_bad_names);
	tcase_add_test(tc, test_short_buffer);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
