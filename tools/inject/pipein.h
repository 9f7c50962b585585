/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf inject's input from a stream: pipe mode (perf record -o -), on
 * standard input or in a file, made into a file-mode perf.data that the
 * rest of inject reads as it reads perf record's (tools/inject/pipein.c).
 */
#ifndef JITPERF_INJECT_PIPEIN_H
#define JITPERF_INJECT_PIPEIN_H

/*
 * in ("-" = standard input) as a perf.data inject can map: *tmp NULL when
 * in is a file-mode file already, else the malloc'ed name of a file-mode
 * copy written in dir, which the caller removes with ij_pipein_done.
 * Messages name in ("(stdin)" for "-") and the offset in the stream.  0,
 * or -errno with one message printed.
 */
int ij_pipein(const char *in, const char *dir, char **tmp);
/* tmp removed and freed (NULL: nothing) */
void ij_pipein_done(char *tmp);

#endif /* JITPERF_INJECT_PIPEIN_H */
