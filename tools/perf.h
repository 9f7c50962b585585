/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding and running perf, the same way for every subcommand: $PERF when
 * it is set (a perf built elsewhere, or the one configure found for the
 * tests), else "perf" on PATH.
 */
#ifndef JITPERF_TOOLS_PERF_H
#define JITPERF_TOOLS_PERF_H

#include <signal.h>
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

/* For struct perf_io: jitperf's own standard output or error. */
#define PERF_OWN (-2)

/*
 * What a program started by perf_spawn() gets besides its arguments.
 * out: NULL leaves its standard output on jitperf's; else it goes to a
 * pipe whose read end is put in *out.  errfd: its standard error, -1 for
 * /dev/null (perf's warnings are not ours), PERF_OWN for jitperf's.
 * sigint, sigterm: what jitperf's own handler of that signal replaced
 * (sigaction's oldact), given back to the program, so a signal jitperf's
 * parent ignored stays ignored; NULL where jitperf has no handler.
 * sigpipe_dfl: SIGPIPE at its default, where jitperf ignores it.
 */
struct perf_io {
	int                    *out;
	int                     errfd;
	const struct sigaction *sigint, *sigterm;
	int                     sigpipe_dfl;
};

/*
 * Start `PROG ARGS...`: perf as perf_find() gave it, or the command of
 * `record --no-perf`, found as execvp(3) finds it.  args[0] is the first
 * argument after the program, the list ends with NULL.  0 or -errno; *pid
 * is the child to pass to perf_wait().  A program that cannot be executed
 * says so on its standard error and exits 127, as the shell does.
 */
int perf_spawn(const char *prog, const char *const args[], const struct perf_io *io,
	       pid_t *pid);

/*
 * `PERF ARGS...` in place of jitperf (`report --perf`): returns only when
 * it cannot be executed, with -errno, having said nothing.
 */
int perf_exec(const char *perf, const char *const args[]);

/*
 * Whether perf's event parser rejects event (as `perf stat -e EVENT`
 * does, quickly, before running anything): 1 with perf's one line saying
 * what is wrong in why ("event syntax error: 'x': parser error"), else 0,
 * also when the check itself cannot run.
 */
int perf_event_error(const char *perf, const char *event, char *why, size_t len);

/* Whether a child of perf_spawn() has not ended yet; it stays for perf_wait(). */
int perf_running(pid_t pid);

/* Wait for a child: its exit status (0-255), or 256 + the signal that killed it. */
int perf_wait(pid_t pid);

#endif
