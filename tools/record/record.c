/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf record: run a command under `perf record -k 1` with libjitperf's
 * environment set, then `jitperf inject` (tools/inject/), and say what was recorded.
 * Everything lands in one directory (default jitperf.data); JITPERF_DIR
 * is absolute so every process of the run, children included, writes there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "collect.h"
#include "format/env.h"
#include "read/stats_read.h"
#include "tools/cmds.h"
#include "tools/inject/inject.h"
#include "tools/pathsafe.h"
#include "tools/perf.h"
#include "tools/rundir.h"

static const char usage_text[] =
	"usage: jitperf record [-o DIR] [-e EVENT] [-F FREQ] [-g | --call-graph fp|dwarf]\n"
	"                      [--instrument[=N|0|auto[:R]]] [--trace-max SIZE] [--trace-ring SIZE]\n"
	"                      [--trace-min TIME] [--counters LIST] [--no-perf] [-q]\n"
	"                      -- COMMAND [ARG...]\n"
	"       jitperf record -p PID[,PID...] [options] [-- COMMAND [ARG...]]\n"
	"\n"
	"Run COMMAND under perf record -k 1 with JITPERF=perfmap,jitdump and\n"
	"JITPERF_DIR=DIR, then jitperf inject.  DIR gets perf.data, perf.jit.data and\n"
	"its code images (jitimage-PID-N.so), the jitdump, trace and stats files of\n"
	"every process of the run, and\n"
	"copies of the perf maps and jitdumps runtimes wrote elsewhere (node, java, ...).\n"
	"\n"
	"  -p, --pid PID,...     attach to running processes until COMMAND ends or\n"
	"                        Ctrl-C; those in JITPERF=standby write their code then\n"
	"  -o, --output DIR      record directory (default jitperf.data; an existing\n"
	"                        one is renamed DIR.old)\n"
	"  -e, --event EVENT     perf event (default cycles, or cpu-clock where hardware\n"
	"                        events are not supported)\n"
	"  -F, --freq FREQ       sampling frequency in Hz (or max)\n"
	"  -g                    record call graphs (frame pointers)\n"
	"      --call-graph MODE call graphs by fp or dwarf\n"
	"      --instrument[=S]  also count every call and time some, into statistics and\n"
	"                        a trace (JITPERF trace,stats); S is JITPERF_SAMPLE: auto\n"
	"                        (default: adaptive, 10000 timed calls a second per\n"
	"                        thread), auto:R, N (about 1 call in N of each function,\n"
	"                        1: every call) or 0 (count only)\n"
	"      --trace-max SIZE  trace size limit per process (default 32M; 0: 4G)\n"
	"      --trace-ring SIZE keep only the last SIZE of each thread's calls\n"
	"      --trace-min TIME  do not trace calls shorter than TIME (ns, or us, ms, s)\n"
	"      --counters LIST   hardware counters read at each timed call\n"
	"                        (these options imply --instrument)\n"
	"      --no-perf         only run COMMAND with the instrumentation environment\n"
	"  -q, --quiet           no summary\n"
	"  -h, --help            show this help\n"
	"\n"
	"Exits with COMMAND's status (128+N if killed by signal N, or if jitperf\n"
	"itself got SIGINT or SIGTERM N and stopped the recording).\n";

struct record_opts {
	const char *dir, *event, *freq, *callgraph, *counters;
	const char *sample;      /* --instrument=S */
	const char *trace_max, *trace_ring, *trace_min;
	const char *pids;        /* -p: attach (attach.c) */
	int         instrument, no_perf, quiet;
	char      **cmd;
};

static volatile pid_t child = -1;
static volatile sig_atomic_t interrupted;   /* signal sent to jitperf itself */
static volatile sig_atomic_t stopped;       /* SIGINT or SIGTERM, from anyone */

/*
 * Ctrl-C reaches perf and the command through the terminal; a SIGINT or
 * SIGTERM sent to jitperf alone is passed on to perf, which stops the
 * recording cleanly.  Either way jitperf lives on to inject and summarize.
 */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (child > 0)
		stopped = sig;
	if (child > 0 && si->si_code != SI_KERNEL) {
		interrupted = sig;
		kill(child, sig);
	}
}

