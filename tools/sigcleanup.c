/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cleanup before a signal ends the command (tools/sigcleanup.h). */
#include "config.h"

#include <signal.h>
#include <stddef.h>

#include "sigcleanup.h"

#define MAX_FNS 4

static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
#define NSIG_FATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))
static void (*volatile fns[MAX_FNS])(void);

static void on_signal(int sig)
{
	for (size_t i = 0; i < MAX_FNS; i++)
		if (fns[i])
			fns[i]();
	/* then die of the signal, as without a handler */
	signal(sig, SIG_DFL);
	raise(sig);
}

void sigcleanup_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < NSIG_FATAL; i++)
		sigaddset(&set, fatal_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

void sigcleanup_unblock(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

void sigcleanup_add(void (*fn)(void))
{
	static int installed;
	struct sigaction sa = { 0 }, old;
	sigset_t mask;
	size_t i;

	sigcleanup_block(&mask);
	for (i = 0; i < MAX_FNS && fns[i] && fns[i] != fn; i++)
		;
	if (i < MAX_FNS)
		fns[i] = fn;
	if (!installed) {
		installed = 1;
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		for (i = 0; i < NSIG_FATAL; i++)
			if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
				sigaction(fatal_signals[i], &sa, NULL);
	}
	sigcleanup_unblock(&mask);
}
