/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * On-disk layout of perf's jitdump format, version 1
 * (tools/perf/Documentation/jitdump-specification.txt in the Linux tree).
 * Shared by the writer (lib/jitdump.c) and the reader (read/jitdump_read.c).  Internal.
 * All fields are in the byte order of the writing host; a reader detects
 * the other order by the byte-swapped magic.
 */
#ifndef JITPERF_FORMAT_JITDUMP_H
#define JITPERF_FORMAT_JITDUMP_H

#include <stdint.h>

#define JITDUMP_MAGIC            0x4A695444u   /* "JiTD" read as a host u32 */
#define JITDUMP_MAGIC_SWAPPED    0x4454694Au
#define JITDUMP_VERSION          1u
#define JITDUMP_FLAGS_ARCH_TIMESTAMP (1ULL << 0)

struct jitdump_file_header {
	uint32_t magic;
	uint32_t version;
	uint32_t total_size;    /* of this header: 40 */
	uint32_t elf_mach;      /* e_machine of the running executable */
	uint32_t pad1;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;
};

enum jitdump_record_type {
	JIT_CODE_LOAD           = 0,
	JIT_CODE_MOVE           = 1,
	JIT_CODE_DEBUG_INFO     = 2,
	JIT_CODE_CLOSE          = 3,
	JIT_CODE_UNWINDING_INFO = 4,
	JIT_CODE_MAX,
};

struct jitdump_record_header {
	uint32_t id;
	uint32_t total_size;    /* of the whole record, header included */
	uint64_t timestamp;
};

struct jitdump_code_load {      /* followed by name (NUL-terminated), then code bytes */
	struct jitdump_record_header p;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;
	uint64_t code_addr;
	uint64_t code_size;
	uint64_t code_index;
};

struct jitdump_code_move {
	struct jitdump_record_header p;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;
	uint64_t old_code_addr;
	uint64_t new_code_addr;
	uint64_t code_size;
	uint64_t code_index;
};

struct jitdump_debug_entry {    /* followed by the file name, NUL-terminated */
	uint64_t addr;
	uint32_t lineno;
	uint32_t discrim;
};

struct jitdump_debug_info {     /* followed by nr_entry debug entries */
	struct jitdump_record_header p;
	uint64_t code_addr;
	uint64_t nr_entry;
};

struct jitdump_unwinding_info { /* followed by unwinding_size bytes: .eh_frame then .eh_frame_hdr */
	struct jitdump_record_header p;
	uint64_t unwinding_size;
	uint64_t eh_frame_hdr_size;
	uint64_t mapped_size;
};

#endif /* JITPERF_FORMAT_JITDUMP_H */
