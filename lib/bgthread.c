/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's own threads (jitperf-fill, the filler of the trace, and
 * jitperf-standby, which waits for an attach): started with every signal
 * blocked, named, woken through a futex.
 */
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"

int jp_bgthread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *name)
{
	sigset_t all, old;
	int err;

	/* the program's signals are not for it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	pthread_setname_np(*t, name);   /* before it runs: ps and perf show it so */
	return 0;
}

void jp_futex_wait(int *word, int val, const struct timespec *timeout)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, timeout, NULL, 0);
}

void jp_futex_wake(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
