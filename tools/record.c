/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf record: run a command under `perf record -k 1` with libjitperf's
 * environment set, then `perf inject --jit`, and say what was recorded.
 * Everything lands in one directory (default jitperf.data); JITPERF_DIR
 * is absolute so every process of the run, children included, writes there.
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "perf.h"
#include "rundir.h"
#include "read/stats_read.h"

static const char usage_text[] =
	"usage: jitperf record [-o DIR] [-e EVENT] [-F FREQ] [-g | --call-graph fp|dwarf]\n"
	"                      [--instrument[=N]] [--counters LIST] [--no-perf] -- COMMAND [ARG...]\n"
	"\n"
	"Run COMMAND under perf record -k 1 with JITPERF=perfmap,jitdump and\n"
	"JITPERF_DIR=DIR, then perf inject --jit.  DIR gets perf.data, perf.jit.data\n"
	"and the jitdump, trace and stats files of every process of the run.\n"
	"\n"
	"  -o, --output DIR      record directory (default jitperf.data; an existing\n"
	"                        one is renamed DIR.old)\n"
	"  -e, --event EVENT     perf event (default cycles, or cpu-clock where hardware\n"
	"                        events are not supported)\n"
	"  -F, --freq FREQ       sampling frequency in Hz (or max)\n"
	"  -g                    record call graphs (frame pointers)\n"
	"      --call-graph MODE call graphs by fp or dwarf\n"
	"      --instrument[=N]  also trace calls and keep statistics (JITPERF trace,stats);\n"
	"                        with N, trace 1 call in N (counts stay exact)\n"
	"      --counters LIST   hardware counters read at each instrumented call\n"
	"                        (implies --instrument)\n"
	"      --no-perf         only run COMMAND with the instrumentation environment\n"
	"  -q, --quiet           no summary\n"
	"  -h, --help            show this help\n"
	"\n"
	"Exits with COMMAND's status (128+N if killed by signal N, or if jitperf\n"
	"itself got SIGINT or SIGTERM N and stopped the recording).\n";

struct record_opts {
	const char *dir, *event, *freq, *callgraph, *counters;
	const char *sample;      /* --instrument=N */
	int         instrument, no_perf, quiet;
	char      **cmd;
};

static volatile pid_t child = -1;
static volatile sig_atomic_t interrupted;   /* signal sent to jitperf itself */

/*
 * Ctrl-C reaches perf and the command through the terminal; a SIGINT or
 * SIGTERM sent to jitperf alone is passed on to perf, which stops the
 * recording cleanly.  Either way jitperf lives on to inject and summarize.
 */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (child > 0 && si->si_code != SI_KERNEL) {
		interrupted = sig;
		kill(child, sig);
	}
}

static int run(char **argv, int *status)
{
	struct sigaction sa = { 0 }, old_int, old_term;
	int st, err = 0;

	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* before fork: no window in which a signal kills jitperf but not perf */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	child = fork();
	if (child < 0) {
		err = -errno;
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		return err;
	}
	if (child == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, "jitperf record: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(child, &st, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			break;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	child = -1;
	if (err)
		return err;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	return 0;
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

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

/* DIR becomes DIR.old (an older DIR.old is removed); a fresh DIR is made. */
static int prepare_dir(const char *dir, int *rotated)
{
	struct stat st;
	char *old;
	int err = 0;

	if (lstat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			cmd_err("%s exists and is not a directory", dir);
			return -ENOTDIR;
		}
		if (asprintf(&old, "%s.old", dir) < 0)
			return -ENOMEM;
		if (lstat(old, &st) == 0 && nftw(old, rm_entry, 16, FTW_DEPTH | FTW_PHYS))
			err = -errno;
		if (!err && rename(dir, old))
			err = -errno;
		*rotated = !err;
		if (err)
			cmd_err("cannot move %s to %s: %s", dir, old, strerror(-err));
		free(old);
		if (err)
			return err;
	}
	if (mkdir(dir, 0777)) {
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

	if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) || !rotated ||
	    asprintf(&old, "%s.old", dir) < 0)
		return;
	rename(old, dir);
	free(old);
}

static int set_env(const struct record_opts *o, const char *absdir)
{
	const char *outputs = o->instrument ? "perfmap,jitdump,trace,stats" : "perfmap,jitdump";

	if (setenv("JITPERF", outputs, 1) || setenv("JITPERF_DIR", absdir, 1))
		return -errno;
	if (o->sample && setenv("JITPERF_SAMPLE", o->sample, 1))
		return -errno;
	if (o->counters && setenv("JITPERF_COUNTERS", o->counters, 1))
		return -errno;
	return 0;
}

