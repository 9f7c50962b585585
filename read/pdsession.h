/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the records of a perf.data mean, as perf's "machine" keeps it:
 * threads and their command names (COMM, FORK), the maps of each process
 * (MMAP, MMAP2, inherited at FORK), the kernel's maps, and the objects
 * (DSOs) those maps show, each with its symbols loaded on first use.
 * Feed it the records in time order (pd_next), then ask what an address
 * of a thread is.
 */
#ifndef JITPERF_PDSESSION_H
#define JITPERF_PDSESSION_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"
#include "pdline.h"
#include "pdsym.h"

enum pd_dso_kind { PD_DSO_ELF, PD_DSO_PERFMAP, PD_DSO_KERNEL, PD_DSO_MODULE, PD_DSO_VDSO };

struct pd_dso {
	char            *name;       /* as perf prints it: path, "[kernel.kallsyms]", "[vdso]" */
	enum pd_dso_kind kind;
	uint8_t          build_id[20];
	uint8_t          build_id_size;
	int              loaded;
	int              jit;        /* a perf map or perf inject's jitted-PID-N.so */
	struct pd_symtab syms;
	char            *symfile;    /* ELF: where the symbols came from, NULL if nowhere */
	char            *runtime;    /* ELF: the image that was mapped, NULL if not found */
	struct pd_lines *lines;      /* pd_dso_lines() */
	int              lines_tried;
	struct pd_dso   *next;
};

struct pd_map {
	uint64_t       start, end, pgoff;
	struct pd_dso *dso;
	int            identity;     /* addresses are not map-relative (perf maps, kernel) */
};

struct pd_thread;
struct pd_session;

/* One place of a callchain: the map and symbol, both NULL when unknown. */
struct pd_loc {
	const struct pd_map *map;
	const struct pd_sym *sym;
	uint64_t             addr;   /* map-relative address, ip when there is no map */
};

/*
 * datadir: where the recording lies (its copies of perf maps and jitted
 * images are looked for there); NULL = nowhere else.
 */
struct pd_session *pd_session_new(const struct pd_file *f, const char *datadir);
void pd_session_free(struct pd_session *s);
/*
 * Start reading the kernel's symbols (kallsyms: 100k+ lines) in a thread
 * of its own, if an event samples the kernel; the first kernel address
 * resolved waits for it.  For large recordings, whose pass over the
 * records (pd_index) runs meanwhile.
 */
void pd_session_preload(struct pd_session *s);
/*
 * The only kernel addresses pd_session_resolve will be asked to name (n,
 * sorted, distinct; copied): kallsyms is then read for the symbols that
 * name them (pd_symtab_load_kallsyms_for), not whole, and not at all when
 * n is 0.  Another kernel address may then be named wrongly.  Before the
 * first kernel address is resolved, without pd_session_preload.  0 or
 * -ENOMEM.
 */
int pd_session_kernel_addrs(struct pd_session *s, const uint64_t *addrs, size_t n);

/* Apply a COMM, FORK, EXIT, MMAP or MMAP2 record; others are ignored.  0 or -ENOMEM. */
int pd_session_event(struct pd_session *s, const struct pd_event *ev);

/*
 * Changes when a record changed a thread's name or a process's maps: what
 * was resolved under one generation is still right while it lasts.
 */
uint64_t pd_session_generation(const struct pd_session *s);
/*
 * Whether a change since generation since can alter what the n addresses
 * at ips (u64, as in a callchain) of thread t resolve to: a new map over
 * one of them, or a new name or parent of t.
 */
int pd_session_changed(const struct pd_session *s, uint64_t since, const struct pd_thread *t,
		       const unsigned char *ips, size_t n);

/* The thread tid of process pid, created with perf's name ":TID" if unknown; NULL = ENOMEM. */
struct pd_thread *pd_session_thread(struct pd_session *s, uint32_t pid, uint32_t tid);
const char *pd_thread_comm(const struct pd_thread *t);

/* Resolve ip of t in kernel (1) or user (0) space. */
void pd_session_resolve(struct pd_session *s, struct pd_thread *t, int kernel, uint64_t ip,
			struct pd_loc *loc);

/*
 * The source lines of an ELF object (read/pdline.h), opened on first use;
 * NULL if it has no DWARF or is no ELF object.
 */
struct pd_lines *pd_dso_lines(struct pd_dso *d);

#endif /* JITPERF_PDSESSION_H */
