/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf - the command.  Dispatches to one function per subcommand, as
 * perf's perf.c does; each lives in tools/<name>.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd cmds[] = {
	{ "record",  cmd_record,  "run a command under perf with JIT code made visible" },
	{ "report",  cmd_report,  "where the time went, per JIT function" },
	{ "inject",  cmd_inject,  "add the JIT code of jitdumps and perf maps to perf.data" },
	{ "dump",    cmd_dump,    "print and check a jitdump file, write its functions as ELF" },
	{ "convert", cmd_convert, "perf samples and traced calls to Chrome trace, folded stacks, SVG, pprof" },
	{ NULL, NULL, NULL },
};

/* Run one subcommand with its messages named after it. */
static int run_cmd(const struct cmd *c, int argc, char **argv)
{
	static char name[32];

	snprintf(name, sizeof(name), "jitperf %s", c->name);
	cmd_name = name;
	return c->fn(argc, argv);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: jitperf COMMAND [ARGS]\n\ncommands:\n");
	for (const struct cmd *c = cmds; c->name; c++)
		fprintf(out, "  %-8s %s\n", c->name, c->summary);
	fprintf(out, "\n'jitperf help COMMAND' or 'jitperf COMMAND --help' for details;"
		" man jitperf-COMMAND for the whole story.\n");
}

static const struct cmd *find(const char *name)
{
	for (const struct cmd *c = cmds; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/*
 * A full disk on stdout is an error, not a silent cut.  A command that
 * failed has said why already.
 */
static int finish(int ret)
{
	if (ret || (fflush(stdout) == 0 && !ferror(stdout)))
		return ret;
	fprintf(stderr, "jitperf: standard output: %s\n", strerror(errno ? errno : EIO));
	return 1;
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return finish(0);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("jitperf %s\n", PACKAGE_VERSION);
		return finish(0);
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return finish(0);
		}
		c = find(argv[2]);
		if (!c) {
			fprintf(stderr, "jitperf: '%s' is not a jitperf command\n", argv[2]);
			return 2;
		}
		char *help_argv[] = { argv[2], (char *)"--help", NULL };
		return finish(run_cmd(c, 2, help_argv));
	}
	c = find(argv[1]);
	if (!c) {
		fprintf(stderr, "jitperf: '%s' is not a jitperf command; see 'jitperf --help'\n", argv[1]);
		return 2;
	}
	return finish(run_cmd(c, argc - 1, argv + 1));
}