/*
 * Until the child ends: its processes in containers are looked at every
 * WATCH_MS (tools/record/watch.c), their files held while they live.
 */
#define WATCH_MS 100

static int watch_until_end(pid_t pid, struct collect_watch *w)
{
	struct timespec tick = { 0, WATCH_MS * 1000000L };

	while (w && perf_running(pid)) {
		if (collect_watch(w, pid) == -ENOMEM)
			break;  /* the files are then collected after the run, as they can be */
		nanosleep(&tick, NULL);
	}
	return perf_wait(pid);
}

static int run(char **argv, int *status, struct collect_watch *w)
{
	struct sigaction sa = { 0 }, old_int, old_term;
	struct perf_io io = { .errfd = PERF_OWN, .sigint = &old_int, .sigterm = &old_term };
	pid_t pid;
	int st, err;

	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* before the start: no window in which a signal kills jitperf but not perf */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	err = perf_spawn(argv[0], (const char *const *)argv + 1, &io, &pid);
	if (!err) {
		child = pid;
		st = watch_until_end(pid, w);
		*status = st < 256 ? st : 128 + st - 256;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	child = -1;
	return err;
}

/* Can this process sample a hardware cycle counter? */
static int have_hw_cycles(void)
{
	struct perf_event_attr attr = { 0 };
	long fd;

	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.disabled = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		return 0;
	close((int)fd);
	return 1;
}

static int read_paranoid(void)
{
	FILE *fp = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 2;

	if (fp) {
		if (fscanf(fp, "%d", &v) != 1)
			v = 2;
		fclose(fp);
	}
	return v;
}

/* Root, CAP_PERFMON (38) or CAP_SYS_ADMIN (21): paranoid settings do not apply. */
static int privileged(void)
{
	unsigned long long caps = 0;
	char line[256];
	FILE *fp;

	if (geteuid() == 0)
		return 1;
	fp = fopen("/proc/self/status", "r");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(fp);
	return !!(caps & (1ULL << 38 | 1ULL << 21));
}

/* What a name that should be a directory is instead, for one-line errors. */
static const char *kind_of(mode_t mode)
{
	return S_ISLNK(mode) ? "a symbolic link" : S_ISFIFO(mode) ? "a FIFO" :
	       S_ISREG(mode) ? "a file" : S_ISSOCK(mode) ? "a socket" : "a device";
}

/*
 * DIR.old is a name we derive, never one the user gave: it is replaced
 * only when it is an earlier recording, a directory of our own, and then
 * removed without following any link inside it (pathsafe_remove_tree).
 * Anything else there -- a link, a FIFO, a file, another user's directory
 * -- may have been planted (-o /tmp/rec): refused, and left as it is.
 */
static int clear_old(const char *old)
{
	struct stat st;
	int err;

	if (lstat(old, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode)) {
		cmd_err("%s is %s, not an earlier recording: not replaced",
			old, kind_of(st.st_mode));
		return -EEXIST;
	}
	if (st.st_uid != geteuid()) {
		cmd_err("%s belongs to another user: not replaced", old);
		return -EPERM;
	}
	err = pathsafe_remove_tree(old);
	if (err)
		cmd_err("cannot remove %s: %s", old, strerror(-err));
	return err;
}

/* DIR, if it exists, must be a directory: the recording we rotate (renaming
 * it follows nothing, whoever it belongs to). */
static int check_dir(const char *dir, int *exists)
{
	const char *why;
	struct stat st;

	*exists = 0;
	if (pathsafe_planted(dir, &why)) {
		cmd_err("%s: %s", dir, why);
		return -EPERM;
	}
	if (lstat(dir, &st))
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		cmd_err("%s exists and is %s, not a directory", dir,
			kind_of(st.st_mode));
		return -ENOTDIR;
	}
	*exists = 1;
	return 0;
}

/*
 * DIR becomes DIR.old (an older DIR.old is removed); a fresh DIR is made.
 * RENAME_NOREPLACE: a DIR.old that appears after the old one was removed
 * is never replaced.  DIR is 0755 whatever the umask: perf writes
 * perf.data and perf.jit.data by name, so no one else may plant a name
 * there.
 */
