/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal interfaces of the code-registration side: environment, perf map,
 * jitdump, unwind tables, code index table.  Every function that writes a
 * record expects the caller to hold jp->lock; the records themselves are
 * made before it is taken (jp_perfmap_line, jp_jitdump_prepare).
 */
#ifndef JITPERF_CORE_H
#define JITPERF_CORE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "log.h"
#include "session.h"

/* A JITPERF* variable: NULL when unset, empty, or in a set-ID program. */
JP_HIDDEN const char *jp_getenv(const char *name);

/* Copy a caller's size-prefixed options struct (libbpf OPTS_VALID rules). */
JP_HIDDEN int jp_opts_copy(void *dst, size_t dst_size, const void *src, size_t src_size);

/* ---- lib/env.c: parsing of the JITPERF* variables */
/*
 * Variable var's value is refused: keep the reason (one line, without
 * "jitperf: ", naming var unless it is JITPERF) for the default session's message, and say it under
 * JITPERF_DEBUG.  jp_env_reason() is NULL when nothing was refused.
 */
JP_HIDDEN void jp_env_error(const char *var, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), cold));
JP_HIDDEN const char *jp_env_reason(void);
JP_HIDDEN void jp_env_reason_clear(void);
JP_HIDDEN int jp_parse_outputs(const char *s, unsigned *outputs);
JP_HIDDEN int jp_parse_clock(const char *s);

/* ---- lib/fileio.c: whole writes that leave no partial record behind */
/*
 * Write iov[0..n) at the end of fd, whose current size is *size.  On any
 * failure the file is truncated back to *size and -errno returned; on
 * success *size grows by the bytes written.
 */
JP_HIDDEN int jp_write_whole(int fd, struct iovec *iov, int n, uint64_t *size);

/*
 * Every file the library writes is made by jp_newfile_create: a new 0644
 * file under a random temporary name in path's directory (O_EXCL |
 * O_NOFOLLOW), renamed over path by jp_newfile_publish, which replaces
 * whatever is there without following or opening it.  See lib/fileio.c.
 */
struct jp_newfile {
	const char *path;           /* as the caller named it (kept for messages) */
	int  dirfd;                 /* path's directory (O_PATH), until published */
	int  fd;                    /* the new file, open with the caller's flags */
	char name[256];             /* final name in dirfd */
	char tmp[256];              /* temporary name in dirfd; "" once published */
};
JP_HIDDEN int  jp_newfile_create(struct jp_newfile *nf, const char *path, int flags);
JP_HIDDEN int  jp_newfile_publish(struct jp_newfile *nf);
JP_HIDDEN void jp_newfile_discard(struct jp_newfile *nf);
/* Both at once, for files read while they are written; *fd stays open. */
JP_HIDDEN int  jp_create_fresh(const char *path, int flags, int *fd);
/* Unlink path only while it still names the file open as fd. */
JP_HIDDEN void jp_remove_own(const char *path, int fd);
/*
 * The output directory and its missing parents, made as mkdir -p makes
 * them (0777 less the umask), as perf, uftrace and LLVM's perf listener
 * make theirs.  0 or -errno.
 */
JP_HIDDEN int  jp_mkdir_p(const char *dir);

/* ---- lib/bgthread.c: the library's own threads (jitperf-fill, jitperf-standby) */
/* Start fn(arg) with every signal blocked, named name; returns once it
 * runs fn.  0 or -errno. */
JP_HIDDEN int  jp_bgthread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *name);
/* Sleep while *word == val (until timeout; NULL: none); wake every sleeper. */
struct timespec;
JP_HIDDEN void jp_futex_wait(int *word, int val, const struct timespec *timeout);
JP_HIDDEN void jp_futex_wake(int *word);

/* ---- lib/elfinfo.c */
JP_HIDDEN unsigned jp_elf_machine(void);

