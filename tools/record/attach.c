/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf record -p (tools/record/attach.h, doc/attach.md).
 *
 * perf record -p starts with its events disabled (-D -1) and a control
 * pipe (--control fd:CTL,ACK).  Once it has synthesized what the
 * processes have mapped, "enable" is sent and its "ack" awaited: from then
 * on perf sees every new mapping.  Only then is each process in standby
 * woken: the jitdump it then opens is mapped (the marker perf looks for)
 * while perf records, and its records carry the load times, so samples
 * taken before the wake resolve too.  The processes are never stopped or
 * signalled; perf reads them as perf record -p does.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "format/standby.h"
#include "tools/cmds.h"
#include "tools/nsproc.h"
#include "tools/perf.h"

/* How long perf may take to start, and a process to write its code out. */
#define ENABLE_TIMEOUT_MS 30000
#define WAKE_TIMEOUT_MS   120000

int attach_parse(const char *arg, struct attach *a)
{
	const char *s = arg;

	memset(a, 0, sizeof(*a));
	a->list = arg;
	while (*s) {
		char *end;
		long v;
		pid_t *p;

		errno = 0;
		v = *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : 0;
		if (v <= 0 || errno || v > INT_MAX || (*end && *end != ',') || (*end && !end[1])) {
			cmd_err("-p takes process ids (PID[,PID...]), not '%s'", arg);
			attach_free(a);
			return -EINVAL;
		}
		p = realloc(a->pids, (a->npids + 1) * sizeof(*p));
		if (!p) {
			attach_free(a);
			return -ENOMEM;
		}
		a->pids = p;
		a->pids[a->npids++] = (pid_t)v;
		s = *end ? end + 1 : end;
	}
	if (!a->npids) {
		cmd_err("-p takes process ids (PID[,PID...]), not '%s'", arg);
		return -EINVAL;
	}
	return 0;
}

void attach_free(struct attach *a)
{
	free(a->pids);
	a->pids = NULL;
	a->npids = 0;
}

int attach_check(const struct attach *a)
{
	for (size_t i = 0; i < a->npids; i++) {
		if (kill(a->pids[i], 0) == 0)
			continue;
		if (errno == ESRCH) {
			cmd_err("-p %d: no such process", (int)a->pids[i]);
			return -ESRCH;
		}
		cmd_err("-p %d: the process belongs to another user (record it as that user or "
			"as root)", (int)a->pids[i]);
		return -EPERM;
	}
	return 0;
}

/* Start of pid on the CLOCK_REALTIME timeline, from /proc/PID/stat's starttime. */
static int start_time(pid_t pid, struct timespec *ts)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks;
	struct timespec now, boot;
	double up, started;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');          /* the command name may hold spaces */
	if (!p)
		return -EIO;
	/* after ")": field 3 (state) onwards; starttime is field 22 */
	for (field = 2; field < 21 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &ticks) != 1)
		return -EIO;
	clock_gettime(CLOCK_REALTIME, &now);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	up = (double)boot.tv_sec + (double)boot.tv_nsec / 1e9;
	started = (double)now.tv_sec + (double)now.tv_nsec / 1e9 - up +
		  (double)ticks / (double)sysconf(_SC_CLK_TCK);
	started -= 1.0;         /* the ticks' rounding, and the two clocks read apart */
	ts->tv_sec = (time_t)started;
	ts->tv_nsec = (long)((started - (double)ts->tv_sec) * 1e9);
	return 0;
}

void attach_since(const struct attach *a, struct timespec *since)
{
	for (size_t i = 0; i < a->npids; i++) {
		struct timespec t;

		if (start_time(a->pids[i], &t))
			continue;
		if (t.tv_sec < since->tv_sec ||
		    (t.tv_sec == since->tv_sec && t.tv_nsec < since->tv_nsec))
			*since = t;
	}
}

/* ---- running perf */

static volatile pid_t perf_pid = -1;
static volatile sig_atomic_t stopped;

