/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiered JIT's calls in a known order, for tests/cmd/dump-tiers.test:
 * tier 1 called "opt", a request, a compile of sum with a failed nested
 * compile, its code installed, then the end.  Prints its pid.  With
 * --kill it then begins another compile and is killed by SIGKILL in it.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jitperf.h"

static const unsigned char code[16] = { 0xc3 };

int main(int argc, char **argv)
{
	jitperf *jp = jitperf_default();
	struct jitperf_code c = { .size = sizeof(c), .addr = code, .len = sizeof(code) };
	uint64_t sum, inl;

	if (jitperf_tier_name(jp, 1, "opt") || jitperf_tier_request(jp, "sum", 1) ||
	    jitperf_compile_begin(jp, "sum", 1, &sum) ||
	    jitperf_compile_begin(jp, "inlined", 0, &inl) ||
	    jitperf_compile_end(jp, inl, -ECANCELED))
		return 1;
	c.compile = sum;
	if (jitperf_code_load_ex(jp, &c, NULL) || jitperf_compile_end(jp, sum, 0))
		return 1;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "--kill")) {
		uint64_t open;

		if (jitperf_compile_begin(jp, "open", 1, &open))
			return 1;
		raise(SIGKILL);
	}
	return jitperf_close(jp) ? 1 : 0;
}
