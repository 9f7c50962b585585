/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cleanup before a signal ends the command (Ctrl-C, kill, a hangup, a
 * closed pipe): what a command has only half written (a temporary output,
 * a staging directory) goes, then the process dies of the signal as it
 * would have.  The handlers go in only where the signal would kill, not
 * where the caller's parent ignores it.  The cleanup functions run in the
 * handler: async-signal-safe calls only, on state that the command
 * changes with those signals blocked (sigcleanup_block), so that they
 * always see it whole.
 */
#ifndef JITPERF_SIGCLEANUP_H
#define JITPERF_SIGCLEANUP_H

#include <signal.h>

/* Run fn when one of those signals comes (at most 4 functions, each once). */
void sigcleanup_add(void (*fn)(void));
/* Hold those signals off while the state fn reads changes. */
void sigcleanup_block(sigset_t *old);
void sigcleanup_unblock(const sigset_t *old);

#endif /* JITPERF_SIGCLEANUP_H */
