/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inputs of jitperf convert.  What a file is comes from its first bytes:
 * "PERFILE2" is perf.data (read natively, tools/convert/cvperfdata.c; or
 * through `perf script` with an explicit field list), "JITPTRC\n" a jitperf trace, "JiTD"/"DTiJ" a jitdump; all
 * else is taken as perf script text.  A directory is a `jitperf record`
 * directory: perf.jit.data (or perf.data), jitperf-*.trace and jit-*.dump.
 */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cvinput.h"
#include "tools/perf.h"
#include "read/jitdump_read.h"
#include "tools/cmds.h"
#include "tools/jitsym.h"

__attribute__((format(printf, 4, 5)))
static int fmt_err(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static int kind_of(const unsigned char *m, size_t n)
{
	if (n >= 8 && !memcmp(m, "PERFILE2", 8))
		return CV_PERFDATA;
	if (n >= 8 && !memcmp(m, "JITPTRC\n", 8))
		return CV_TRACE;
	if (n >= 4 && (!memcmp(m, "JiTD", 4) || !memcmp(m, "DTiJ", 4)))
		return CV_JITDUMP;
	return CV_TEXT;
}

/*
 * What a file's name says it is, for one whose magic says otherwise
 * (damaged, or not what its name says): "not a jitdump" beats "not perf
 * script text".  NULL when the name says nothing: text may have any name.
 */
struct named { const char *end, *what, *magic; };

static const struct named *named_binary(const char *path)
{
	static const struct named names[] = {
		{ ".dump", "jitdump", "JiTD" },
		{ ".trace", "jitperf trace", "JITPTRC" },
		{ "/perf.data", "perf.data file", "PERFILE2" },
		{ "/perf.jit.data", "perf.data file", "PERFILE2" },
	};
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t k = strlen(names[i].end);

		if ((n > k && !strcmp(path + n - k, names[i].end)) ||
		    (names[i].end[0] == '/' && !strcmp(path, names[i].end + 1)))
			return &names[i];
	}
	return NULL;
}

static int push(char ***v, size_t *n, const char *dir, const char *name)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	char *s;

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (dir ? asprintf(&s, "%s/%s", dir, name) < 0 : !(s = strdup(name)))
		return -ENOMEM;
	nv[(*n)++] = s;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int match(const char *name, const char *pre, const char *suf)
{
	size_t n = strlen(name), p = strlen(pre), s = strlen(suf);

	return n > p + s && !strncmp(name, pre, p) && !strcmp(name + n - s, suf);
}

static int open_dir(struct cv_input *in, const char *path, char *err, size_t errlen)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int have_jit = 0, have_plain = 0, ret = 0;

	if (!d)
		return fmt_err(err, errlen, -errno, "%s: %s", path, strerror(errno));
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, "perf.jit.data"))
			have_jit = 1;
		else if (!strcmp(de->d_name, "perf.data"))
			have_plain = 1;
		else if (match(de->d_name, "jitperf-", ".trace"))
			ret = push(&in->traces, &in->ntraces, path, de->d_name);
		else if (match(de->d_name, "jit-", ".dump"))
			ret = push(&in->dumps, &in->ndumps, path, de->d_name);
		if (ret)
			break;
	}
	closedir(d);
	if (ret)
		return fmt_err(err, errlen, ret, "%s: %s", path, strerror(-ret));
	if (in->ntraces)
		qsort(in->traces, in->ntraces, sizeof(char *), by_name);
	if (in->ndumps)
		qsort(in->dumps, in->ndumps, sizeof(char *), by_name);
	/* the injected data names the JIT code; the plain one only addresses */
	if ((have_jit || have_plain) &&
	    asprintf(&in->perfdata, "%s/%s", path, have_jit ? "perf.jit.data" : "perf.data") < 0)
		return -ENOMEM;
	if (!in->perfdata && !in->ntraces && !in->ndumps)
		return fmt_err(err, errlen, -ENOENT,
			       "%s: not a jitperf record directory (no perf.data, trace or jitdump)",
			       path);
	in->has_samples = in->perfdata != NULL;
	in->has_calls = in->ntraces > 0;
	return 0;
}