/* ---- lib/perfmap.c: one write() per line */
/* where perf looks for pid's map: /tmp/perf-PID.map */
JP_HIDDEN void jp_perfmap_name(char *buf, size_t len, pid_t pid);
JP_HIDDEN int  jp_perfmap_open(struct jp_perfmap **out, pid_t pid);
/* room jp_perfmap_line needs besides the name's nlen bytes */
#define JP_PERFMAP_LINE_EXTRA 36
/* Format "START SIZE name\n" into line (nlen + JP_PERFMAP_LINE_EXTRA bytes); returns its length. */
JP_HIDDEN size_t jp_perfmap_line(char *line, uint64_t addr, uint64_t len, const char *name,
				 size_t nlen);
JP_HIDDEN int  jp_perfmap_append(struct jp_perfmap *pm, const char *line, size_t n);
JP_HIDDEN int  jp_perfmap_write(struct jp_perfmap *pm, uint64_t addr, uint64_t len,
				const char *name);
JP_HIDDEN void jp_perfmap_close(struct jp_perfmap *pm);
JP_HIDDEN void jp_perfmap_discard(struct jp_perfmap *pm);
JP_HIDDEN void jp_perfmap_drop(struct jp_perfmap *pm);   /* after fork: forget, file untouched */
JP_HIDDEN uint64_t jp_perfmap_mark(const struct jp_perfmap *pm);
JP_HIDDEN void jp_perfmap_rollback(struct jp_perfmap *pm, uint64_t mark);

/*
 * ---- lib/ehframe.c: check an .eh_frame by the jitperf.h convention, build
 * .eh_frame_hdr, in space when it fits (a typical function's does in 64
 * bytes), else in a malloc'ed block the caller frees (*hdr != space).
 */
JP_HIDDEN int jp_ehframe_hdr(const void *eh, size_t eh_len, uint64_t addr, uint64_t len,
			     unsigned char *space, size_t space_len, unsigned char **hdr,
			     size_t *hdr_len);

/* ---- lib/twins.c: code bytes this session has written before */
struct jp_twins;
JP_HIDDEN uint64_t jp_code_hash(const void *code, size_t len);
JP_HIDDEN uint64_t jp_code_copy_hash(void *dst, const void *code, size_t len); /* copy + hash */
JP_HIDDEN int  jp_twins_seen(struct jp_twins **t, uint64_t hash);  /* 1 seen, 0 new, -ENOMEM */
JP_HIDDEN void jp_twins_prefetch(const struct jp_twins *t, uint64_t hash);
JP_HIDDEN void jp_twins_free(struct jp_twins *t);

/* ---- lib/jitdump.c */
struct jp_jitdump_load {        /* one CODE_LOAD with the records that describe it */
	const char                *name;
	uint64_t                   addr;
	uint64_t                   len;
	uint64_t                   index;
	const struct jitperf_line *lines;
	size_t                     nlines;
	const void                *eh_frame;
	size_t                     eh_frame_len;
	const unsigned char       *eh_hdr;
	size_t                     eh_hdr_len;
	int                        checked;   /* copy the code with EFAULT checks (fork child) */
	uint32_t                   tid;       /* the registering thread; 0: the caller */
};
/*
 * A load's records, made without the lock (jp_jitdump_prepare) and written
 * under it (jp_jitdump_commit), which fills in what the lock orders: the
 * timestamps, the code index, and a tail if the code is a twin.
 */
struct jp_jitdump_unit {
	unsigned char *buf;       /* the records, with room for a twin tail */
	size_t         len;       /* bytes in buf, without a tail */
	size_t         load;      /* offset of the CODE_LOAD record in buf */
	size_t         code;      /* offset of the code bytes in buf */
	size_t         code_len;
	int            has_eh;    /* an UNWINDING_INFO comes with it */
	uint64_t       hash;      /* jp_code_hash of the code bytes */
	unsigned char *heap;      /* buf, when it did not fit the caller's space */
	const char    *name;      /* for debug messages */
};
#define JP_TWIN_TAIL 8               /* room after a unit for a twin's tail */
/* one write() per unit */
JP_HIDDEN int  jp_jitdump_open(struct jp_jitdump **out, const char *dir, pid_t pid);
JP_HIDDEN int  jp_jitdump_open_at(struct jp_jitdump **out, const char *dir, pid_t pid,
				  uint64_t ts);
