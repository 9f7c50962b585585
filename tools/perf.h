/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding and running perf, the same way for every subcommand: $PERF when
 * it is set (a perf built elsewhere, or the one configure found for the
 * tests), else "perf" on PATH.
 */
#ifndef JITPERF_TOOLS_PERF_H
#define JITPERF_TOOLS_PERF_H

#include <sys/types.h>

/* The line a missing perf gets, after "perf not found". */
#define PERF_INSTALL_HINT "install it with: apt-get install linux-perf"

/* perf's path ($PERF, else found on PATH), malloc'ed; NULL if there is none. */
char *perf_find(void);

/*
 * An executable found as execvp(3) would find it, malloc'ed into *found:
 * 0, or -ENOENT (none), -EACCES (a file that is not executable) or -EISDIR
 * (a directory), what execvp would fail with; -ENOMEM.
 */
int perf_find_exec(const char *name, char **found);

/*
 * Start `PERF ARGS...` (args[0] is the first argument after the program,
 * the list ends with NULL) with its standard output on a pipe whose read
 * end goes to *out, and its standard error on errfd (-1: /dev/null).
 * 0 or -errno; *pid is the child to pass to perf_wait().
 */
int perf_spawn(const char *perf, const char *const args[], int *out, int errfd, pid_t *pid);

/*
 * Whether perf's event parser rejects event (as `perf stat -e EVENT`
 * does, quickly, before running anything): 1 with perf's one line saying
 * what is wrong in why ("event syntax error: 'x': parser error"), else 0,
 * also when the check itself cannot run.
 */
int perf_event_error(const char *perf, const char *event, char *why, size_t len);

/* Wait for a child: its exit status (0-255), or 256 + the signal that killed it. */
int perf_wait(pid_t pid);

#endif