int cv_input_open(struct cv_input *in, const char *path, char *err, size_t errlen)
{
	const struct named *named;
	struct stat st;
	ssize_t n;
	int fd;

	memset(in, 0, sizeof(*in));
	in->fd = -1;
	in->path = path;
	if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		in->kind = CV_DIR;
		return open_dir(in, path, err, errlen);
	}
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0)
		return fmt_err(err, errlen, -errno, "%s: %s", path, strerror(errno));
	/* a pipe may deliver the first bytes in pieces */
	while (in->npeek < sizeof(in->peek)) {
		n = read(fd, in->peek + in->npeek, sizeof(in->peek) - in->npeek);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			if (fd)
				close(fd);
			return fmt_err(err, errlen, -e, "%s: %s", path, strerror(e));
		}
		if (n == 0)
			break;
		in->npeek += n;
	}
	in->kind = kind_of((unsigned char *)in->peek, in->npeek);
	if (in->kind == CV_TEXT && (named = named_binary(path))) {
		if (fd)
			close(fd);
		return fmt_err(err, errlen, -EINVAL, "%s: not a %s (it does not begin with %s)",
			       path, named->what, named->magic);
	}
	if (in->kind == CV_TEXT) {
		in->fd = fd;
		in->has_samples = 1;
		return 0;
	}
	if (fd)
		close(fd);
	/* perf record -o - | jitperf convert -: the rest of the stream follows the peek */
	if (!strcmp(path, "-") && in->kind == CV_PERFDATA) {
		in->perfdata = strdup(path);
		in->has_samples = 1;
		return in->perfdata ? 0 : -ENOMEM;
	}
	if (!strcmp(path, "-"))
		return fmt_err(err, errlen, -EINVAL,
			       "-: binary input on standard input: give its file name");
	switch (in->kind) {
	case CV_PERFDATA:
		in->perfdata = strdup(path);
		in->has_samples = 1;
		return in->perfdata ? 0 : -ENOMEM;
	case CV_TRACE:
		in->has_calls = 1;
		return push(&in->traces, &in->ntraces, NULL, path) ? -ENOMEM : 0;
	default:
		return push(&in->dumps, &in->ndumps, NULL, path) ? -ENOMEM : 0;
	}
}

void cv_input_close(struct cv_input *in)
{
	size_t i;

	if (in->fd > 0)
		close(in->fd);
	in->fd = -1;
	for (i = 0; i < in->ntraces; i++)
		free(in->traces[i]);
	for (i = 0; i < in->ndumps; i++)
		free(in->dumps[i]);
	free(in->traces);
	free(in->dumps);
	free(in->perfdata);
	in->traces = in->dumps = NULL;
	in->perfdata = NULL;
	in->ntraces = in->ndumps = 0;
}

/*
 * What `perf evlist -v` says of every event of the file: whether it records
 * its period (-c N recordings do not, and perf script refuses to print a
 * missing field) and whether its clock is CLOCK_MONOTONIC (perf record -k 1,
 * the clock of traces and jitdumps; -1 when perf cannot tell).
 */
static void perf_attrs(const char *perf, const char *data, int *period, int *monotonic)
{
	const char *const args[] = { "evlist", "-v", "-i", data, NULL };
	char line[4096];
	int nevents = 0, fd;
	pid_t pid;
	FILE *f;

	*period = 0;
	*monotonic = -1;
	if (perf_spawn(perf, args, &(struct perf_io){ .out = &fd, .errfd = -1 }, &pid))
		return;
	f = fdopen(fd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		const char *st = strstr(line, "sample_type:"), *ck = strstr(line, " clockid: ");

		if (!st)
			continue;
		nevents++;
		if (!strstr(st, "PERIOD"))
			*period = 0;
		else if (nevents == 1)
			*period = 1;
		*monotonic = (nevents == 1 || *monotonic) && ck && atoi(ck + 10) == 1 /* CLOCK_MONOTONIC */;
	}
	if (f)
		fclose(f);
	else
		close(fd);
	perf_wait(pid);
	if (!nevents) {                /* perf could not tell: no warning */
		*period = 0;
		*monotonic = -1;
	}
}

