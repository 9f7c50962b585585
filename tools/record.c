/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf record: run a command under `perf record -k 1` with libjitperf's
 * environment set, then `perf inject --jit`, and say what was recorded.
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
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "pathsafe.h"
#include "rundir.h"
#include "stats_read.h"

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

/* Full path of an executable found the way execvp finds it, or NULL. */
static char *find_exec(const char *name)
{
	const char *path = getenv("PATH");
	char *buf;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? strdup(name) : NULL;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		int len = (int)(end - path);
		struct stat st;

		if (asprintf(&buf, "%.*s/%s", len ? len : 1, len ? path : ".", name) < 0)
			return NULL;
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return buf;
		free(buf);
		path = *end ? end + 1 : end;
	}
	return NULL;
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
 * removed without following any link inside it (remove_tree).  Anything
 * else there -- a link, a FIFO, a file, another user's directory -- may
 * have been planted (-o /tmp/rec): refused, and left as it is.
 */
static int clear_old(const char *old)
{
	struct stat st;
	int err;

	if (lstat(old, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "jitperf record: %s is %s, not an earlier recording: not replaced\n",
			old, kind_of(st.st_mode));
		return -EEXIST;
	}
	if (st.st_uid != geteuid()) {
		fprintf(stderr, "jitperf record: %s belongs to another user: not replaced\n", old);
		return -EPERM;
	}
	err = remove_tree(old);
	if (err)
		fprintf(stderr, "jitperf record: cannot remove %s: %s\n", old, strerror(-err));
	return err;
}

/* DIR, if it exists, must be a directory: the recording we rotate (renaming
 * it follows nothing, whoever it belongs to). */
static int check_dir(const char *dir, int *exists)
{
	const char *why;
	struct stat st;

	*exists = 0;
	if (path_planted(dir, &why)) {
		fprintf(stderr, "jitperf record: %s: %s\n", dir, why);
		return -EPERM;
	}
	if (lstat(dir, &st))
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "jitperf record: %s exists and is %s, not a directory\n", dir,
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
			fprintf(stderr, "jitperf record: cannot move %s to %s: %s\n", dir, old,
				strerror(errno));
		}
		*rotated = !err;
		free(old);
		if (err)
			return err;
	}
	if (mkdir(dir, 0755)) {
		err = -errno;
		fprintf(stderr, "jitperf record: cannot create %s: %s\n", dir, strerror(errno));
	}
	return err;
}

