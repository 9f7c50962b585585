/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inputs of jitperf convert, recognised by content. */
#ifndef JITPERF_CVINPUT_H
#define JITPERF_CVINPUT_H

#include <stddef.h>

#include "convert.h"

struct cv_sink {
	int (*sample)(const struct ps_sample *s, void *arg);
	int (*call)(const struct cv_call *c, void *arg);
	int (*code)(const struct cv_code *c, void *arg);
	int (*thread)(const struct cv_thread *t, void *arg);
	int call_stacks;   /* calls need every frame's name, not only their own */
};

enum cv_kind { CV_TEXT, CV_PERFDATA, CV_TRACE, CV_JITDUMP, CV_DIR };

struct cv_input {
	enum cv_kind kind;
	const char  *path;
	int          has_samples, has_calls;
	char        *perfdata;          /* perf.data of the input */
	char       **traces, **dumps;   /* of a record directory, or the one file */
	size_t       ntraces, ndumps;
	int          fd;                /* perf script text */
	char         peek[8];           /* bytes of stdin read to recognise it */
	size_t       npeek;
};

/* 0, or -errno with a one-line message in err. */
int cv_input_open(struct cv_input *in, const char *path, char *err, size_t errlen);
int cv_input_read(struct cv_input *in, unsigned ps_flags, const struct cv_sink *sink,
		  void *arg, char *err, size_t errlen);
void cv_input_close(struct cv_input *in);

/*
 * tools/convert/chrome_budget.c: the shortest call that still goes into a
 * Chrome trace of at most max_bytes (0 when all calls fit), from a first
 * pass over the calls of a file input.  0 or -errno with a message in err.
 */
int cv_chrome_budget(struct cv_input *in, uint64_t max_bytes, uint64_t *min_call_ns,
		     char *err, size_t errlen);

/*
 * tools/convert/cvperfdata.c: a perf.data's samples, read natively; data
 * "-" is standard input, whose first npeek bytes were read into peek.
 */
int cv_read_perfdata(const char *data, const char *peek, size_t npeek, unsigned flags,
		     int with_calls,
		     const struct cv_sink *sink, void *arg, char *err, size_t errlen);
/* the same through `perf script` (recordings that need unwinding) */
int cv_read_perfscript(const char *data, unsigned flags, int with_calls,
		       const struct cv_sink *sink, void *arg, char *err, size_t errlen);

/*
 * tools/convert/cvparallel.c: perf script text of a regular file in
 * nthreads pieces, piece i's samples to fn(args[i]) on a thread of its own.
 * -EAGAIN when that does not apply (a pipe, a small file) or a piece had an
 * error: read it the ordinary way then.
 */
int cv_read_text_parallel(struct cv_input *in, unsigned flags, size_t nthreads,
			  ps_sample_fn fn, void *const args[], uint64_t *nsamples,
			  int *filtered, char *err, size_t errlen);

/*
 * tools/convert/cvtrace.c: calls, threads and code events of one trace
 * file, the conversion's trace number input
 */
int cv_read_trace(const char *path, uint32_t input, const struct cv_sink *sink, void *arg,
		  int with_code, int *had_code, char *err, size_t errlen);

#endif