/* perf's last message line, held back in errf: it completes ours on failure. */
static void last_line(FILE *errf, char *last, size_t len)
{
	char line[256];

	last[0] = 0;
	rewind(errf);
	while (fgets(line, sizeof(line), errf))
		if (line[0] != '\n')
			snprintf(last, len, "%s", line);
	last[strcspn(last, "\n")] = 0;
}

/*
 * JIT frames named from the recording's own copies of perf maps and
 * jitdumps (tools/jitsym.h), as jitperf report names them: perf read
 * /tmp/perf-PID.map, which may be gone or belong to another process now.
 * NULL keeps perf's name.
 */
static const char *jit_name(void *arg, const char *mod, size_t modn, const char *pc,
			    size_t pcn, const char *sym, size_t symn)
{
	char dso[PATH_MAX], name[1024], hex[24];
	const char *out;

	if (!memmem(mod, modn, "perf-", 5) && !memmem(mod, modn, "jitted-", 7))
		return NULL;
	if (modn >= sizeof(dso) || symn >= sizeof(name) || pcn >= sizeof(hex))
		return NULL;
	memcpy(dso, mod, modn);
	dso[modn] = '\0';
	memcpy(name, sym, symn);
	name[symn] = '\0';
	memcpy(hex, pc, pcn);
	hex[pcn] = '\0';
	if (jitsym_frame(arg, dso, name, strtoull(hex, NULL, 16), &out) != 1 || out == name)
		return NULL;
	return out;
}

/* The record directory a perf.data lies in: its copies name the JIT code. */
static struct jitsym *jit_names_of(const char *data)
{
	struct jitsym *js = NULL;
	char *dir = strdup(data), *slash;

	if (!dir)
		return NULL;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (jitsym_new(&js, slash ? (slash == dir ? "/" : dir) : "."))
		js = NULL;
	free(dir);
	return js;
}

/* Stream `perf script` output of a perf.data through the parser. */
int cv_read_perfscript(const char *data, unsigned flags, int with_calls,
			 const struct cv_sink *sink, void *arg, char *err, size_t errlen)
{
	const char *args[] = { "script", "-i", data, "-F", NULL, "--ns", NULL };
	int period, monotonic, fd, status, ret;
	char *name = NULL, *perf;
	struct jitsym *js = NULL;
	struct ps_parser *p;
	FILE *errf;
	pid_t pid;

	perf = perf_find();
	if (!perf)
		return fmt_err(err, errlen, -ENOENT, "%s: perf not found, needed to read it "
			       "(" PERF_INSTALL_HINT ")", data);
	perf_attrs(perf, data, &period, &monotonic);
	/* --srcline: perf prints each frame's line under it, read as text is */
	if (flags & PS_SRCLINE)
		args[4] = period ? "comm,pid,tid,time,period,event,ip,sym,dso,srcline"
				 : "comm,pid,tid,time,event,ip,sym,dso,srcline";
	else
		args[4] = period ? "comm,pid,tid,time,period,event,ip,sym,dso"
				 : "comm,pid,tid,time,event,ip,sym,dso";
	if (flags & PS_INLINE)
		cmd_err("%s: --inline is not applied to call graphs perf script unwinds", data);
	if (monotonic == 0 && with_calls)
		cmd_err("%s was not recorded with perf record -k 1 "
			"(CLOCK_MONOTONIC): its samples are not on the timeline of the traced calls",
			data);
	p = asprintf(&name, "%s (perf script)", data) < 0 ? NULL :
	    ps_new(flags | PS_PERFDATA, name, sink->sample, arg);
	free(name);
	if (p && (js = jit_names_of(data)))
		ps_set_resolver(p, jit_name, js);
	/* perf's messages are held back: on failure its last line completes ours */
	errf = p ? tmpfile() : NULL;
	if (!errf) {
		ps_free(p);
		jitsym_free(js);
		free(perf);
		return -ENOMEM;
	}
	ret = perf_spawn(perf, args, &(struct perf_io){ .out = &fd, .errfd = fileno(errf) },
			 &pid);
	free(perf);
	if (ret) {
		fclose(errf);
		ps_free(p);
		jitsym_free(js);
		return fmt_err(err, errlen, ret, "%s: cannot run perf script: %s", data,
			       strerror(-ret));
	}
	ret = ps_parse_fd(p, fd);
	if (ret)
		snprintf(err, errlen, "%s", ps_error(p));
	close(fd);        /* perf gets EPIPE if we stopped early */
	status = perf_wait(pid);
	if (!ret && status) {
		char last[256];

		last_line(errf, last, sizeof(last));
		ret = -EIO;
		if (status < 256)
			snprintf(err, errlen, "%s: perf script failed (exit status %d)%s%s", data,
				 status, last[0] ? ": " : "", last);
		else
			snprintf(err, errlen, "%s: perf script killed by signal %d", data,
				 status - 256);
	} else if (!ret) {
		char buf[4096];
		size_t n;

		rewind(errf);        /* perf's warnings, e.g. lost samples */
		while ((n = fread(buf, 1, sizeof(buf), errf)) > 0)
			fwrite(buf, 1, n, stderr);
	}
	fclose(errf);
	ps_free(p);
	jitsym_free(js);
	return ret;
}