/* perf failed before the command ran: put back the DIR it replaced */
static void undo_dir(const char *dir, int rotated)
{
	char *old;

	if (rmdir(dir) || !rotated || asprintf(&old, "%s.old", dir) < 0)
		return;
	renameat2(AT_FDCWD, old, AT_FDCWD, dir, RENAME_NOREPLACE);
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
			fprintf(stderr, "jitperf record: %s\n", err);
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
		fprintf(stderr, "jitperf record: no JIT code registered: the program did not "
			"link libjitperf, or JITPERF was overwritten\n");
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

static int parse(int argc, char **argv, struct record_opts *o)
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
				fprintf(stderr, "jitperf record: -F takes a frequency in Hz "
					"or max, not '%s'\n", optarg);
				return 2;
			}
			o->freq = optarg;
			break;
		case 'g': o->callgraph = "fp"; break;
		case 'q': o->quiet = 1; break;
		case OPT_CALLGRAPH:
			if (strcmp(optarg, "fp") && strcmp(optarg, "dwarf") &&
			    strncmp(optarg, "dwarf,", 6) && strcmp(optarg, "lbr")) {
				fprintf(stderr, "jitperf record: --call-graph takes fp or dwarf, "
					"not '%s'\n", optarg);
				return 2;
			}
			o->callgraph = optarg;
			break;
		case OPT_INSTRUMENT:
			o->instrument = 1;
			if (optarg) {
				if (!positive(optarg)) {
					fprintf(stderr, "jitperf record: --instrument=N takes a "
						"positive number, not '%s'\n", optarg);
					return 2;
				}
				o->sample = optarg;
			}
			break;
		case OPT_COUNTERS: o->counters = optarg; o->instrument = 1; break;
		case OPT_NOPERF: o->no_perf = 1; break;
		default:
			return cmd_usage(usage_text, c == 'h');
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "jitperf record: no command given\n%s", usage_text);
		return 2;
	}
	o->cmd = argv + optind;
	return -1;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	char *perf = NULL, *cmd, *absdir = NULL, *data = NULL, *jitdata = NULL;
	const char *event;
	int status = 1, fell_back = 0, rotated = 0, err, r;

	r = parse(argc, argv, &o);
	if (r >= 0)
		return r;
	if (!o.no_perf && !(perf = find_exec("perf"))) {
		fprintf(stderr, "jitperf record: perf not found: install it with: apt-get install "
			"linux-perf (or use --no-perf)\n");
		return 127;
	}
	cmd = find_exec(o.cmd[0]);
	if (!cmd) {
		fprintf(stderr, "jitperf record: %s: command not found\n", o.cmd[0]);
		free(perf);
		return 127;
	}
	free(cmd);
	event = o.event;
	if (!o.no_perf) {
		int paranoid = read_paranoid();

		/* 2 allows user-space sampling of one's own processes: all record needs */
		if (paranoid > 2 && !privileged()) {
			fprintf(stderr, "jitperf record: kernel.perf_event_paranoid is %d: perf "
				"may not sample here; allow it with: sysctl "
				"kernel.perf_event_paranoid=2\n", paranoid);
			free(perf);
			return 1;
		}
		if (!event && have_hw_cycles()) {
			event = "cycles";
		} else if (!event) {
			event = "cpu-clock";
			fell_back = 1;
			fprintf(stderr, "jitperf record: hardware events are not supported here; "
				"sampling cpu-clock instead\n");
		}
	}
	if (prepare_dir(o.dir, &rotated)) {
		free(perf);
		return 1;
	}
	absdir = realpath(o.dir, NULL);
	if (!absdir || (err = set_env(&o, absdir))) {
		fprintf(stderr, "jitperf record: %s: %s\n", o.dir, strerror(errno));
		free(absdir);
		free(perf);
		return 1;
	}
	if (o.no_perf) {
		err = run(o.cmd, &status);
	} else {
		if (asprintf(&data, "%s/perf.data", absdir) < 0 ||
		    asprintf(&jitdata, "%s/perf.jit.data", absdir) < 0) {
			fprintf(stderr, "jitperf record: %s\n", strerror(ENOMEM));
			free(absdir);
			free(perf);
			return 1;
		}
		err = record_with_perf(&o, perf, event, data, &status);
		if (!err) {
			struct stat st;

			if (stat(data, &st) || st.st_size == 0) {
				/* perf failed before the command ran: its message says why */
				fprintf(stderr, "jitperf record: perf record failed (exit status %d) "
					"and wrote no %s/perf.data\n", status, o.dir);
				undo_dir(o.dir, rotated);
				free(data);
				free(jitdata);
				free(absdir);
				free(perf);
				return status ? status : 1;
			}
			if ((r = inject(perf, data, jitdata)) != 0)
				fprintf(stderr, "jitperf record: perf inject --jit failed (%s); "
					"%s/perf.data is kept\n",
					r < 0 ? strerror(-r) : "see its message above", o.dir);
		}
	}
	if (err)
		fprintf(stderr, "jitperf record: cannot run %s: %s\n",
			o.no_perf ? o.cmd[0] : perf, strerror(-err));
	else
		summary(&o, event, fell_back);
	free(data);
	free(jitdata);
	free(absdir);
	free(perf);
	if (err)
		return 1;
	/* stopped by the user: perf ended the command with SIGTERM; say interrupted */
	return interrupted ? 128 + interrupted : status;
}