/* space is the caller's buffer (may be NULL); a bigger unit is malloc'ed */
JP_HIDDEN int  jp_jitdump_prepare(struct jp_jitdump_unit *u, const struct jp_jitdump_load *ld,
				  void *space, size_t space_len);
JP_HIDDEN void jp_jitdump_prefetch(const struct jp_jitdump *jd, const struct jp_jitdump_unit *u);
JP_HIDDEN int  jp_jitdump_commit(struct jp_jitdump *jd, struct jp_jitdump_unit *u,
				 uint64_t index, uint64_t ts);
/*
 * n units back to back in memory, with JP_TWIN_TAIL bytes of room after the
 * last: one write (writev when a unit before the last gets a twin's tail);
 * iov: 2 n + 1
 */
JP_HIDDEN int  jp_jitdump_commit_many(struct jp_jitdump *jd, struct jp_jitdump_unit *u, size_t n,
				      const uint64_t *index, uint64_t ts, struct iovec *iov);
JP_HIDDEN void jp_jitdump_unit_free(struct jp_jitdump_unit *u);
/* commit in two steps, for many units in one write(): stamp (its length), then put */
JP_HIDDEN size_t jp_jitdump_stamp(struct jp_jitdump *jd, struct jp_jitdump_unit *u,
				  uint64_t index, uint64_t ts);
JP_HIDDEN int  jp_jitdump_put(struct jp_jitdump *jd, const void *buf, size_t n);
/* prepare + commit at once (the fork child's re-announcement) */
JP_HIDDEN int  jp_jitdump_load(struct jp_jitdump *jd, const struct jp_jitdump_load *ld);
JP_HIDDEN int  jp_jitdump_move(struct jp_jitdump *jd, uint64_t index, uint64_t old_addr,
			       uint64_t new_addr, uint64_t len);
JP_HIDDEN int  jp_jitdump_close(struct jp_jitdump *jd);  /* writes CODE_CLOSE */
/* mark/rollback: undo a whole unit when a later output of the same load fails */
JP_HIDDEN uint64_t jp_jitdump_mark(const struct jp_jitdump *jd);
JP_HIDDEN void jp_jitdump_rollback(struct jp_jitdump *jd, uint64_t mark);
JP_HIDDEN void jp_jitdump_drop(struct jp_jitdump *jd);   /* after fork: forget, write nothing */
JP_HIDDEN void jp_jitdump_discard(struct jp_jitdump *jd); /* close and remove the file */
JP_HIDDEN const char *jp_jitdump_path(const struct jp_jitdump *jd);

/* ---- lib/codetab.c: what was loaded under which index */
struct jp_code_entry {
	uint64_t        addr;
	uint64_t        len;
	char           *name;
	struct jp_keep *keep;   /* standby: what its records need later (malloc'ed), else NULL */
	int             live;
};
JP_HIDDEN int  jp_codetab_add(struct jp_codetab **tab, uint64_t addr, uint64_t len,
			      const char *name, size_t nlen, uint64_t *index);
JP_HIDDEN void jp_codetab_undo(struct jp_codetab *tab);  /* drop the last add */
JP_HIDDEN struct jp_code_entry *jp_codetab_get(struct jp_codetab *tab, uint64_t index);
JP_HIDDEN uint64_t jp_codetab_count(const struct jp_codetab *tab);
JP_HIDDEN void jp_codetab_free(struct jp_codetab *tab);

/*
 * ---- lib/standby.c: JITPERF_STANDBY (doc/attach.md).  A standby session
 * writes nothing; each load keeps a jp_keep (its time, thread, lines and
 * .eh_frame) in its code table entry.  One thread per process sleeps in
 * accept() on the abstract socket "\0jitperf-standby-<pid>"; a recorder of
 * the same user that connects wakes every standby session of the process.
 */