static int prepare_dir(const char *dir, int *rotated)
{
	char *old;
	int err, exists;

	err = check_dir(dir, &exists);
	if (err)
		return err;
	if (exists) {
		if (asprintf(&old, "%s.old", dir) < 0)
			return -ENOMEM;
		err = clear_old(old);
		if (!err && renameat2(AT_FDCWD, dir, AT_FDCWD, old, RENAME_NOREPLACE)) {
			err = -errno;
			cmd_err("cannot move %s to %s: %s", dir, old,
				strerror(errno));
		}
		*rotated = !err;
		free(old);
		if (err)
			return err;
	}
	if (mkdir(dir, 0755)) {
		err = -errno;
		cmd_err("cannot create %s: %s", dir, strerror(errno));
	}
	return err;
}

/*
 * perf failed before the command ran: remove the DIR made for this run
 * (with the empty perf.data perf may have left) and put back the one it
 * replaced, so a failed attempt never pushes the last recording aside.
 */
static void undo_dir(const char *dir, int rotated)
{
	char *old;

	if (pathsafe_remove_tree(dir) || !rotated ||
	    asprintf(&old, "%s.old", dir) < 0)
		return;
	renameat2(AT_FDCWD, old, AT_FDCWD, dir, RENAME_NOREPLACE);
	free(old);
}

static int set_env(const struct record_opts *o, const char *absdir)
{
	const char *outputs = o->instrument ? "perfmap,jitdump,trace,stats" : "perfmap,jitdump";

	if (setenv("JITPERF", outputs, 1) || setenv("JITPERF_DIR", absdir, 1))
		return -errno;
	if ((o->sample && setenv("JITPERF_SAMPLE", o->sample, 1)) ||
	    (o->trace_max && setenv("JITPERF_TRACE_MAX", o->trace_max, 1)) ||
	    (o->trace_ring && setenv("JITPERF_TRACE_RING", o->trace_ring, 1)) ||
	    (o->trace_min && setenv("JITPERF_TRACE_MIN", o->trace_min, 1)))
		return -errno;
	if (o->counters && setenv("JITPERF_COUNTERS", o->counters, 1))
		return -errno;
	return 0;
}

/*
 * A step after the run that may take long (injecting a runtime's
 * thousands of functions, reading a big perf.data) says what it does once
 * it has taken a second, so a wait is never silent; quick ones stay quiet.
 * The line is written by the timer's handler, with write().
 */
static const char *volatile step_line;

static void step_due(int sig)
{
	const char *s = step_line;

	(void)sig;
	if (s && write(STDERR_FILENO, s, strlen(s)) < 0)
		return;
}

static void step_begin(const struct record_opts *o, const char *line)
{
	struct sigaction sa = { 0 };
	struct itimerval t = { .it_value = { .tv_sec = 1 } };

	if (o->quiet)
		return;
	sa.sa_handler = step_due;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	step_line = line;
	setitimer(ITIMER_REAL, &t, NULL);
}

static void step_end(void)
{
	struct itimerval t = { 0 };

	setitimer(ITIMER_REAL, &t, NULL);
	step_line = NULL;
}

static int record_with_perf(const struct record_opts *o, const char *perf, const char *event,
			    const char *data, int *status, struct collect_watch *w)
{
	char *argv[32 + 1];
	int n = 0;

	argv[n++] = (char *)perf;
	argv[n++] = (char *)"record";
	argv[n++] = (char *)"-q";
	argv[n++] = (char *)"-k";
	argv[n++] = (char *)"1";
	argv[n++] = (char *)"-o";
	argv[n++] = (char *)data;
	argv[n++] = (char *)"-e";
	argv[n++] = (char *)event;
	if (o->freq) {
		argv[n++] = (char *)"-F";
		argv[n++] = (char *)o->freq;
	}
	if (o->callgraph) {
		argv[n++] = (char *)"--call-graph";
		argv[n++] = (char *)o->callgraph;
	}
	argv[n++] = (char *)"--";
	argv[n] = NULL;
	/* the command's argv follows perf's */
	{
		size_t ncmd = 0;
		char **all;
		int err;

		while (o->cmd[ncmd])
			ncmd++;
		all = calloc((size_t)n + ncmd + 1, sizeof(char *));
		if (!all)
			return -ENOMEM;
		memcpy(all, argv, (size_t)n * sizeof(char *));
		memcpy(all + n, o->cmd, ncmd * sizeof(char *));
		err = run(all, status, w);
		free(all);
		return err;
	}
}

