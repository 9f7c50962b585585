/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The subcommands of jitperf (tools/record/, report/, dump/, convert/, inject/)
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

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_inject(int argc, char **argv);

/* "jitperf record", ...: set by the dispatcher, the prefix of every message */
extern const char *cmd_name;

/* "260 KiB", "32.0 MiB", "4 GiB": bytes in buf, which it returns. */
const char *cmd_size_text(uint64_t bytes, char *buf, size_t len);

/* One line on stderr: "<cmd_name>: <message>\n". */
void cmd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A bad option: getopt_long, with opterr = 0 and an option string that
 * starts with ':', returned c ('?' unknown, ':' argument missing).  One
 * line naming it (getopt's own would be prefixed with the bare subcommand
 * name), one pointing at --help; returns the usage status, 2.
 */
int cmd_bad_option(int c, char **argv);

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
