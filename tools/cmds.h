/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The subcommands of jitperf: one file each (tools/<name>.c). */
#ifndef JITPERF_CMDS_H
#define JITPERF_CMDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_dump(int argc, char **argv);

#endif
