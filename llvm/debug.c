/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Diagnostics of libjitperf-llvm: on stderr, only when JITPERF_DEBUG is set. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llvm/llvm.h"

void jpl_debug(const char *fmt, ...)
{
	const char *v = getenv("JITPERF_DEBUG");
	va_list ap;

	if (!v || !*v || !strcmp(v, "0"))
		return;
	va_start(ap, fmt);
	fputs("jitperf-llvm: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
