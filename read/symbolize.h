/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Symbolization of native functions recorded by libjitperf-cyg.  Internal to
 * libjitperf-read.la.  The trace reader (read/trace_read.c) calls this for
 * every function whose name starts with "@native:" ("@native:<module
 * path>+0x<offset>") when it opens a trace, and shows what it returns.
 */
#ifndef JITPERF_SYMBOLIZE_H
#define JITPERF_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#define SYM_NATIVE_PREFIX "@native:"

/*
 * Write a readable name for name into out (outlen bytes, NUL-terminated):
 * "function (file.c:line)", "function", or name itself when nothing better
 * is known.  Returns 0, or a negative errno (out then holds name).
 */
int sym_native_name(const char *name, char *out, size_t outlen);

/*
 * The source file and line of addr (an ELF address of module, as addr2line
 * takes it) from its DWARF line table: 0, or -ENOENT when it has none.
 * Modules are opened once and kept, as for sym_native_name.
 */
int sym_source_line(const char *module, uint64_t addr, char *file, size_t filelen, int *line);

#endif /* JITPERF_SYMBOLIZE_H */
