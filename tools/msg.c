/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The command's one-line messages (the convention is in tools/cmds.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "cmds.h"

const char *cmd_name = "jitperf";

void cmd_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