/* What the statistics files of the run say, summed. */
/* The statistics files of the recording, summed. */
static void sum_stats(const struct rundir *rd, struct stats_sum *is)
{
	char err[512];

	memset(is, 0, sizeof(*is));
	for (size_t i = 0; i < rd->nstats; i++) {
		struct stats_file *s;

		if (stats_read(rd->stats[i], &s, err, sizeof(err))) {
			cmd_err("%s", err);
			continue;
		}
		stats_sum_add(is, s);
		stats_free(s);
	}
}

/* The instrumentation's lines: calls and what they cost, and what the
 * trace's limits left out. */
static void instr_summary(const struct stats_sum *is)
{
	fprintf(stderr, "jitperf record: %" PRIu64 " calls counted, %" PRIu64 " timed", is->calls,
		is->timed);
	if (is->timed && is->timed < is->calls)
		fprintf(stderr, " (about 1 in %.0f)", (double)is->calls / (double)is->timed);
	if (is->has_run && is->cpu_ns)
		fprintf(stderr, "; the probes cost about %.1f%% of the run's CPU time",
			100.0 * is->run_probe_ns / (double)is->cpu_ns);
	fputc('\n', stderr);
	if (!is->has_trace)
		return;
	fprintf(stderr, "jitperf record: %" PRIu64 " calls traced", is->traced);
	if (is->dropped_full) {
		char size[32];

		fprintf(stderr, "; %" PRIu64 " timed calls left out when the trace reached its "
			"%s (raise --trace-max)", is->dropped_full,
			cmd_size_text(is->trace_max, size, sizeof(size)));
	}
	if (is->dropped_short)
		fprintf(stderr, "; %" PRIu64 " shorter than --trace-min", is->dropped_short);
	if (is->dropped_ring)
		fprintf(stderr, "; %" PRIu64 " overwritten by the rings of --trace-ring",
			is->dropped_ring);
	fputc('\n', stderr);
}

/* Each runtime (command name) of the run with what it left: "node: 1 jitdump (2200 functions)". */
static void per_runtime(const struct collect *c)
{
	const struct collect_proc *p = c->procs;

	for (size_t i = 0; i < c->nprocs; i++) {
		size_t dumps = 0, maps = 0, seen = 0;
		uint64_t loads = 0, syms = 0;

		for (size_t k = 0; k < i; k++)
			seen |= !strcmp(p[k].comm, p[i].comm) && (p[k].has_dump || p[k].has_map);
		if (seen || !(p[i].has_dump || p[i].has_map))
			continue;
		for (size_t k = i; k < c->nprocs; k++) {
			if (strcmp(p[k].comm, p[i].comm))
				continue;
			dumps += p[k].has_dump;
			maps += p[k].has_map;
			loads += p[k].loads;
			syms += p[k].syms;
		}
		fprintf(stderr, "jitperf record: %s:", p[i].comm[0] ? p[i].comm : "?");
		if (dumps)
			fprintf(stderr, " %zu jitdump%s (%" PRIu64 " function%s)%s", dumps,
				dumps == 1 ? "" : "s", loads, loads == 1 ? "" : "s", maps ? "," : "");
		if (maps)
			fprintf(stderr, " %zu perf map%s (%" PRIu64 " symbol%s)", maps,
				maps == 1 ? "" : "s", syms, syms == 1 ? "" : "s");
		fputc('\n', stderr);
	}
}

/*
 * JIT functions of the run: each process's jitdump loads, or its perf map's
 * symbols when it wrote no jitdump (libjitperf writes both, of the same
 * functions).  Without perf, the jitdumps in DIR.
 */
