/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The subcommands of jitperf: one file each (tools/<name>.c). */
#ifndef JITPERF_CMDS_H
#define JITPERF_CMDS_H

#include <stdio.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_dump(int argc, char **argv);

/*
 * The last case of every subcommand's option loop: -h/--help (asked)
 * prints the usage on stdout and succeeds; a bad option prints it on
 * stderr, status 2.
 */
static inline int cmd_usage(const char *text, int asked)
{
	fputs(text, asked ? stdout : stderr);
	return asked ? 0 : 2;
}

#endif
