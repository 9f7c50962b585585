/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Time and thread ids for records: cheap, no locks. */
#include "config.h"

#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "core.h"

uint64_t jp_monotonic_ns(void)
{
	struct timespec ts;

	/* vDSO: no system call.  perf record -k 1 samples on this clock. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * gettid() is a system call; cache it, the fork child resets its copy.
 * initial-exec: a plain %fs-relative load instead of a __tls_get_addr call.
 */
static __thread pid_t cached_tid __attribute__((tls_model("initial-exec")));

pid_t jp_gettid(void)
{
	if (!cached_tid)
		cached_tid = (pid_t)syscall(SYS_gettid);
	return cached_tid;
}

void jp_tid_reset(void)
{
	cached_tid = 0;
}
