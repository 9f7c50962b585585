/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parts of `jitperf dump` (dump.c, check.c, elfwrite.c, tiers.c). */
#ifndef JITPERF_DUMP_H
#define JITPERF_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct jd_file;

/* Report what perf inject --jit rejects or drops; 0 if clean, 1 if not. */
int jd_check(struct jd_file *f, FILE *out);
/* Write each CODE_LOAD as an ELF file in dir; 0 or 1 (message printed). */
int jd_write_elfs(struct jd_file *f, const char *dir);

/* Whether path is a tiers file (jitperf-tiers(5)); print its records: 0, or 1 (message said). */
int jd_is_tiers(const char *path);
int jd_dump_tiers(const char *path);

const char *jd_machine_name(uint32_t e_machine);
void jd_print_name(FILE *out, const char *s);
/* The same into buf (truncated to len), for messages; returns buf. */
const char *jd_quote(const char *s, char *buf, size_t len);

#endif