static uint64_t functions(const struct collect *c, const struct rundir *rd, size_t *procs)
{
	uint64_t n = 0;

	*procs = 0;
	if (!c->nprocs) {
		*procs = rd->ndumps;
		return rundir_code_loads(rd);
	}
	for (size_t i = 0; i < c->nprocs; i++) {
		const struct collect_proc *p = &c->procs[i];

		n += p->has_dump ? p->loads : p->syms;
		*procs += p->has_dump || p->has_map;
	}
	return n;
}

static void summary(const struct record_opts *o, const struct collect *c, const char *event)
{
	struct rundir rd;
	struct stats_sum is;
	uint64_t loads;
	size_t procs;

	if (rundir_scan(o->dir, &rd))
		return;
	loads = functions(c, &rd, &procs);
	sum_stats(&rd, &is);
	/* libjitperf-cyg registers native functions: calls, but no code loads */
	if (loads == 0 && is.functions == 0)
		cmd_err("no JIT code registered: no process wrote a jitdump or perf map (the "
			"program does not link libjitperf or overwrote JITPERF; for node, java "
			"and others see jitperf-record(1))");
	if (o->quiet) {
		rundir_free(&rd);
		return;
	}
	fprintf(stderr, "jitperf record:");
	if (c->read)
		fprintf(stderr, " %" PRIu64 " samples (%s),", c->samples, event);
	fprintf(stderr, " %" PRIu64 " JIT function%s registered by %zu process%s", loads,
		loads == 1 ? "" : "s", procs, procs == 1 ? "" : "es");
	fputc('\n', stderr);
	if (c->read)
		per_runtime(c);         /* by command name: only perf.data has them */
	if (o->instrument)
		instr_summary(&is);
	fprintf(stderr, "jitperf record: files in %s/:%s%s %zu jitdump%s", o->dir,
		rd.has_perf_data ? " perf.data," : "", rd.has_jit_data ? " perf.jit.data," : "",
		rd.ndumps, rd.ndumps == 1 ? "" : "s");
	if (rd.nmaps)
		fprintf(stderr, ", %zu perf map%s", rd.nmaps, rd.nmaps == 1 ? "" : "s");
	if (o->instrument)
		fprintf(stderr, ", %zu trace%s, %zu stats file%s", rd.ntraces,
			rd.ntraces == 1 ? "" : "s", rd.nstats, rd.nstats == 1 ? "" : "s");
	fprintf(stderr, "\njitperf record: next: jitperf report %s; jitperf convert %s "
		"--chrome trace.json --svg flame.svg\n", o->dir, o->dir);
	rundir_free(&rd);
}

/* a decimal number in min..max; end (if not NULL) gets what follows it */
static int number(const char *s, unsigned long long min, unsigned long long max,
		  const char **end)
{
	char *e;
	unsigned long long n;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	n = strtoull(s, &e, 10);
	if (end)
		*end = e;
	else if (*e)
		return 0;
	return !errno && n >= min && n <= max;
}

static int positive(const char *s)
{
	return number(s, 1, UINT32_MAX, NULL);
}

/* the values of JITPERF_SAMPLE, _TRACE_MAX/_RING and _TRACE_MIN, as the library parses them */
static int sample_value(const char *s)
{
	uint64_t n;
	int automatic;

	return !jpenv_sample(s, &automatic, &n);
}

static int size_value(const char *s)
{
	uint64_t bytes;

	return !jpenv_size(s, &bytes);
}

static int time_value(const char *s)
{
	uint64_t ns;

	return !jpenv_duration(s, &ns);
}

