/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Names as jitperf dump prints them (tools/dump/dump.h): machines, and
 * names from a file with their bytes escaped.  Below dump.c, check.c and
 * tiers.c, which all print them.
 */
#include "config.h"

#include <ctype.h>
#include <elf.h>
#include <stdio.h>

#include "dump.h"

const char *jd_machine_name(uint32_t m)
{
	switch (m) {
	case EM_386:     return "i386";
	case EM_X86_64:  return "x86-64";
	case EM_ARM:     return "arm";
	case EM_AARCH64: return "aarch64";
	case EM_PPC:     return "ppc";
	case EM_PPC64:   return "ppc64";
	case EM_S390:    return "s390";
	case EM_RISCV:   return "riscv";
	case EM_MIPS:    return "mips";
	case EM_SPARCV9: return "sparcv9";
#ifdef EM_LOONGARCH
	case EM_LOONGARCH: return "loongarch";
#endif
	case EM_NONE:    return "none";
	default:         return "unknown";
	}
}

/* Print a name from the file with control and non-ASCII bytes escaped. */
void jd_print_name(FILE *out, const char *s)
{
	putc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (isprint(*p))
			putc(*p, out);
		else
			fprintf(out, "\\x%02x", *p);
	}
	putc('"', out);
}

const char *jd_quote(const char *s, char *buf, size_t len)
{
	FILE *fp = fmemopen(buf, len, "w");

	if (!fp)
		return "\"?\"";
	setbuf(fp, NULL);
	jd_print_name(fp, s);
	fclose(fp);
	buf[len - 1] = '\0';  /* a full buffer gets no NUL from fmemopen */
	return buf;
}
