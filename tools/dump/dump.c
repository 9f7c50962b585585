/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf dump: print every record of a jitdump file (any emitter),
 * check it the way perf inject --jit reads it (--check, tools/dump/check.c),
 * or write each function as an ELF file (--elf, tools/dump/elfwrite.c).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cmds.h"
#include "dump.h"
#include "read/jitdump_read.h"

static const char usage_text[] =
	"usage: jitperf dump FILE.dump [--check] [--elf DIR]\n"
	"       jitperf dump FILE.tiers\n"
	"\n"
	"Print every record of a jitdump file (from jitperf, the Java agent, V8,\n"
	"LLVM, QEMU, ...): the header, then per record its offset, type,\n"
	"timestamp and decoded fields.  A tiers file (the tier and compile events\n"
	"libjitperf writes beside its jitdump) is printed the same way.\n"
	"\n"
	"  -c, --check     report, with record offsets, what perf inject --jit would\n"
	"                  reject or silently drop; exit 1 if anything is wrong\n"
	"  -E, --elf DIR   write each function as DIR/INDEX-NAME.elf (code at its\n"
	"                  run-time address, with its symbol) for objdump -d and gdb\n"
	"  -h, --help      show this help\n";

static void print_header(const struct jd_file *f)
{
	const struct jitdump_file_header *h = jd_header(f);

	printf("%s: jitdump version %" PRIu32 ", %s byte order\n", jd_path(f), h->version,
	       jd_swapped(f) ? "foreign" : "native");
	printf("header: total_size %" PRIu32 " elf_mach %" PRIu32 " (%s) pid %" PRIu32
	       " timestamp %" PRIu64 " flags 0x%" PRIx64 "%s\n",
	       h->total_size, h->elf_mach, jd_machine_name(h->elf_mach), h->pid,
	       h->timestamp, h->flags,
	       h->flags & JITDUMP_FLAGS_ARCH_TIMESTAMP ? " (arch timestamp)" : "");
}

static int print_debug(const struct jd_file *f, const struct jd_record *rec,
		       char *err, size_t errlen)
{
	struct jd_debug_iter it;
	struct jd_debug_entry e;
	uint64_t code_addr, nr;
	int r;

	if (jd_debug_info(f, rec, &code_addr, &nr, &it))
		return -EINVAL;
	printf(" code_addr 0x%" PRIx64 " nr_entry %" PRIu64 "\n", code_addr, nr);
	while ((r = jd_debug_next(&it, &e, err, errlen)) == 1) {
		printf("    0x%" PRIx64 " line %" PRIu32 " discrim %" PRIu32 " file ",
		       e.addr, e.lineno, e.discrim);
		jd_print_name(stdout, e.file);
		putchar('\n');
	}
	return r;
}

static int print_record(const struct jd_file *f, const struct jd_record *rec,
			char *err, size_t errlen)
{
	const char *type = jd_type_name(rec->id);
	struct jd_unwinding u;

	if (type)
		printf("%8" PRIu64 " %-14s ts %" PRIu64, rec->offset, type, rec->timestamp);
	else
		printf("%8" PRIu64 " unknown type %" PRIu32 " ts %" PRIu64 " total_size %" PRIu32 "\n",
		       rec->offset, rec->id, rec->timestamp, rec->total_size);
	switch (rec->id) {
	case JIT_CODE_LOAD:
		printf(" pid %" PRIu32 " tid %" PRIu32 " vma 0x%" PRIx64 " code_addr 0x%" PRIx64
		       " size %" PRIu64 " index %" PRIu64 " name ", rec->pid, rec->tid, rec->vma,
		       rec->code_addr, rec->code_size, rec->code_index);
		jd_print_name(stdout, rec->name);
		putchar('\n');
		return 0;
	case JIT_CODE_MOVE:
		printf(" pid %" PRIu32 " tid %" PRIu32 " vma 0x%" PRIx64 " old_code_addr 0x%" PRIx64
		       " new_code_addr 0x%" PRIx64 " size %" PRIu64 " index %" PRIu64 "\n",
		       rec->pid, rec->tid, rec->vma, rec->code_addr, rec->new_code_addr,
		       rec->code_size, rec->code_index);
		return 0;
	case JIT_CODE_DEBUG_INFO:
		return print_debug(f, rec, err, errlen);
	case JIT_CODE_UNWINDING_INFO:
		if (jd_unwinding_info(f, rec, &u, err, errlen)) {
			putchar('\n');
			return -EINVAL;
		}
		printf(" unwinding_size %" PRIu64 " eh_frame_hdr_size %" PRIu64
		       " mapped_size %" PRIu64 "\n", u.unwinding_size, u.eh_frame_hdr_size,
		       u.mapped_size);
		return 0;
	case JIT_CODE_CLOSE:
		putchar('\n');
		return 0;
	default:
		return 0;
	}
}

static int dump_all(struct jd_file *f)
{
	struct jd_record rec;
	char err[512];
	int r;

	print_header(f);
	while ((r = jd_next(f, &rec, err, sizeof(err))) == 1) {
		r = print_record(f, &rec, err, sizeof(err));
		if (r < 0)
			break;
	}
	fflush(stdout);
	if (r < 0) {
		cmd_err("%s", err);
		return 1;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "check", no_argument,       NULL, 'c' },
		{ "elf",   required_argument, NULL, 'E' },
		{ "help",  no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *elfdir = NULL;
	struct jd_file *f;
	char err[512];
	int check = 0, c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":cE:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			check = 1;
			break;
		case 'E':
			elfdir = optarg;
			break;
		case 'h':
			return cmd_usage(usage_text, 1);
		default:
			return cmd_bad_option(c, argv);
		}
	}
	if (optind != argc - 1) {
		cmd_err("%s", optind == argc ? "no jitdump file given" : "only one file at a time");
		fputs(usage_text, stderr);
		return 2;
	}
	if (jd_is_tiers(argv[optind])) {
		if (check || elfdir) {
			cmd_err("%s is a tiers file: --check and --elf take a jitdump", argv[optind]);
			return 2;
		}
		return jd_dump_tiers(argv[optind]);
	}
	if (jd_open(&f, argv[optind], err, sizeof(err))) {
		cmd_err("%s", err);
		return 1;
	}
	if (check)
		ret = jd_check(f, stdout);
	else if (elfdir)
		ret = jd_write_elfs(f, elfdir);
	else
		ret = dump_all(f);
	if (check && elfdir && ret == 0) {
		jd_close(f);
		if (jd_open(&f, argv[optind], err, sizeof(err))) {
			cmd_err("%s", err);
			return 1;
		}
		ret = jd_write_elfs(f, elfdir);
	}
	jd_close(f);
	return ret;
}
