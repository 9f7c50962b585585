/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf inject [-i perf.data] [-o perf.jit.data]: perf inject --jit's
 * job, with a few code images instead of one ELF file per function
 * (tools/inject/inject.c, doc/inject.md).  Input in pipe mode, or on
 * standard input, becomes a file-mode perf.data first (pipein.c).
 */
#include "config.h"

#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inject.h"
#include "pipein.h"
#include "tools/cmds.h"

static const char usage_text[] =
	"usage: jitperf inject [-i perf.data] [-o perf.jit.data]\n"
	"\n"
	"Make the JIT code of a recording visible to perf, as perf inject --jit does:\n"
	"read INPUT and every jitdump its processes mapped (jit-PID.dump, from\n"
	"libjitperf, V8 --perf-prof, BEAM +JPperf, the JVM agent, ...) and write\n"
	"OUTPUT with an mmap event for each function loaded or moved.  The events\n"
	"point into a few code images per jitdump (jitimage-PID-N.so, written\n"
	"beside OUTPUT): ELF files with many functions' code, symbols, source lines\n"
	"and unwind tables, whose build-ids OUTPUT names.  perf report, annotate and\n"
	"script read OUTPUT as they read perf inject's.  A process with a perf map\n"
	"and no jitdump (node --perf-basic-prof, java, dotnet) gets its map's symbols\n"
	"the same way, from perf-PID.map beside INPUT or in /tmp: perf then names\n"
	"its code without the map.\n"
	"\n"
	"INPUT may be in pipe mode (perf record -o -), in a file or on standard\n"
	"input: perf record -o - -k 1 -- COMMAND | jitperf inject -o OUTPUT.  It is\n"
	"then copied into a file-mode perf.data beside OUTPUT first, removed at\n"
	"the end; jitdumps and perf maps not at the path a recording names are\n"
	"looked for beside OUTPUT.\n"
	"\n"
	"  -i, --input FILE    the recording; - for standard input (default\n"
	"                      perf.data, or standard input when it is a pipe)\n"
	"  -o, --output FILE   where to write (default perf.jit.data); written to a\n"
	"                      temporary file renamed into place at the end\n"
	"  -h, --help          show this help\n";

int cmd_inject(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input",  required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "help",   no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = NULL, *out = "perf.jit.data";
	char *copy, *dir, *tmp = NULL;
	struct stat st;
	int c, err;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			in = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			return cmd_usage(usage_text, 1);
		default:
			return cmd_bad_option(c, argv);
		}
	}
	if (optind < argc) {
		cmd_err("unexpected argument '%s'", argv[optind]);
		return cmd_usage(usage_text, 0);
	}
	/* as perf report and perf inject: standard input when it is a pipe */
	if (!in)
		in = !fstat(0, &st) && S_ISFIFO(st.st_mode) ? "-" : "perf.data";
	copy = strdup(out);
	if (!copy)
		return 1;
	dir = dirname(copy);
	err = ij_pipein(in, dir, &tmp);
	err = err ?: ij_inject(tmp ? tmp : in, out, dir);
	ij_pipein_done(tmp);
	free(copy);
	return err ? 1 : 0;
}
