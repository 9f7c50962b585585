/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf record -p: attach perf to running processes, wake those in
 * JITPERF=standby, record until COMMAND ends or Ctrl-C (doc/attach.md).
 */
#ifndef JITPERF_ATTACH_H
#define JITPERF_ATTACH_H

#include <sys/types.h>
#include <time.h>

#include "collect.h"

struct attach {
	pid_t  *pids;
	size_t  npids;
	const char *list;          /* the -p argument, as perf takes it */
};

/* What perf records: the options record passes on. */
struct attach_perf {
	const char *perf, *data, *event, *freq, *callgraph;
	const char *dir;           /* the record directory (absolute): standby jitdumps go there */
	char      **cmd;           /* COMMAND, or NULL: until Ctrl-C */
	struct collect_watch *watch; /* the processes' files in containers, held while perf runs */
};

/* "PID[,PID...]": -EINVAL (said) when it is not a list of process ids. */
int  attach_parse(const char *arg, struct attach *a);
/* Every pid is a process this user may record: else one line, -ESRCH or -EPERM. */
int  attach_check(const struct attach *a);
/* When the earliest of the processes started (CLOCK_REALTIME): older files are not theirs. */
void attach_since(const struct attach *a, struct timespec *since);
/*
 * perf record -p with events enabled, then every process in standby woken
 * (its files complete when this returns from the wake), then until COMMAND
 * ends or SIGINT/SIGTERM; *status is COMMAND's status, or 0 when stopped
 * without one.  0 or -errno (said).
 */
int  attach_record(const struct attach *a, const struct attach_perf *p, int *status);
void attach_free(struct attach *a);

#endif