struct jp_keep {
	uint64_t            ts;        /* CLOCK_MONOTONIC of the load */
	uint64_t            addr;      /* where lines and .eh_frame apply */
	uint32_t            tid;
	size_t              nlines;
	struct jitperf_line *lines;    /* file names in the same block */
	size_t              eh_frame_len;
	void               *eh_frame;
};
/* Made without the lock, for the load c at time 0 (set under the lock). */
JP_HIDDEN int  jp_keep_make(const struct jitperf_code *c, struct jp_keep **out);
/*
 * A recorder's "attach [DIR]" (dir NULL without DIR), answered with one
 * reply line per standby session into out ("ok N PATH" or "error TEXT").
 */
typedef void (*jp_standby_wake_fn)(const char *dir, char *out, size_t outlen);
/*
 * The process's listener, started once (again in a fork child), handing
 * each request to wake: lib/session.c's, which knows the sessions, so
 * that calls go one way, from the sessions to standby.  0 or -errno.
 */
JP_HIDDEN int  jp_standby_listen(jp_standby_wake_fn wake);
/* Around fork (before the session locks): in the child the parent's socket is closed. */
JP_HIDDEN void jp_standby_atfork_prepare(void);
JP_HIDDEN void jp_standby_atfork_parent(void);
JP_HIDDEN void jp_standby_atfork_child(void);
/*
 * jp->lock held: open the perf map and the jitdump (in dir, NULL: jp->dir),
 * write every live function with its load time, and leave standby.
 * *n gets the functions written, path the jitdump's path.  0 or -errno.
 */
JP_HIDDEN int  jp_standby_wake(struct jitperf *jp, const char *dir, uint64_t *n,
			       char *path, size_t pathlen);
/*
 * The len bytes of live code at addr into dst, with the kernel's checks:
 * 0, -EFAULT when (part of) it is no longer mapped, another -errno when
 * this process may not read its memory that way at all (a seccomp
 * profile): jp_standby_strerror then says why and how to allow it.
 */
JP_HIDDEN int  jp_standby_read(void *dst, uintptr_t addr, size_t len);
/* A wake begins: why an earlier one could not read code is forgotten. */
JP_HIDDEN void jp_standby_read_begin(void);
/* The reply's text for a wake that failed with err. */
JP_HIDDEN const char *jp_standby_strerror(int err);

/*
 * ---- lib/tiers.c: tiers and compiles (doc/tiers.md), their records in
 * jit-<pid>.tiers beside the jitdump (format/tiers.h), made when the
 * first record is written; held back in standby like the rest.
 */
/*
 * Without the lock: whether compile is one of jp's (else -ENOENT), and
 * when name is not NULL the name of its code, func[tag] or func, in space
 * when it fits, else malloc'ed (*name != space).
 */
JP_HIDDEN int  jp_tiers_code_name(struct jitperf *jp, uint64_t compile, char *space, size_t len,
				  char **name);
/* Without the lock: the name of code of func in tier, as jp_tiers_code_name makes it. */
JP_HIDDEN int  jp_tiers_name(struct jitperf *jp, const char *func, unsigned tier, char *space,
			     size_t len, char **name);
/* jp->lock held: code index of compile loaded at ts (its CODE_LOAD's time).  0 or -errno. */
JP_HIDDEN int  jp_tiers_install(struct jitperf *jp, uint64_t compile, uint64_t index,
				uint64_t addr, uint64_t len, uint64_t ts);
/* jp->lock held, the jitdump just written by a standby wake: the records held back. */
JP_HIDDEN int  jp_tiers_wake(struct jitperf *jp);
/* jp->lock held: a CLOSE record, the file closed, everything freed.  0 or -errno. */
JP_HIDDEN int  jp_tiers_close(struct jitperf *jp);
/* In a fork child, jp->lock held: the parent's file forgotten; the child makes its own. */
JP_HIDDEN void jp_tiers_atfork_child(struct jitperf *jp);
/* JITPERF_TIER_TAGS: NULL (1), "1" (1) or "0" (0); else -EINVAL */
JP_HIDDEN int  jp_parse_tier_tags(const char *s, int *tags);

/* thread id, cached per thread (reset in a fork child) */
JP_HIDDEN pid_t jp_gettid(void);
JP_HIDDEN void  jp_tid_reset(void);

#endif /* JITPERF_CORE_H */