/* 0 to go on; else *status is the exit status (help: 0, bad usage: 2). */
static int parse(int argc, char **argv, struct record_opts *o, int *status)
{
	enum { OPT_CALLGRAPH = 256, OPT_INSTRUMENT, OPT_COUNTERS, OPT_NOPERF, OPT_TRACE_MAX,
	       OPT_TRACE_RING, OPT_TRACE_MIN };
	static const struct option opts[] = {
		{ "output",     required_argument, NULL, 'o' },
		{ "pid",        required_argument, NULL, 'p' },
		{ "event",      required_argument, NULL, 'e' },
		{ "freq",       required_argument, NULL, 'F' },
		{ "call-graph", required_argument, NULL, OPT_CALLGRAPH },
		{ "instrument", optional_argument, NULL, OPT_INSTRUMENT },
		{ "counters",   required_argument, NULL, OPT_COUNTERS },
		{ "trace-max",  required_argument, NULL, OPT_TRACE_MAX },
		{ "trace-ring", required_argument, NULL, OPT_TRACE_RING },
		{ "trace-min",  required_argument, NULL, OPT_TRACE_MIN },
		{ "no-perf",    no_argument,       NULL, OPT_NOPERF },
		{ "quiet",      no_argument,       NULL, 'q' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->dir = "jitperf.data";
	optind = 1;
	opterr = 0;
	/* "+": options end at the command's name; ":": a missing argument is ':' */
	while ((c = getopt_long(argc, argv, "+:o:p:e:F:gqh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o->dir = optarg; break;
		case 'p': o->pids = optarg; break;
		case 'e': o->event = optarg; break;
		case 'F':
			/* checked here: a typo must not rotate DIR to DIR.old first */
			if (strcmp(optarg, "max") && !positive(optarg)) {
				cmd_err("-F takes a frequency in Hz or max, not '%s'", optarg);
				return *status = 2, -EINVAL;
			}
			o->freq = optarg;
			break;
		case 'g': o->callgraph = "fp"; break;
		case 'q': o->quiet = 1; break;
		case OPT_CALLGRAPH:
			if (strcmp(optarg, "fp") && strcmp(optarg, "dwarf") &&
			    strncmp(optarg, "dwarf,", 6) && strcmp(optarg, "lbr")) {
				cmd_err("--call-graph takes fp or dwarf, not '%s'", optarg);
				return *status = 2, -EINVAL;
			}
			o->callgraph = optarg;
			break;
		case OPT_INSTRUMENT:
			o->instrument = 1;
			if (optarg) {
				if (!sample_value(optarg)) {
					cmd_err("--instrument= takes N (1 in N timed), 0 (count "
						"only), auto or auto:R, not '%s'", optarg);
					return *status = 2, -EINVAL;
				}
				o->sample = optarg;
			}
			break;
		case OPT_TRACE_MAX:
		case OPT_TRACE_RING:
			if (!size_value(optarg)) {
				cmd_err("--%s takes a size (N, NK, NM or NG), not '%s'",
					c == OPT_TRACE_MAX ? "trace-max" : "trace-ring", optarg);
				return *status = 2, -EINVAL;
			}
			*(c == OPT_TRACE_MAX ? &o->trace_max : &o->trace_ring) = optarg;
			o->instrument = 1;
			break;
		case OPT_TRACE_MIN:
			if (!time_value(optarg)) {
				cmd_err("--trace-min takes a duration (N ns, or Nus, Nms, Ns), not '%s'",
					optarg);
				return *status = 2, -EINVAL;
			}
			o->trace_min = optarg;
			o->instrument = 1;
			break;
		case OPT_COUNTERS: o->counters = optarg; o->instrument = 1; break;
		case OPT_NOPERF: o->no_perf = 1; break;
		case 'h':
			*status = cmd_usage(usage_text, 1);
			return -ECANCELED;
		default:
			*status = cmd_bad_option(c, argv);
			return -EINVAL;
		}
	}
	if (o->pids && o->no_perf) {
		cmd_err("-p attaches perf: it cannot go with --no-perf");
		return *status = 2, -EINVAL;
	}
	if (o->pids && o->instrument) {
		/* they are environment variables of a process jitperf starts */
		cmd_err("-p: --instrument and the trace options cannot reach a running process "
			"(start it with JITPERF=trace,stats instead)");
		return *status = 2, -EINVAL;
	}
	if (o->pids) {
		o->cmd = optind < argc ? argv + optind : NULL;
		return 0;
	}
	if (optind >= argc) {
		cmd_err("no command given");
		fputs(usage_text, stderr);
		return *status = 2, -EINVAL;
	}
	o->cmd = argv + optind;
	return 0;
}

/* One recording: what the steps of cmd_record share, freed in one place. */
struct record {
	struct record_opts o;
	struct attach      attach;     /* -p */
	struct collect     collected;  /* what the run left outside DIR, brought in */
	struct collect_watch watch;    /* files of processes in containers, held while they live */
	struct timespec    since;      /* when the run began (the clock of file times) */
	char       *perf;          /* NULL with --no-perf */
	char       *absdir, *data, *jitdata;
	const char *event;
	int         rotated;
	int         status;        /* the exit status, once known */
};

/* perf and the command can be found, and perf may sample here. */
static int check_programs(struct record *r)
{
	char *cmd;
	int err;

	if (!r->o.no_perf && !(r->perf = perf_find())) {
		cmd_err("perf not found: " PERF_INSTALL_HINT " (or use --no-perf)");
		r->status = 127;
		return -ENOENT;
	}
	if (r->o.pids) {
		err = attach_parse(r->o.pids, &r->attach);

		err = err ?: attach_check(&r->attach);
		if (err) {
			r->status = 2;
			return err;
		}
		if (!r->o.cmd)
			return 0;
	}
	err = perf_find_exec(r->o.cmd[0], &cmd);
	free(cmd);
	if (err == -ENOENT)
		cmd_err("%s: command not found", r->o.cmd[0]);
	else if (err)
		cmd_err("%s: %s", r->o.cmd[0], strerror(-err));
	/* as the shell: 127 not found, 126 found but not executable */
	if (err)
		r->status = err == -ENOENT ? 127 : err == -ENOMEM ? 1 : 126;
	return err;
}

/* perf may sample here: said before DIR is touched. */
static int check_paranoid(struct record *r)
{
	int paranoid;

	if (r->o.no_perf)
		return 0;
	paranoid = read_paranoid();
	/* 2 allows user-space sampling of one's own processes: all record needs */
	if (paranoid > 2 && !privileged()) {
		cmd_err("kernel.perf_event_paranoid is %d: perf may not sample here; allow it "
			"with: sysctl kernel.perf_event_paranoid=2", paranoid);
		return -EACCES;
	}
	return 0;
}

/*
 * -e EVENT as perf's parser takes it: a typo gets perf's one line on what
 * is wrong, not its whole usage text, before DIR is touched.
 */
static int check_event(struct record *r)
{
	char why[256];

	if (r->o.no_perf || !r->o.event || !perf_event_error(r->perf, r->o.event, why, sizeof(why)))
		return 0;
	cmd_err("perf: %s (perf list names the events)", why);
	r->status = 2;
	return -EINVAL;
}

/*
 * The event to sample: the user's, else cycles, else cpu-clock.  After
 * DIR is made, so a DIR that cannot be is the one line a user sees.
 */
static int choose_event(struct record *r)
{
	r->event = r->o.event;
	if (r->o.no_perf)
		return 0;
	if (!r->event && have_hw_cycles()) {
		r->event = "cycles";
	} else if (!r->event) {
		r->event = "cpu-clock";
		if (!r->o.quiet)
			cmd_err("hardware events are not supported here; sampling cpu-clock instead");
	}
	return 0;
}

/* DIR made fresh, its absolute path in the environment of the run. */
static int make_dir(struct record *r)
{
	int err = prepare_dir(r->o.dir, &r->rotated);

	if (err)
		return err;
	if (r->rotated && !r->o.quiet)
		cmd_err("the previous %s is now %s.old", r->o.dir, r->o.dir);
	r->absdir = realpath(r->o.dir, NULL);
	if (!r->absdir || (err = set_env(&r->o, r->absdir)) ||
	    asprintf(&r->data, "%s/perf.data", r->absdir) < 0 ||
	    asprintf(&r->jitdata, "%s/perf.jit.data", r->absdir) < 0) {
		err = err ? err : -errno;
		cmd_err("%s: %s", r->o.dir, strerror(-err));
		return err;
	}
	return 0;
}

/* The command, under perf record unless --no-perf; r->status is its status. */
static int run_command(struct record *r)
{
	struct stat st;
	int err;

	clock_gettime(CLOCK_REALTIME_COARSE, &r->since);
	r->watch.since = r->since;
	if (r->o.pids) {
		struct attach_perf ap = { r->perf, r->data, r->event, r->o.freq, r->o.callgraph,
					  r->absdir, r->o.cmd, &r->watch };

		/* the processes wrote their files before the recording began */
		attach_since(&r->attach, &r->since);
		r->watch.since = r->since;
		err = attach_record(&r->attach, &ap, &r->status);
		if (err)
			return err;
	} else {
		err = r->o.no_perf ? run(r->o.cmd, &r->status, NULL)
				   : record_with_perf(&r->o, r->perf, r->event, r->data, &r->status,
						      &r->watch);
	}
	if (err) {
		cmd_err("cannot run %s: %s", r->o.no_perf ? r->o.cmd[0] : r->perf, strerror(-err));
		r->status = 1;
		return err;
	}
	if (stopped && !r->o.quiet)
		cmd_err("interrupted by %s: keeping what was recorded until then",
			stopped == SIGINT ? "SIGINT (Ctrl-C)" : "SIGTERM");
	if (!r->o.no_perf && (stat(r->data, &st) || st.st_size == 0)) {
		/* perf failed before the command ran: its message says why */
		cmd_err("perf record failed (exit status %d) and recorded nothing; %s %s",
			r->status, r->o.dir, r->rotated ? "is left as it was" : "was not created");
		undo_dir(r->o.dir, r->rotated);
		r->status = r->status ? r->status : 1;
		return -EIO;
	}
	return 0;
}

/*
 * The files of processes in containers, held while they lived, into DIR
 * before inject looks for them there; those attached to (still running)
 * looked at once more first.
 */
static int save_held(struct record *r)
{
	if (r->o.no_perf)
		return 0;
	for (size_t i = 0; i < r->attach.npids; i++)
		if (collect_watch(&r->watch, r->attach.pids[i]) == -ENOMEM)
			break;
	collect_watch_save(&r->watch, r->absdir);
	return 0;
}

/* jitperf inject; a failure (said) keeps perf.data and is not the run's failure. */
static int inject_jit(struct record *r)
{
	int err;

	if (r->o.no_perf)
		return 0;
	step_begin(&r->o, "jitperf record: injecting JIT code (jitperf inject) ...\n");
	err = ij_inject(r->data, r->jitdata, r->absdir);
	step_end();
	if (err)
		cmd_err("no %s/perf.jit.data (see above); %s/perf.data is kept", r->o.dir, r->o.dir);
	return 0;
}

/*
 * Every process's jitdump (wherever its runtime wrote it) and perf map,
 * brought into DIR; what cannot be is said and is not the run's failure.
 */
static int collect_files(struct record *r)
{
	int err;

	step_begin(&r->o, "jitperf record: collecting jitdumps and perf maps ...\n");
	/* no perf.data: the files in DIR say which processes ran */
	err = r->o.no_perf ? collect_dir(r->absdir, r->since, &r->collected)
			   : collect_run(r->absdir, r->data, r->since, &r->collected);
	step_end();
	if (err == -ENOMEM) {
		cmd_err("%s", strerror(ENOMEM));
		return err;
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record r = { .status = 1 };
	int err;

	err = parse(argc, argv, &r.o, &r.status);
	err = err ?: check_programs(&r);
	err = err ?: check_paranoid(&r);
	err = err ?: check_event(&r);
	err = err ?: make_dir(&r);
	err = err ?: choose_event(&r);
	err = err ?: run_command(&r);
	err = err ?: save_held(&r);
	err = err ?: inject_jit(&r);
	err = err ?: collect_files(&r);
	if (!err) {
		summary(&r.o, &r.collected, r.event);
		/* stopped by the user: perf ended the command with SIGTERM; say interrupted */
		if (interrupted)
			r.status = 128 + interrupted;
	}
	collect_free(&r.collected);
	collect_watch_free(&r.watch);
	attach_free(&r.attach);
	free(r.data);
	free(r.jitdata);
	free(r.absdir);
	free(r.perf);
	return r.status;
}