static int record_with_perf(const struct record_opts *o, const char *perf, const char *event,
			    const char *data, int *status)
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
		err = run(all, status);
		free(all);
		return err;
	}
}

static int inject(const char *perf, const char *in, const char *out)
{
	char *argv[] = { (char *)perf, (char *)"inject", (char *)"--jit", (char *)"-i", (char *)in,
			 (char *)"-o", (char *)out, NULL };
	int status = 0, err = run(argv, &status);

	return err ? err : status;
}

static void summary(const struct record_opts *o, const char *event, int fell_back)
{
	struct rundir rd;
	uint64_t samples = 0, loads, calls = 0, instrumented = 0;
	char path[PATH_MAX], err[512];
	int have_samples = 0;

	if (rundir_scan(o->dir, &rd))
		return;
	loads = rundir_code_loads(&rd);
	for (size_t i = 0; i < rd.nstats; i++) {
		struct stats_file *s;

		if (stats_read(rd.stats[i], &s, err, sizeof(err))) {
			cmd_err("%s", err);
			continue;
		}
		instrumented += s->nrows;
		for (size_t r = 0; r < s->nrows; r++)
			calls += s->rows[r].calls;
		stats_free(s);
	}
	if (!o->no_perf) {
		snprintf(path, sizeof(path), "%s/perf.data", o->dir);
		have_samples = perfdata_samples(path, &samples) == 0;
	}
	/* libjitperf-cyg registers native functions: calls, but no code loads */
	if (loads == 0 && instrumented == 0)
		cmd_err("no JIT code registered: the program did not link libjitperf, or "
			"JITPERF was overwritten");
	if (o->quiet) {
		rundir_free(&rd);
		return;
	}
	fprintf(stderr, "jitperf record:");
	if (have_samples)
		fprintf(stderr, " %" PRIu64 " samples (%s%s),", samples, event,
			fell_back ? ", no hardware events here" : "");
	fprintf(stderr, " %" PRIu64 " JIT function%s registered by %zu process%s", loads,
		loads == 1 ? "" : "s", rd.ndumps, rd.ndumps == 1 ? "" : "es");
	if (o->instrument)
		fprintf(stderr, ", %" PRIu64 " calls instrumented", calls);
	fprintf(stderr, "\njitperf record: files in %s/:%s%s %zu jitdump%s", o->dir,
		rd.has_perf_data ? " perf.data," : "", rd.has_jit_data ? " perf.jit.data," : "",
		rd.ndumps, rd.ndumps == 1 ? "" : "s");
	if (o->instrument)
		fprintf(stderr, ", %zu trace%s, %zu stats file%s", rd.ntraces,
			rd.ntraces == 1 ? "" : "s", rd.nstats, rd.nstats == 1 ? "" : "s");
	fprintf(stderr, "\njitperf record: next: jitperf report %s; jitperf convert %s "
		"--chrome trace.json --svg flame.svg\n", o->dir, o->dir);
	rundir_free(&rd);
}

/* a decimal number in 1..UINT32_MAX */
static int positive(const char *s)
{
	char *end;
	unsigned long n;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	n = strtoul(s, &end, 10);
	return !*end && !errno && n > 0 && n <= UINT32_MAX;
}

