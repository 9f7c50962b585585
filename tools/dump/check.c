/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf dump --check: read a jitdump the way perf inject --jit does
 * (tools/perf/util/jitdump.c) and name every record it would reject or
 * silently drop, or that would leave samples unsymbolized.  What perf 6.1
 * does, in short:
 *  - the file is refused for a bad magic, a version above 1, or flag bits
 *    other than JITDUMP_FLAGS_ARCH_TIMESTAMP;
 *  - records are read at offset 40 whatever the header's total_size says
 *    (a total_size above 80 makes perf refuse the file);
 *  - reading stops silently at a record whose total_size is below 16 or
 *    that runs past the end of the file;
 *  - unknown record types are skipped with a warning;
 *  - DEBUG_INFO and UNWINDING_INFO are held until the next CODE_LOAD and
 *    attached to it; a second one before that load replaces the first;
 *    unwinding data with eh_frame_hdr_size 0 is never released and is
 *    attached to every later load;
 *  - each CODE_LOAD becomes jitted-PID-INDEX.so, so a repeated index
 *    overwrites the earlier function's file;
 *  - the code is the record's last code_size bytes, mapped at code_addr
 *    from the load's timestamp on, which must be on the CLOCK_MONOTONIC
 *    timeline of perf record -k 1 to meet the samples.
 * What perf ignores is a note, not a problem, given once with a count: the
 * header's timestamp (V8 writes microseconds since the epoch there, so
 * every record would seem to come before the header), its elf_mach when 0
 * (perf's images are always of its own machine), records of unknown type.
 * Only problems make the exit status 1.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump.h"
#include "read/jitdump_read.h"

/* e_machine perf writes into its ELF images: that of the machine it runs on. */
#if defined(__x86_64__)
#define HOST_EM EM_X86_64
#elif defined(__i386__)
#define HOST_EM EM_386
#elif defined(__aarch64__)
#define HOST_EM EM_AARCH64
#elif defined(__arm__)
#define HOST_EM EM_ARM
#elif defined(__powerpc64__)
#define HOST_EM EM_PPC64
#elif defined(__s390x__)
#define HOST_EM EM_S390
#elif defined(__riscv)
#define HOST_EM EM_RISCV
#else
#define HOST_EM EM_NONE
#endif

#define SLACK_NS 1000000000ull   /* 1 s: clock reads of writer and checker differ */

struct pending {                 /* a DEBUG_INFO or UNWINDING_INFO awaiting its load */
	int      set;
	uint64_t offset, code_addr;
};

/* Set of the code indexes loaded so far, each with the offset of its load. */
struct index_slot {
	uint64_t index, offset;
	int      used;
};
struct index_set {
	struct index_slot *slots;
	size_t             cap, used;
};

/* What perf ignores: said once at the end, with how often and where first. */
enum note_kind { NOTE_HEADER_CLOCK, NOTE_ELF_MACH, NOTE_BEFORE_HEADER, NOTE_UNKNOWN_TYPE,
		 NOTE_KINDS };
struct note {
	unsigned count;
	uint64_t offset;             /* of the first */
	uint64_t value;              /* of the first: a timestamp, a record type */
};

struct checker {
	const struct jd_file *f;
	FILE                 *out;
	unsigned              problems;
	struct note           notes[NOTE_KINDS];
	int                   hdr_monotonic;    /* the header's timestamp can be compared */
	int                   arch_ts;
	uint64_t              hdr_ts, now, prev_ts;
	struct pending        debug, unwind;
	int                   unwind_sticky;    /* eh_frame_hdr_size 0: perf never drops it */
	struct index_set      loads;
};

static void problem(struct checker *c, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct checker *c, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	fprintf(c->out, "%s: offset %" PRIu64 ": ", jd_path(c->f), off);
	va_start(ap, fmt);
	vfprintf(c->out, fmt, ap);
	va_end(ap);
	putc('\n', c->out);
	c->problems++;
}

static void note(struct checker *c, enum note_kind kind, uint64_t off, uint64_t value)
{
	struct note *n = &c->notes[kind];

	if (!n->count++) {
		n->offset = off;
		n->value = value;
	}
}

/* The clock a header timestamp that is not CLOCK_MONOTONIC seems to be on. */
static const char *clock_guess(uint64_t ts)
{
	struct timespec now;
	uint64_t rt;

	clock_gettime(CLOCK_REALTIME, &now);
	rt = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	/* written within the last ten years, by its unit */
	if (ts <= rt / 1000 + 1000000 && ts + 315360000ull * 1000000 > rt / 1000)
		return "microseconds since the epoch (V8 writes that)";
	if (ts <= rt + SLACK_NS && ts + 315360000ull * 1000000000 > rt)
		return "CLOCK_REALTIME";
	return "not CLOCK_MONOTONIC, or from before the last reboot";
}

static void print_notes(struct checker *c)
{
	const struct note *n = c->notes;
	const char *path = jd_path(c->f);

	if (n[NOTE_HEADER_CLOCK].count)
		fprintf(c->out, "%s: offset 24: note: header timestamp %" PRIu64 " is later than "
			"CLOCK_MONOTONIC now: %s; perf ignores the header's timestamp\n", path,
			n[NOTE_HEADER_CLOCK].value, clock_guess(n[NOTE_HEADER_CLOCK].value));
	if (n[NOTE_ELF_MACH].count)
		fprintf(c->out, "%s: offset 12: note: elf_mach is 0; perf ignores it and makes "
			"images for its own machine (%s)\n", path, jd_machine_name(HOST_EM));
	if (n[NOTE_BEFORE_HEADER].count)
		fprintf(c->out, "%s: offset %" PRIu64 ": note: %u record%s timestamped before the "
			"header's %" PRIu64 " (the first here); perf ignores the header's "
			"timestamp\n", path, n[NOTE_BEFORE_HEADER].offset,
			n[NOTE_BEFORE_HEADER].count, n[NOTE_BEFORE_HEADER].count == 1 ? "" : "s",
			n[NOTE_BEFORE_HEADER].value);
	if (n[NOTE_UNKNOWN_TYPE].count)
		fprintf(c->out, "%s: offset %" PRIu64 ": note: %u record%s of unknown type (the "
			"first here, type %" PRIu64 "); perf skips them\n", path,
			n[NOTE_UNKNOWN_TYPE].offset, n[NOTE_UNKNOWN_TYPE].count,
			n[NOTE_UNKNOWN_TYPE].count == 1 ? "" : "s", n[NOTE_UNKNOWN_TYPE].value);
}

/* The reader's message without its "FILE: offset N: " (the problem line has it). */
static const char *what(const char *err)
{
	const char *p = strstr(err, ": offset ");

	p = p ? strstr(p + 9, ": ") : NULL;
	return p ? p + 2 : err;
}

/* The offset the reader named in its message. */
static uint64_t where(const char *err, uint64_t fallback)
{
	const char *p = strstr(err, ": offset ");

	return p ? strtoull(p + 9, NULL, 10) : fallback;
}

static size_t slot_of(const struct index_set *s, uint64_t index)
{
	size_t i = (size_t)((index * 0x9e3779b97f4a7c15ull) >> 32) & (s->cap - 1);

	while (s->slots[i].used && s->slots[i].index != index)
		i = (i + 1) & (s->cap - 1);
	return i;
}

/* Returns the offset of an earlier load with the same index, or UINT64_MAX. */
static uint64_t index_add(struct index_set *s, uint64_t index, uint64_t off)
{
	size_t i;

	if (s->used * 2 >= s->cap) {
		struct index_set n = { NULL, s->cap ? s->cap * 2 : 256, 0 };

		n.slots = calloc(n.cap, sizeof(*n.slots));
		if (!n.slots && !s->cap)
			return UINT64_MAX;      /* check less rather than fail */
		if (n.slots) {          /* else: still half empty, go on with it */
			for (i = 0; i < s->cap; i++)
				if (s->slots[i].used)
					n.slots[slot_of(&n, s->slots[i].index)] = s->slots[i];
			n.used = s->used;
			free(s->slots);
			*s = n;
		}
	}
	i = slot_of(s, index);
	if (s->slots[i].used)
		return s->slots[i].offset;
	s->slots[i] = (struct index_slot){ index, off, 1 };
	s->used++;
	return UINT64_MAX;
}

static int index_has(const struct index_set *s, uint64_t index)
{
	return s->cap && s->slots[slot_of(s, index)].used;
}

static void check_header(struct checker *c)
{
	const struct jitdump_file_header *h = jd_header(c->f);

	if (h->version != JITDUMP_VERSION)
		problem(c, 4, "version %" PRIu32 ": perf inject reads version 1 only%s", h->version,
			h->version > 1 ? " and refuses this file" : "");
	if (h->total_size > 80)
		problem(c, 8, "header total_size %" PRIu32 " (should be 40): perf inject refuses "
			"the file", h->total_size);
	else if (h->total_size != sizeof(struct jitdump_file_header))
		problem(c, 8, "header total_size %" PRIu32 " (should be 40): perf inject still "
			"reads the first record at offset 40", h->total_size);
	if (h->elf_mach == EM_NONE)
		note(c, NOTE_ELF_MACH, 12, 0);
	else if (HOST_EM != EM_NONE && h->elf_mach != HOST_EM)
		problem(c, 12, "elf_mach %" PRIu32 " (%s) is not this machine's %d (%s): perf "
			"writes the code into ELF images for %s", h->elf_mach,
			jd_machine_name(h->elf_mach), HOST_EM, jd_machine_name(HOST_EM),
			jd_machine_name(HOST_EM));
	if (h->flags & ~(uint64_t)JITDUMP_FLAGS_ARCH_TIMESTAMP)
		problem(c, 32, "flags 0x%" PRIx64 " has unknown bits 0x%" PRIx64 ": perf inject "
			"refuses the file", h->flags,
			h->flags & ~(uint64_t)JITDUMP_FLAGS_ARCH_TIMESTAMP);
	if (c->arch_ts)
		return;         /* TSC values: converted by perf, no clock to compare */
	if (h->timestamp > c->now + SLACK_NS)
		note(c, NOTE_HEADER_CLOCK, 24, h->timestamp);
	else
		c->hdr_monotonic = 1;
}

static void check_timestamp(struct checker *c, const struct jd_record *rec)
{
	if (rec->timestamp < c->prev_ts)
		problem(c, rec->offset, "timestamp %" PRIu64 " is earlier than the previous "
			"record's %" PRIu64 ": records out of order", rec->timestamp, c->prev_ts);
	else
		c->prev_ts = rec->timestamp;
	if (c->arch_ts)
		return;
	if (rec->timestamp > c->now + SLACK_NS)
		problem(c, rec->offset, "timestamp %" PRIu64 " is later than CLOCK_MONOTONIC now "
			"(%" PRIu64 "): not CLOCK_MONOTONIC, samples will not meet this record",
			rec->timestamp, c->now);
	else if (c->hdr_monotonic && rec->timestamp + SLACK_NS < c->hdr_ts)
		note(c, NOTE_BEFORE_HEADER, rec->offset, c->hdr_ts);
}

static void check_load(struct checker *c, const struct jd_record *rec)
{
	const struct jitdump_file_header *h = jd_header(c->f);
	uint64_t first;
	char q[160];

	if (rec->code_size == 0)
		problem(c, rec->offset, "CODE_LOAD %s has code_size 0: perf maps nothing, "
			"no sample can land in it", jd_quote(rec->name, q, sizeof(q)));
	else if (rec->code_size > INT32_MAX)
		problem(c, rec->offset, "CODE_LOAD code_size %" PRIu64 " does not fit perf's int",
			rec->code_size);
	if (!rec->name[0])
		problem(c, rec->offset + 56, "CODE_LOAD has an empty name");
	if (rec->pid != h->pid)
		problem(c, rec->offset + 16, "CODE_LOAD pid %" PRIu32 " differs from the header "
			"pid %" PRIu32 ": perf gives the code to process %" PRIu32, rec->pid,
			h->pid, rec->pid);
	first = index_add(&c->loads, rec->code_index, rec->offset);
	if (first != UINT64_MAX)
		problem(c, rec->offset + 48, "code_index %" PRIu64 " repeats the CODE_LOAD at offset "
			"%" PRIu64 ": perf overwrites jitted-%" PRIu32 "-%" PRIu64 ".so, the earlier "
			"function loses its symbol", rec->code_index, first, rec->pid,
			rec->code_index);
	if (c->debug.set && c->debug.code_addr != rec->code_addr)
		problem(c, c->debug.offset, "DEBUG_INFO for code_addr 0x%" PRIx64 " is followed by "
			"the CODE_LOAD of 0x%" PRIx64 " at offset %" PRIu64 ": its lines land in the "
			"wrong function", c->debug.code_addr, rec->code_addr, rec->offset);
	c->debug.set = 0;
	if (!c->unwind_sticky)
		c->unwind.set = 0;
}

static void check_debug(struct checker *c, const struct jd_record *rec)
{
	struct jd_debug_iter it;
	struct jd_debug_entry e;
	uint64_t code_addr, nr;
	char err[512];
	int r;

	jd_debug_info(c->f, rec, &code_addr, &nr, &it);
	while ((r = jd_debug_next(&it, &e, err, sizeof(err))) == 1)
		;
	if (r < 0)
		problem(c, where(err, e.offset), "%s: perf reads past the record",
			what(err));
	if (c->debug.set)
		problem(c, c->debug.offset, "DEBUG_INFO is not followed by its CODE_LOAD: the one at "
			"offset %" PRIu64 " replaces it", rec->offset);
	c->debug.set = 1;
	c->debug.offset = rec->offset;
	c->debug.code_addr = code_addr;
}

static void check_unwind(struct checker *c, const struct jd_record *rec)
{
	struct jd_unwinding u;
	char err[512];

	if (jd_unwinding_info(c->f, rec, &u, err, sizeof(err))) {
		problem(c, where(err, rec->offset), "%s", what(err));
		return;
	}
	if (c->unwind.set && !c->unwind_sticky)
		problem(c, c->unwind.offset, "UNWINDING_INFO is not followed by its CODE_LOAD: the "
			"one at offset %" PRIu64 " replaces it", rec->offset);
	c->unwind.set = 1;
	c->unwind.offset = rec->offset;
	c->unwind_sticky = u.eh_frame_hdr_size == 0;
	if (c->unwind_sticky)
		problem(c, rec->offset + 24, "eh_frame_hdr_size is 0: perf keeps this unwinding "
			"data for every later CODE_LOAD");
	if (u.mapped_size && u.mapped_size < u.unwinding_size)
		problem(c, rec->offset + 32, "mapped_size %" PRIu64 " is smaller than "
			"unwinding_size %" PRIu64, u.mapped_size, u.unwinding_size);
}

int jd_check(struct jd_file *f, FILE *out)
{
	struct checker c = { .f = f, .out = out };
	struct jd_record rec;
	struct timespec ts;
	char err[512];
	unsigned nrec = 0, notes = 0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	c.now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	c.arch_ts = !!(jd_header(f)->flags & JITDUMP_FLAGS_ARCH_TIMESTAMP);
	c.hdr_ts = jd_header(f)->timestamp;
	check_header(&c);
	while ((r = jd_next(f, &rec, err, sizeof(err))) != 0) {
		if (r == -EBADMSG) {
			problem(&c, where(err, rec.offset), "%s: perf inject stops reading here, the rest is "
				"dropped", what(err));
			break;
		}
		nrec++;
		check_timestamp(&c, &rec);
		if (r < 0) {
			problem(&c, where(err, rec.offset), "%s", what(err));
			continue;
		}
		switch (rec.id) {
		case JIT_CODE_LOAD:
			check_load(&c, &rec);
			break;
		case JIT_CODE_MOVE:
			if (!index_has(&c.loads, rec.code_index))
				problem(&c, rec.offset + 56, "CODE_MOVE of code_index %" PRIu64
					" that no earlier CODE_LOAD has", rec.code_index);
			break;
		case JIT_CODE_DEBUG_INFO:
			check_debug(&c, &rec);
			break;
		case JIT_CODE_UNWINDING_INFO:
			check_unwind(&c, &rec);
			break;
		case JIT_CODE_CLOSE:
			break;
		default:
			note(&c, NOTE_UNKNOWN_TYPE, rec.offset, rec.id);
		}
	}
	if (c.debug.set)
		problem(&c, c.debug.offset, "DEBUG_INFO is not followed by a CODE_LOAD: perf drops it");
	if (c.unwind.set && !c.unwind_sticky)
		problem(&c, c.unwind.offset, "UNWINDING_INFO is not followed by a CODE_LOAD: perf "
			"drops it");
	free(c.loads.slots);
	print_notes(&c);
	for (int k = 0; k < NOTE_KINDS; k++)
		notes += c.notes[k].count != 0;
	if (c.problems)
		fprintf(out, "%s: %u problem%s", jd_path(f), c.problems, c.problems == 1 ? "" : "s");
	else
		fprintf(out, "%s: ok, %u records", jd_path(f), nrec);
	if (notes)
		fprintf(out, "; %u note%s", notes, notes == 1 ? "" : "s");
	putc('\n', out);
	return c.problems ? 1 : 0;
}