/* SIGINT or SIGTERM sent to jitperf alone goes to perf, which ends the recording. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	stopped = sig;
	if (perf_pid > 0 && si->si_code != SI_KERNEL)
		kill(perf_pid, sig);
}

static char **perf_argv(const struct attach *a, const struct attach_perf *p, const char *control)
{
	size_t ncmd = 0, n = 0;
	char **argv;

	while (p->cmd && p->cmd[ncmd])
		ncmd++;
	argv = calloc(24 + ncmd, sizeof(*argv));
	if (!argv)
		return NULL;
	argv[n++] = (char *)p->perf;
	argv[n++] = (char *)"record";
	argv[n++] = (char *)"-q";
	argv[n++] = (char *)"-k";
	argv[n++] = (char *)"1";
	argv[n++] = (char *)"-o";
	argv[n++] = (char *)p->data;
	argv[n++] = (char *)"-e";
	argv[n++] = (char *)p->event;
	if (p->freq) {
		argv[n++] = (char *)"-F";
		argv[n++] = (char *)p->freq;
	}
	if (p->callgraph) {
		argv[n++] = (char *)"--call-graph";
		argv[n++] = (char *)p->callgraph;
	}
	argv[n++] = (char *)"-p";
	argv[n++] = (char *)a->list;
	argv[n++] = (char *)"-D";
	argv[n++] = (char *)"-1";
	argv[n++] = (char *)"--control";
	argv[n++] = (char *)control;
	if (ncmd) {
		argv[n++] = (char *)"--";
		memcpy(argv + n, p->cmd, ncmd * sizeof(*argv));
	}
	return argv;
}

/*
 * "enable" on the control pipe, then perf's "ack": its events are on.
 * -ETIMEDOUT, or -EPIPE when perf ended first (its message said why).
 */
static int enable_events(int ctl, int ack)
{
	struct pollfd pfd = { .fd = ack, .events = POLLIN };
	char buf[64];
	size_t have = 0;
	struct timespec t0, t;

	if (write(ctl, "enable\n", 7) != 7)
		return -EPIPE;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left;
		ssize_t r;
		int k;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ENABLE_TIMEOUT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
					    (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		k = poll(&pfd, 1, (int)left);
		if (k < 0 && errno == EINTR) {
			if (stopped)
				return -EINTR;
			continue;
		}
		if (k <= 0)
			return k ? -errno : -ETIMEDOUT;
		r = read(ack, buf + have, sizeof(buf) - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EPIPE;
		have += (size_t)r;
		buf[have] = '\0';
		if (strstr(buf, "ack\n"))
			return 0;
		if (have == sizeof(buf) - 1)
			have = 0;
	}
}

/* ---- waking a process in standby (lib/standby.c is the other end) */

/* The reply, read until the process closes the connection. */
static int read_reply(int fd, char *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t have = 0;

	while (have < len - 1) {
		ssize_t r;
		int k = poll(&pfd, 1, WAKE_TIMEOUT_MS);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -ETIMEDOUT;
		r = recv(fd, buf + have, len - 1 - have, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		have += (size_t)r;
	}
	buf[have] = '\0';
	return 0;
}

/*
 * Connect to "\0jitperf-standby-PID", PID as the process knows itself (in
 * a container: its NSpid); no listener: not in standby.  The listener
 * must be the process itself (SO_PEERCRED, which names it in our pid
 * namespace), not a socket someone bound under its name.  A process in
 * a container writes its jitdump where it would (DIR may not be there as
 * it sees files): the recorder copies it from there.
 */
static void wake(pid_t pid, const char *dir)
{
	pid_t nspid;
	struct sockaddr_un addr;
	struct ucred cr;
	socklen_t alen, crlen = sizeof(cr);
	char req[PATH_MAX + 16], rep[4096], *line, *save;
	int fd, n, err;

	if (nsproc_pid(pid, &nspid))
		return;         /* gone */
	if (nsproc_foreign(pid) == 1)
		dir = NULL;
	alen = jpstandby_address(&addr, (int)nspid);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&addr, alen)) {
		close(fd);              /* ECONNREFUSED: no process of that pid listens */
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) || cr.pid != pid) {
		cmd_err("-p %d: @jitperf-standby-%d is held by process %d, not %d: not woken",
			(int)pid, (int)nspid, (int)cr.pid, (int)pid);
		close(fd);
		return;
	}
	n = dir ? snprintf(req, sizeof(req), JPSTANDBY_ATTACH " %s\n", dir)
		: snprintf(req, sizeof(req), JPSTANDBY_ATTACH "\n");
	err = send(fd, req, (size_t)n, MSG_NOSIGNAL) == n ? read_reply(fd, rep, sizeof(rep)) : -EPIPE;
	if (err) {
		cmd_err("-p %d: the process in standby did not answer%s", (int)pid,
			err == -ETIMEDOUT ? " in time" : "");
		close(fd);
		return;
	}
	close(fd);
	for (line = strtok_r(rep, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, JPSTANDBY_ERROR, sizeof(JPSTANDBY_ERROR) - 1))
			cmd_err("-p %d: standby: %s", (int)pid, line + sizeof(JPSTANDBY_ERROR) - 1);
}