/* 0 to go on; else *status is the exit status (help: 0, bad usage: 2). */
static int parse(int argc, char **argv, struct record_opts *o, int *status)
{
	enum { OPT_CALLGRAPH = 256, OPT_INSTRUMENT, OPT_COUNTERS, OPT_NOPERF };
	static const struct option opts[] = {
		{ "output",     required_argument, NULL, 'o' },
		{ "event",      required_argument, NULL, 'e' },
		{ "freq",       required_argument, NULL, 'F' },
		{ "call-graph", required_argument, NULL, OPT_CALLGRAPH },
		{ "instrument", optional_argument, NULL, OPT_INSTRUMENT },
		{ "counters",   required_argument, NULL, OPT_COUNTERS },
		{ "no-perf",    no_argument,       NULL, OPT_NOPERF },
		{ "quiet",      no_argument,       NULL, 'q' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->dir = "jitperf.data";
	optind = 1;
	/* "+": options end at the command's name */
	while ((c = getopt_long(argc, argv, "+o:e:F:gqh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o->dir = optarg; break;
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
				if (!positive(optarg)) {
					cmd_err("--instrument=N takes a positive number, "
						"not '%s'", optarg);
					return *status = 2, -EINVAL;
				}
				o->sample = optarg;
			}
			break;
		case OPT_COUNTERS: o->counters = optarg; o->instrument = 1; break;
		case OPT_NOPERF: o->no_perf = 1; break;
		default:
			*status = cmd_usage(usage_text, c == 'h');
			return -ECANCELED;
		}
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
	char       *perf;          /* NULL with --no-perf */
	char       *absdir, *data, *jitdata;
	const char *event;
	int         fell_back, rotated;
	int         status;        /* the exit status, once known */
};

/* perf and the command can be found, and perf may sample here. */
static int check_programs(struct record *r)
{
	char *cmd;

	if (!r->o.no_perf && !(r->perf = perf_find())) {
		cmd_err("perf not found: " PERF_INSTALL_HINT " (or use --no-perf)");
		r->status = 127;
		return -ENOENT;
	}
	cmd = find_exec(r->o.cmd[0]);
	if (!cmd) {
		cmd_err("%s: command not found", r->o.cmd[0]);
		r->status = 127;
		return -ENOENT;
	}
	free(cmd);
	return 0;
}

/* The event to sample: the user's, else cycles, else cpu-clock. */
static int choose_event(struct record *r)
{
	int paranoid;

	r->event = r->o.event;
	if (r->o.no_perf)
		return 0;
	paranoid = read_paranoid();
	/* 2 allows user-space sampling of one's own processes: all record needs */
	if (paranoid > 2 && !privileged()) {
		cmd_err("kernel.perf_event_paranoid is %d: perf may not sample here; allow it "
			"with: sysctl kernel.perf_event_paranoid=2", paranoid);
		return -EACCES;
	}
	if (!r->event && have_hw_cycles()) {
		r->event = "cycles";
	} else if (!r->event) {
		r->event = "cpu-clock";
		r->fell_back = 1;
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

	err = r->o.no_perf ? run(r->o.cmd, &r->status)
			   : record_with_perf(&r->o, r->perf, r->event, r->data, &r->status);
	if (err) {
		cmd_err("cannot run %s: %s", r->o.no_perf ? r->o.cmd[0] : r->perf, strerror(-err));
		r->status = 1;
		return err;
	}
	if (!r->o.no_perf && (stat(r->data, &st) || st.st_size == 0)) {
		/* perf failed before the command ran: its message says why */
		cmd_err("perf record failed (exit status %d) and recorded nothing; %s is "
			"left as it was", r->status, r->o.dir);
		undo_dir(r->o.dir, r->rotated);
		r->status = r->status ? r->status : 1;
		return -EIO;
	}
	return 0;
}

/*
 * The jitdumps of processes that were killed end in the zeros of their
 * grown tail: perf stops there by itself, the files in DIR are cut to
 * their records all the same.  Never the run's failure.
 */
static int trim_dumps(struct record *r)
{
	struct rundir rd;

	if (rundir_scan(r->o.dir, &rd) == 0) {
		rundir_trim_dumps(&rd);
		rundir_free(&rd);
	}
	return 0;
}

/* perf inject --jit; a failure keeps perf.data and is not the run's failure. */
static int inject_jit(struct record *r)
{
	int st;

	if (r->o.no_perf)
		return 0;
	st = inject(r->perf, r->data, r->jitdata);
	if (st)
		cmd_err("perf inject --jit failed (%s); %s/perf.data is kept",
			st < 0 ? strerror(-st) : "see its message above", r->o.dir);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record r = { .status = 1 };
	int err;

	err = parse(argc, argv, &r.o, &r.status);
	err = err ?: check_programs(&r);
	err = err ?: choose_event(&r);
	err = err ?: make_dir(&r);
	err = err ?: run_command(&r);
	err = err ?: trim_dumps(&r);
	err = err ?: inject_jit(&r);
	if (!err) {
		summary(&r.o, r.event, r.fell_back);
		/* stopped by the user: perf ended the command with SIGTERM; say interrupted */
		if (interrupted)
			r.status = 128 + interrupted;
	}
	free(r.data);
	free(r.jitdata);
	free(r.absdir);
	free(r.perf);
	return r.status;
}
