/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf inject's state, shared by its parts: inject.c (perf.data in and
 * out, the processes' mappings), jitdumps.c (a jitdump's functions into
 * images), perfmaps.c (a perf map's symbols into images).  Internal.
 */
#ifndef JITPERF_INJECT_CTX_H
#define JITPERF_INJECT_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "inject.h"

struct file_section {
	uint64_t offset, size;
};

struct file_header {               /* perf's struct perf_file_header */
	uint64_t            magic, size, attr_size;
	struct file_section attrs, data, event_types;
	uint64_t            features[4];
};

struct code {                      /* a CODE_LOAD's place, found again by CODE_MOVE */
	uint64_t index, vaddr, size, addr;
	uint32_t image, sym;
	int      used;
};

struct jitdump {                   /* one jitdump injected, by its path in the marker */
	char            *path;
	uint32_t         pid;
	size_t           first, nimages; /* its images: ctx.images[first ...] */
	uint16_t         machine;
	struct code     *codes;    /* open addressing on index */
	size_t           ncodes, capcodes;
};

struct range {                     /* a mapping of a process, from the input's mmap records */
	uint32_t pid;
	uint64_t start, end;
	uint64_t time;             /* of its record; 0 if the input has no times */
	unsigned flags;            /* IJ_RANGE_* */
};
enum { IJ_RANGE_ANON = 1, IJ_RANGE_DATA = 2 };   /* anonymous memory; not executable */

struct mapproc {                   /* a process, for its perf map */
	uint32_t pid;
	uint64_t off;              /* input offset of its (last) exec COMM, else first COMM */
	uint64_t time;             /* that record's time */
	char    *map;              /* the perf map to inject (no jitdump of its own), or NULL */
};

struct ij_pend;

struct ctx {
	const char        *in, *out;
	char              *imgdir;
	struct pd_file    *pd;
	int                infd;
	unsigned char     *map;
	size_t             maplen;
	struct file_header h;
	int                outfd;
	char              *outtmp;
	struct ij_buf      wbuf;   /* output not yet written */
	uint64_t           outpos, data_size;
	uint64_t           sample_type, id;
	int                sample_id_all;
	struct ij_image   *images;
	size_t             nimages;
	struct jitdump    *dumps;
	size_t             ndumps;
	uint32_t          *jitpids; /* processes whose anonymous mappings are dropped */
	size_t             njitpids;
	struct range      *ranges;  /* sorted by pid, start */
	size_t             nranges, capranges;
	struct range      *marks;   /* per process, its first marker's time (in start) */
	size_t             nmarks;
	struct mapproc    *procs;   /* processes and where a perf map would go in */
	size_t             nprocs;
	uint64_t          *rounds;  /* latest input time up to each FINISHED_ROUND */
	size_t             nrounds, caprounds;
	struct ij_pend    *pend;    /* mmap events waiting for their round (pending.c) */
	size_t             npend, cappend;
	uint64_t           npend_seq;
	uint64_t           functions, moves;
};

/* emit.c: records into the output, through one buffer; ij_flush writes it out */
int ij_emit(struct ctx *c, const void *p, size_t len);
int ij_emit_mmap(struct ctx *c, const struct ij_image *im, uint32_t pid, uint32_t tid,
		 uint64_t start, uint64_t len, uint64_t pgoff, uint64_t time);
int ij_flush(struct ctx *c);

/* procs.c */
int ij_add_range(struct ctx *c, const struct range *r);
int ij_is_anon(const char *name);
int ij_anon_dropped(const struct ctx *c, uint32_t pid, uint64_t time);
int ij_is_free(const struct ctx *c, uint32_t pid, uint64_t start, uint64_t end, uint64_t *next);
int ij_add_jitpid(struct ctx *c, uint32_t pid);
uint64_t ij_record_time(const struct ctx *c, const unsigned char *p, uint16_t size);
uint64_t ij_marker_time(const struct ctx *c, uint32_t pid);

/* jitdumps.c */
int ij_is_marker(const char *name, uint32_t pid);
int ij_readable_jitdump(const struct ctx *c, const char *path);
int ij_marker(struct ctx *c, const char *path, uint32_t pid);
int ij_add_code(struct ctx *c, struct jitdump *d, const struct ij_func *fn, uint64_t index,
		size_t img, uint64_t *vaddr);

/* plan.c: the image of each function, before any is added */
int ij_plan(struct ctx *c, struct jitdump *d, uint64_t addr, uint64_t len, uint64_t time,
	    size_t *img);
void ij_plan_done(struct ctx *c, const struct jitdump *d);

/* pending.c: an mmap event for the round of its time; those up to a time out */
int ij_queue_mmap(struct ctx *c, size_t img, uint32_t pid, uint32_t tid, uint64_t start,
		  uint64_t len, uint64_t pgoff, uint64_t time);
int ij_flush_pending(struct ctx *c, uint64_t upto);

/* perfmaps.c */
int ij_note_comm(struct ctx *c, const unsigned char *p, uint16_t size, uint16_t misc,
		 uint64_t off);
int ij_find_perfmaps(struct ctx *c);
int ij_inject_perfmap(struct ctx *c, const struct mapproc *m);

#endif /* JITPERF_INJECT_CTX_H */
