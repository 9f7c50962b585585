/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tiers files of a conversion (jit-<pid>.tiers, jitperf-tiers(5)),
 * joined just enough for the outputs: each compile with its thread, times,
 * status, the request that asked for it and the install of its code; and
 * the tags, to tell tier code by its name func[tag].
 */
#ifndef JITPERF_CVTIERS_H
#define JITPERF_CVTIERS_H

#include <stddef.h>
#include <stdint.h>

struct cv_compile {
	uint32_t    pid, tid;          /* the thread it began on */
	uint64_t    id, parent;        /* the tiers file's ids (per process) */
	unsigned    tier;
	char       *func;              /* the logical function */
	char        tag[64];           /* of its tier when its code was installed (else begun) */
	uint64_t    begin_ns, end_ns;  /* unfinished: end_ns is the CLOSE's, else the file's last time */
	int32_t     status;            /* of its end; 0 when unfinished */
	int         unfinished;        /* no end before the session closed */
	int         requested;         /* a request of func and tier came before it */
	uint32_t    request_tid;
	uint64_t    request_ns;
	int         installed;         /* code of it was loaded: the first load */
	uint64_t    install_ns;
};

struct cv_tag {
	uint32_t pid;
	unsigned tier;
	char     tag[64];
};

struct cv_tiers {
	struct cv_compile *compiles;   /* by process, then in the order they began */
	size_t             ncompiles;
	struct cv_tag     *tags;       /* every tag a process gave a tier, and tierN */
	size_t             ntags;
	size_t             nfiles;
	size_t            *by_func;    /* installed compiles' numbers by pid, func, tag, install */
	size_t             nby_func;
};

/*
 * The jit-*.tiers files of a record directory dir, or beside a perf.data
 * file (none is not an error).  0, or -errno with a one-line message in
 * err naming the file and what is wrong with it.
 */
int cv_tiers_read(struct cv_tiers *t, const char *path, int is_dir, char *err, size_t errlen);
void cv_tiers_free(struct cv_tiers *t);

/*
 * Whether a frame name is tier code: func[tag], where tag is a tag of the
 * tiers files, and what may follow the tag: an annotation of --jit or
 * --kernel ("_[j]") or a source line (":file:line").  1 with the length
 * of func, the tag's offset and length and its tier; else 0.
 */
int cv_tiers_split(const struct cv_tiers *t, const char *name, size_t len, size_t *func_len,
		   size_t *tag_off, size_t *tag_len, unsigned *tier);

/* name with its tag taken out ("sum[opt]_[j]" -> "sum_[j]"), in place; its new length */
size_t cv_tiers_strip(const struct cv_tiers *t, char *name, size_t len);

/*
 * The installed compiles of a process whose code the frame name func[tag]
 * is: [*first, *first + return value) of t->by_func, in install order.
 */
size_t cv_tiers_code_of(const struct cv_tiers *t, uint32_t pid, const char *name, size_t len,
			size_t *first);

#endif /* JITPERF_CVTIERS_H */
