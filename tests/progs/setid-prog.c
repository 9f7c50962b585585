/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * setid-prog DIR: what libjitperf takes from the environment of the
 * program it runs in, for tests/lib/setid-env.test (run set-group-ID and not).
 * Prints, one per line:
 *   secure N      the kernel's AT_SECURE (1: a set-ID exec)
 *   default N     jitperf_outputs(jitperf_default()): JITPERF's bits
 *   options E     jitperf_open({jitdump, DIR}) + one load + close: 0 or -errno
 *   nodir E       the same with dir NULL ($JITPERF_DIR, else ".")
 */
#include "config.h"

#include <stdio.h>
#include <sys/auxv.h>

#include "jitperf.h"

static const unsigned char code[16];

/*
 * Sanitizer builds: LeakSanitizer cannot inspect a set-ID process (it is not
 * dumpable) and the runtime ignores ASAN_OPTIONS there, so the program says
 * it itself.  Unused elsewhere.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* A session writing a jitdump into dir, with one function in it. */
static int one_session(const char *dir)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_JITDUMP, .dir = dir };
	jitperf *jp;
	int err, err2;

	err = jitperf_open(&jp, &o);
	if (err)
		return err;
	err = jitperf_code_load(jp, "setid_fn", code, sizeof(code), NULL);
	err2 = jitperf_close(jp);
	return err ? err : err2;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: setid-prog DIR\n");
		return 2;
	}
	printf("secure %lu\n", getauxval(AT_SECURE));
	printf("default %u\n", jitperf_outputs(jitperf_default()));
	printf("options %d\n", one_session(argv[1]));
	printf("nodir %d\n", one_session(NULL));
	return 0;
}