static int read_text(struct cv_input *in, unsigned flags, const struct cv_sink *sink, void *arg,
		     char *err, size_t errlen)
{
	struct ps_parser *p = ps_new(flags, in->path, sink->sample, arg);
	int ret;

	if (!p)
		return -ENOMEM;
	/* a file is read again from its start (the parser maps it); a pipe
	 * continues after the bytes read to recognise it */
	ret = in->fd > 0 && lseek(in->fd, 0, SEEK_SET) == 0 ? 0 : ps_feed(p, in->peek, in->npeek);
	if (!ret)
		ret = ps_parse_fd(p, in->fd);
	if (ret)
		snprintf(err, errlen, "%s", ps_error(p));
	ps_free(p);
	return ret;
}

/* code loads of one jitdump */
static int cv_read_jitdump(const char *path, const struct cv_sink *sink, void *arg,
			   char *err, size_t errlen)
{
	struct jd_file *f;
	struct jd_record r;
	int ret;

	ret = jd_open(&f, path, err, errlen);
	if (ret)
		return ret;
	while ((ret = jd_next(f, &r, err, errlen)) == 1) {
		struct cv_code c = {
			.pid = r.pid, .tid = r.tid, .ts_ns = r.timestamp,
			.index = r.code_index, .len = r.code_size, .name = r.name,
		};

		if (r.id == JIT_CODE_LOAD) {
			c.kind = JPT_CODE_LOAD;
			c.addr = r.code_addr;
		} else if (r.id == JIT_CODE_MOVE) {
			c.kind = JPT_CODE_MOVE;
			c.addr = r.new_code_addr;
			c.name = "";
		} else {
			continue;
		}
		ret = sink->code(&c, arg);
		if (ret)
			break;
	}
	jd_close(f);
	return ret < 0 ? ret : 0;
}

int cv_input_read(struct cv_input *in, unsigned flags, const struct cv_sink *sink, void *arg,
		  char *err, size_t errlen)
{
	int ret = 0, had_code = 0;
	size_t i;

	if (in->kind == CV_TEXT)
		return read_text(in, flags, sink, arg, err, errlen);
	for (i = 0; i < in->ntraces && !ret; i++)
		ret = cv_read_trace(in->traces[i], (uint32_t)i, sink, arg, 1, &had_code, err,
				    errlen);
	/* code loads come from the traces; the jitdump only when they have none */
	for (i = 0; i < in->ndumps && !ret && !had_code; i++)
		ret = cv_read_jitdump(in->dumps[i], sink, arg, err, errlen);
	if (!ret && in->perfdata)
		ret = cv_read_perfdata(in->perfdata, in->peek, in->npeek, flags, in->ntraces > 0, sink, arg, err, errlen);
	return ret;
}