/*
 * Until perf ends: the processes (and those they start) are looked at
 * every WATCH_MS, their files in containers held (tools/record/watch.c).
 */
#define WATCH_MS 100

static void watch(const struct attach *a, const struct attach_perf *p, pid_t perf)
{
	struct timespec tick = { 0, WATCH_MS * 1000000L };

	while (p->watch && perf_running(perf)) {
		for (size_t i = 0; i < a->npids; i++)
			if (collect_watch(p->watch, a->pids[i]) == -ENOMEM)
				return;
		nanosleep(&tick, NULL);
	}
}

int attach_record(const struct attach *a, const struct attach_perf *p, int *status)
{
	struct sigaction sa = { 0 }, old_int, old_term;
	int ctl[2] = { -1, -1 }, ack[2] = { -1, -1 }, st, err = 0, woken = 0;
	char control[64], **argv = NULL;
	pid_t pid;

	*status = 1;
	/* perf's ends without O_CLOEXEC: it inherits them */
	if (pipe(ctl) || pipe(ack)) {
		err = -errno;
		goto out;
	}
	fcntl(ctl[1], F_SETFD, FD_CLOEXEC);
	fcntl(ack[0], F_SETFD, FD_CLOEXEC);
	snprintf(control, sizeof(control), "fd:%d,%d", ctl[0], ack[1]);
	argv = perf_argv(a, p, control);
	if (!argv) {
		err = -ENOMEM;
		goto out;
	}
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO;       /* no SA_RESTART: a wait for perf's ack is cut short */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	signal(SIGPIPE, SIG_IGN);
	err = perf_spawn(p->perf, (const char *const *)argv + 1,
			 &(struct perf_io){ .errfd = PERF_OWN, .sigint = &old_int,
					    .sigterm = &old_term, .sigpipe_dfl = 1 }, &pid);
	if (err)
		goto restore;
	perf_pid = pid;
	close(ctl[0]);
	close(ack[1]);
	ctl[0] = ack[1] = -1;
	if (enable_events(ctl[1], ack[0]) == 0) {
		woken = 1;
		for (size_t i = 0; i < a->npids; i++)
			wake(a->pids[i], p->dir);
		watch(a, p, pid);
	} else if (!stopped && perf_running(pid)) {
		/* perf never said its events were on (had it ended, its message said why) */
		cmd_err("perf did not start recording within %d s: stopped",
			ENABLE_TIMEOUT_MS / 1000);
		kill(pid, SIGINT);
	}
	st = perf_wait(pid);
	perf_pid = -1;
	*status = st < 256 ? st : 128 + st - 256;
	/* COMMAND ended before perf's events were on: perf has nothing to say */
	if (!woken && !stopped && *status == 0)
		cmd_err("perf ended before its events were on: no process was woken or recorded");
	/* stopped with Ctrl-C and no COMMAND: the way such a recording ends */
	if (!p->cmd && stopped == SIGINT && *status == 128 + SIGINT)
		*status = 0;
restore:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
out:
	for (int i = 0; i < 2; i++) {
		if (ctl[i] >= 0)
			close(ctl[i]);
		if (ack[i] >= 0)
			close(ack[i]);
	}
	free(argv);
	if (err)
		cmd_err("cannot run %s: %s", p->perf, strerror(-err));
	return err;
}
