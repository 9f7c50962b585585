/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a tiered JIT did, per logical function and tier: the compiles,
 * requests and installs of a jit-<pid>.tiers file (read/tiers_read.h)
 * joined into one row each, and the tier marks runtimes put in the names
 * perf shows (jitperf's "func[tag]", V8's "JS:*fib file.js:2:13", .NET's
 * "Foo::Bar()[OptimizedTier1]").  Used by jitperf report --tiers.
 */
#ifndef JITPERF_TIERS_MODEL_H
#define JITPERF_TIERS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "format/tiers.h"

#define TM_NO_TIME UINT64_MAX

struct tm_compile {
	char     *func;
	unsigned  tier;
	uint32_t  tid;              /* the thread it began on */
	uint64_t  id, parent;       /* parent: the compile it nests in, 0 none */
	uint64_t  begin, end;       /* ns; end TM_NO_TIME when unfinished */
	int32_t   status;           /* 0 code produced, < 0 failed */
	uint64_t  request;          /* the request it answered, TM_NO_TIME none */
	uint64_t  install;          /* its first install, TM_NO_TIME none */
};

struct tm_request {
	char     *func;
	unsigned  tier;
	uint32_t  tid;
	uint64_t  ts;
	int       used;             /* answered by a compile */
};

struct tm_model {
	const char        *path;
	uint32_t           pid;
	uint64_t           start;   /* the header's timestamp */
	int                closed;  /* a CLOSE record: the session ended */
	char               tags[JPTIERS_TIERS][JPTIERS_TAG_MAX + 1];   /* last in force */
	struct tm_compile *compiles;
	size_t             ncompiles;
	struct tm_request *requests;
	size_t             nrequests;
	size_t             ninstalls;
	size_t             elsewhere;  /* ends and installs of compiles begun in the parent's file */
};

/*
 * Read a tiers file whole.  0, or a negative errno with one line in errbuf
 * naming the file (and the offset) when it is damaged.  A fork child's file
 * may end or install a compile whose begin is in its parent's file: those
 * records are counted in elsewhere, not joined.
 */
int tm_load(struct tm_model *m, const char *path, char *errbuf, size_t errlen);
void tm_free(struct tm_model *m);

/* The tier whose tag is tag (the last given), -1 if none. */
int tm_tier_of_tag(const struct tm_model *m, const char *tag);

/* One logical function in one tier, over the compiles of one file. */
struct tm_row {
	const char *func;
	unsigned    tier;
	size_t      compiles;       /* begun */
	size_t      failed;         /* ended with status < 0 */
	size_t      unfinished;     /* begun, never ended */
	uint64_t    compile_ns;     /* the ended compiles' durations, summed */
	uint64_t    compile_max_ns;
	uint32_t    compile_tid;    /* the thread of its longest compile */
	uint64_t    queue_ns;       /* request to begin, summed; TM_NO_TIME no request */
	uint64_t    request;        /* first request, TM_NO_TIME none */
	uint64_t    install;        /* first install, TM_NO_TIME none */
};

/*
 * The rows of m, sorted by function then tier (one per pair that has a
 * compile or a request).  0 or -ENOMEM; *rows is freed with free(); the
 * names point into m.
 */
int tm_rows(const struct tm_model *m, struct tm_row **rows, size_t *nrows);

enum tm_kind { TM_NONE, TM_JITPERF, TM_V8, TM_DOTNET };

/*
 * A tier mark in a symbol name.  Offsets and lengths into the name; tier
 * -1 for jitperf's marks, whose tier the tiers file knows (tag "tierN" is
 * tier N).  A name without a mark is TM_NONE.
 */
struct tm_mark {
	enum tm_kind kind;
	int          tier;
	size_t       func_off, func_len;
	size_t       tag_off, tag_len;
	size_t       loc_off, loc_len;      /* V8: "file.js:2:13"; 0, 0 none */
};

/* 1 with *mk filled when name carries a tier mark, else 0. */
int tm_mark_parse(const char *name, struct tm_mark *mk);

#endif /* JITPERF_TIERS_MODEL_H */
