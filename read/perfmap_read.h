/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader of perf maps, /tmp/perf-<pid>.map as any JIT writes them
 * (libjitperf, V8's --perf-basic-prof, the JVM's DumpPerfMapAtExit and
 * perf-map-agent, CPython's -X perf, .NET, ...): one "START SIZE name"
 * line per function, START and SIZE in hex with or without "0x".  A line
 * is read as perf 6.1 reads it: one separator after each number, the name
 * is the rest of the line; lines perf would skip are skipped and counted.
 */
#ifndef JITPERF_PERFMAP_READ_H
#define JITPERF_PERFMAP_READ_H

#include <stddef.h>
#include <stdint.h>

struct pm_sym {
	uint64_t    start, size;
	const char *name;
	size_t      line;           /* 1-based line of the map */
};

struct pm_map {
	struct pm_sym *syms;        /* sorted by start, then by line */
	size_t         nsyms;
	size_t         skipped;     /* lines perf would skip (no size, no name) */
	char          *names;       /* the names, one arena */
};

/*
 * Read a perf map.  A last line without its newline (a map still being
 * written) is read like the others.  0, or a negative errno with one line
 * in errbuf naming the file.
 */
int pm_read(const char *path, struct pm_map **out, char *errbuf, size_t errlen);
void pm_free(struct pm_map *m);

/*
 * The function at addr: of the symbols starting nearest below or at addr,
 * the one on the latest line (code written over old code at the same
 * address replaces it), if it covers addr.  NULL if none does.
 */
const struct pm_sym *pm_find(const struct pm_map *m, uint64_t addr);

#endif /* JITPERF_PERFMAP_READ_H */
