/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's own threads (jitperf-fill, the filler of the trace, and
 * jitperf-standby, which waits for an attach): started with every signal
 * blocked, named, woken through a futex.
 *
 * The start returns once the thread runs its function.  A thread still
 * starting may hold its allocator's locks (its stack, its TLS); a fork()
 * then gives the child those locks held by nobody, and an allocator that
 * does not take them around fork() (ASan's) hangs the child's next
 * malloc().  A program that forks right after its first registration
 * must not meet a thread halfway through its start.
 */
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"

struct start {
	void *(*fn)(void *);
	void  *arg;
	int    running;
};

static void *trampoline(void *p)
{
	struct start *st = p;
	void *(*fn)(void *) = st->fn;
	void *arg = st->arg;

	/* st lives on the starter's stack: not used after this */
	__atomic_store_n(&st->running, 1, __ATOMIC_RELEASE);
	jp_futex_wake(&st->running);
	return fn(arg);
}

int jp_bgthread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *name)
{
	struct start st = { fn, arg, 0 };
	sigset_t all, old;
	int err;

	/* the program's signals are not for it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, trampoline, &st);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	pthread_setname_np(*t, name);   /* before it runs: ps and perf show it so */
	while (!__atomic_load_n(&st.running, __ATOMIC_ACQUIRE))
		jp_futex_wait(&st.running, 0, NULL);
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
