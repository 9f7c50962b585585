/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The subcommands of jitperf (tools/record.c, report.c, dump/, convert/)
 * and the conventions they share.
 *
 * Errors: every function of the command returns 0 or a negative errno.
 * The function that knows the file and what is wrong with it says so,
 * once, in one line on standard error (cmd_err: "jitperf record: FILE:
 * what"); its callers pass the code up without printing again.  A
 * subcommand has one exit, where it turns the outcome into the status:
 * 2 bad usage, 1 failure, 127 a program not found, or for record the
 * recorded command's own.  The readers of read/ never print: they fill
 * the caller's buffer (errbuf, errlen) with that line.
 */
#ifndef JITPERF_CMDS_H
#define JITPERF_CMDS_H

#include <stdio.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_dump(int argc, char **argv);

/* "jitperf record", ...: set by the dispatcher, the prefix of every message */
extern const char *cmd_name;

/* One line on stderr: "<cmd_name>: <message>\n". */
void cmd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
