/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Streaming parser of `perf script` text.  Each sample is folded into a
 * stack of frame names following stackcollapse-perf.pl's rules (which frames
 * are kept, how names are tidied and annotated), so that joining
 * pname;frame;frame... gives exactly that tool's folded lines.
 */
#ifndef JITPERF_PERFSCRIPT_H
#define JITPERF_PERFSCRIPT_H

#include <stddef.h>
#include <stdint.h>

enum ps_flags {
	PS_PID      = 1u << 0,  /* process name becomes comm-PID         */
	PS_TID      = 1u << 1,  /* process name becomes comm-PID/TID     */
	PS_KERNEL   = 1u << 2,  /* kernel frames get _[k]                */
	PS_JIT      = 1u << 3,  /* JIT frames (perf map, jitted-*.so) get _[j] */
	PS_ADDRS    = 1u << 4,  /* [unknown] frames keep their address    */
	/* Input is our own `perf script -F` output: samples without a call
	 * graph print their one frame on the (indented) header line. */
	PS_PERFDATA = 1u << 5,
	/* perf.data input: hand each sample's unfolded places too (ps_sample.raw) */
	PS_RAW      = 1u << 6,
	/* stackcollapse-perf.pl --srcline: "func:file.c:12" (text input: from
	 * the line perf script -F+srcline prints after each frame) */
	PS_SRCLINE  = 1u << 7,
	/* stackcollapse-perf.pl --inline: a frame becomes its chain of inlined
	 * functions, "outer;inner" (perf.data input, DWARF through libdw) */
	PS_INLINE   = 1u << 8,
};

struct pd_raw;

struct ps_str {
	const char *s;
	size_t      len;
};

struct ps_sample {
	struct ps_str   pname;      /* process name as stackcollapse-perf.pl prints it */
	struct ps_str   comm;
	struct ps_str   event;      /* "" when the header does not name it */
	uint32_t        pid;        /* 0 with has_pid == 0 when the text has only the tid */
	uint32_t        tid;
	int             has_pid;
	int             has_time;
	uint64_t        time_ns;
	uint64_t        period;
	size_t          nframes;
	const struct ps_str *frames;  /* root first */
	uint64_t        line;       /* line number of the sample header (perf.data: offset) */
	const struct pd_raw *raw;   /* perf.data with PS_RAW: the places unfolded, else NULL */
	/* perf.data: samples with the same non-zero id have the same pname and
	 * frames (a consumer may reuse what it made of the first); 0 = none */
	uint64_t        stack_id;
};

typedef int (*ps_sample_fn)(const struct ps_sample *s, void *arg);

struct ps_parser;

/* NULL with errno = ENOMEM on failure. */
struct ps_parser *ps_new(unsigned flags, const char *name, ps_sample_fn fn, void *arg);
void ps_free(struct ps_parser *p);

/*
 * Feed bytes; lines may be split anywhere across calls.  Returns 0, the
 * callback's non-zero value, or -EINVAL/-ENOMEM with ps_error() set to a
 * one-line message naming the input and the line.
 */
int ps_feed(struct ps_parser *p, const char *buf, size_t len);
/* End of input: reports a last line without its newline as truncation. */
int ps_finish(struct ps_parser *p);
/* Read a whole file descriptor through the parser (big reads, no per-line copy). */
int ps_parse_fd(struct ps_parser *p, int fd);

/*
 * stackcollapse-perf.pl's reading of a sample header line
 * (/^(\S.+?)\s+(\d+)\/ *(\d+)*\s+/, no blank after the slash): the command
 * name is the shortest prefix of two bytes or more followed by blanks,
 * digits, an optional "/digits" and a blank.  1 with *h filled, 0 if the
 * line is no header.
 */
struct ps_header {
	const char *comm;
	size_t      comm_len;
	const char *pid, *tid;
	size_t      pid_len, tid_len;
	const char *rest;          /* after the pid/tid field */
};
int ps_match_header(const char *l, size_t n, struct ps_header *h);

/*
 * stackcollapse-perf.pl's reading of a call graph line
 * (/^\s*(\w+)\s*(.+) \((.*)\)/): greedy (.+) ends at the last " (" that
 * has a ')' after it, (.*) runs to the last ')'.  1 with *s filled, 0 if
 * the line is no call graph line.
 */
struct ps_stackline {
	const char *pc, *func, *mod;
	size_t      pcn, funcn, modn;
};
int ps_match_stack(const char *l, size_t n, struct ps_stackline *s);

/*
 * For text read in pieces by several parsers (each piece starting after a
 * blank line): the event of the first sample header of the whole text
 * (its length, 0 if none; *ev points into buf), which every parser is then
 * told to keep with ps_set_event, as one parser would have chosen it.
 */
size_t ps_first_event(const char *buf, size_t len, const char **ev);
int ps_set_event(struct ps_parser *p, const char *ev, size_t len);   /* 0 or -ENOMEM */

/*
 * A frame's name from elsewhere than perf: called for every frame with its
 * module (dso), address and symbol as the line gives them (not
 * NUL-terminated); returns the name to use instead, or NULL to keep the
 * symbol.  The name is tidied like any other.
 */
typedef const char *(*ps_resolve_fn)(void *arg, const char *mod, size_t modn,
				     const char *pc, size_t pcn, const char *sym, size_t symn);
void ps_set_resolver(struct ps_parser *p, ps_resolve_fn fn, void *arg);

const char *ps_error(const struct ps_parser *p);
uint64_t    ps_samples(const struct ps_parser *p);
/* The event samples were filtered to (the first one seen), "" if none. */
const char *ps_event(const struct ps_parser *p);
int         ps_filtered(const struct ps_parser *p);   /* samples of other events dropped */

#endif /* JITPERF_PERFSCRIPT_H */
