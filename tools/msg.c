/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The command's one-line messages (the convention is in tools/cmds.h). */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
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

const char *cmd_size_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 1u << 30 && bytes % (1u << 30) == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(bytes >> 30));
	else if (bytes >= 1u << 20)
		snprintf(buf, len, "%.1f MiB", (double)bytes / 1048576.0);
	else
		snprintf(buf, len, "%.0f KiB", (double)bytes / 1024.0);
	return buf;
}

int cmd_bad_option(int c, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		cmd_err("option '%s' needs an argument", arg);
	else if (optopt && arg[0] == '-' && arg[1] != '-')
		cmd_err("unknown option '-%c'", optopt);
	else
		cmd_err("unknown option '%s'", arg);
	fprintf(stderr, "see '%s --help'\n", cmd_name);
	return 2;
}
