/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sessions: options and environment, opening and closing the outputs, the
 * process-wide default session, and fork().
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "format/standby.h"
#include "lib/instr/instrument.h"

/* Open sessions, so the fork handlers can give the child its own files. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct jitperf *registry;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void install_atfork(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void registry_add(struct jitperf *jp)
{
	pthread_once(&atfork_once, install_atfork);
	pthread_mutex_lock(&registry_lock);
	jp->next_open = registry;
	registry = jp;
	pthread_mutex_unlock(&registry_lock);
}

static void registry_remove(struct jitperf *jp)
{
	struct jitperf **pp;

	pthread_mutex_lock(&registry_lock);
	for (pp = &registry; *pp; pp = &(*pp)->next_open)
		if (*pp == jp) {
			*pp = jp->next_open;
			break;
		}
	pthread_mutex_unlock(&registry_lock);
}

/*
 * A recorder's request, from lib/standby.c's listener: jp_standby_wake
 * for every standby session of the process, one reply line each.
 */
static void wake_sessions(const char *dir, char *out, size_t outlen)
{
	struct jitperf *jp;
	size_t used = 0;

	out[0] = '\0';
	pthread_mutex_lock(&registry_lock);
	for (jp = registry; jp; jp = jp->next_open) {
		char path[PATH_MAX];
		uint64_t n;
		int err;

		pthread_mutex_lock(&jp->lock);
		if (!(jp->outputs & JITPERF_STANDBY) || jp->closed) {
			pthread_mutex_unlock(&jp->lock);
			continue;
		}
		err = jp_standby_wake(jp, dir, &n, path, sizeof(path));
		/* the recorder's directory is not ours to write (root recording
		 * another user's process): the session's own directory then */
		if (err == -EACCES && dir)
			err = jp_standby_wake(jp, NULL, &n, path, sizeof(path));
		pthread_mutex_unlock(&jp->lock);
		if (used < outlen) {
			int k = err ? snprintf(out + used, outlen - used, JPSTANDBY_ERROR "%s\n",
					       jp_standby_strerror(err))
				    : snprintf(out + used, outlen - used, JPSTANDBY_OK "%llu %s\n",
					       (unsigned long long)n, path);

			used += k > 0 ? (size_t)k : 0;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	if (!out[0])
		snprintf(out, outlen, JPSTANDBY_NOTHING);      /* nothing was in standby any more */
}

/*
 * libbpf's OPTS_VALID: accept a struct from an older caller (shorter, the
 * missing fields read as 0) or from a newer one (longer, but only if the
 * fields we do not know are all zero).
 */
int jp_opts_copy(void *dst, size_t dst_size, const void *src, size_t src_size)
{
	const unsigned char *tail = (const unsigned char *)src + dst_size;
	size_t i;

	memset(dst, 0, dst_size);
	/* a garbage size (an uninitialised struct) must not make us read far */
	if (src_size < sizeof(size_t) || src_size > dst_size + 4096)
		return -EINVAL;
	for (i = dst_size; i < src_size; i++)
		if (tail[i - dst_size])
			return -EINVAL;
	memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
	return 0;
}

/*
 * Everything except the files: options, environment, the output directory
 * (made when missing and an output goes there), lock.
 */
static int session_setup(struct jitperf *jp, const struct jitperf_options *opts)
{
	struct jitperf_options o;
	char real[PATH_MAX];
	const char *dir, *counters;
	int err;

	if (opts) {
		err = jp_opts_copy(&o, sizeof(o), opts, opts->size);
		if (err) {
			jp_debug("struct jitperf_options: bad size %zu or non-zero unknown fields",
				 opts->size);
			return err;
		}
	} else {
		memset(&o, 0, sizeof(o));
	}

	if (o.outputs & ~(unsigned)(JITPERF_PERFMAP | JITPERF_JITDUMP | JITPERF_TRACE | JITPERF_STATS |
				    JITPERF_STANDBY)) {
		jp_debug("unknown output bits %#x", o.outputs);
		return -EINVAL;
	}
	jp->outputs = o.outputs;
	if (jp->outputs & JITPERF_STANDBY)      /* what it holds back */
		jp->outputs |= JITPERF_PERFMAP | JITPERF_JITDUMP;
	if (!jp->outputs) {
		err = jp_parse_outputs(jp_getenv("JITPERF"), &jp->outputs);
		if (err)
			return err;
	}

	err = jp_instr_setup(jp, &o);
	if (err)
		return err;

	err = jp_parse_clock(jp_getenv("JITPERF_CLOCK"));
	if (err)
		return err;
	if (jp_getenv("JITPERF_CLOCK") && !(jp->clock = strdup(jp_getenv("JITPERF_CLOCK"))))
		return -ENOMEM;

	if (o.tier_tags > JITPERF_TIER_TAGS_OFF) {
		jp_debug("unknown tier_tags %u", o.tier_tags);
		return -EINVAL;
	}
	if (o.tier_tags)
		jp->tier_tags = o.tier_tags == JITPERF_TIER_TAGS_ON;
	else if ((err = jp_parse_tier_tags(jp_getenv("JITPERF_TIER_TAGS"), &jp->tier_tags)))
		return err;

	counters = o.counters ? o.counters : jp_getenv("JITPERF_COUNTERS");
	if (counters && *counters && !(jp->counters = strdup(counters)))
		return -ENOMEM;

	/* Absolute, so a child that changed directory writes beside its parent. */
	dir = o.dir ? o.dir : jp_getenv("JITPERF_DIR") ? jp_getenv("JITPERF_DIR") : ".";
	jp->dir = strdup(dir);          /* as named, for a message if it cannot be made */
	if (!jp->dir)
		return -ENOMEM;
	/* standby writes nothing, not even a directory, before a recorder attaches */
	if (!realpath(dir, real) && errno == ENOENT &&
	    (jp->outputs & (JITPERF_TRACE | JITPERF_STATS) ||
	     (jp->outputs & (JITPERF_JITDUMP | JITPERF_STANDBY)) == JITPERF_JITDUMP)) {
		err = jp_mkdir_p(dir);
		if (err)
			return err;
	}
	if (realpath(dir, real)) {
		free(jp->dir);
		if (!(jp->dir = strdup(real)))
			return -ENOMEM;
	}

	jp->debug = jp_debug_enabled();
	jp->pid = getpid();
	jp->opened_ns = jp_monotonic_ns();
	if (pthread_mutex_init(&jp->lock, NULL))
		return -ENOMEM;
	return 0;
}

/* *where: the file (the perf map) or the directory (the rest) of the
 * output that could not be opened; buf holds it when it is made. */
static int open_outputs(struct jitperf *jp, const char **where, char *buf, size_t buflen)
{
	int err;

	if (jp->outputs & JITPERF_STANDBY)
		return jp_standby_listen(wake_sessions);  /* files opened when a recorder attaches */
	if (jp->outputs & JITPERF_PERFMAP) {
		err = jp_perfmap_open(&jp->perfmap, jp->pid);
		if (err) {
			jp_perfmap_name(buf, buflen, jp->pid);
			*where = buf;
			return err;
		}
	}
	if (jp->outputs & JITPERF_JITDUMP) {
		err = jp_jitdump_open(&jp->jitdump, jp->dir, jp->pid);
		if (err)
			return err;
	}
	return 0;
}

/* Free what session_setup and open_outputs made; the struct itself stays. */
static void session_release(struct jitperf *jp)
{
	jp_jitdump_drop(jp->jitdump);
	jp->jitdump = NULL;
	/* opened by us and empty: the file is worthless */
	jp_perfmap_discard(jp->perfmap);
	jp->perfmap = NULL;
	jp_codetab_free(jp->codes);
	jp->codes = NULL;
	free(jp->dir);
	free(jp->counters);
	free(jp->clock);
	jp->dir = jp->counters = jp->clock = NULL;
	jp->outputs = 0;
}

/*
 * Options, then the outputs.  On failure where (when not NULL) gets the
 * perf map's path or the directory the failing output was to be in, or ""
 * if the options themselves failed.
 */
static int session_init(struct jitperf *jp, const struct jitperf_options *opts,
			char *where, size_t wherelen)
{
	const char *dir = NULL;
	char file[64];
	int err;

	err = session_setup(jp, opts);
	if (err) {
		if (where)
			snprintf(where, wherelen, "%s", jp->dir ? jp->dir : "");
		session_release(jp);
		return err;
	}
	err = open_outputs(jp, &dir, file, sizeof(file));
	if (!err)
		err = jp_instr_open(jp);
	if (err) {
		if (where)
			snprintf(where, wherelen, "%s", dir ? dir : jp->dir);
		session_release(jp);
		pthread_mutex_destroy(&jp->lock);
		return err;
	}
	registry_add(jp);
	return 0;
}

int jitperf_open(jitperf **out, const struct jitperf_options *opts)
{
	struct jitperf *jp;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	jp = calloc(1, sizeof(*jp));
	if (!jp)
		return -ENOMEM;
	err = session_init(jp, opts, NULL, 0);
	if (err) {
		free(jp);
		return err;
	}
	*out = jp;
	return 0;
}

int jitperf_close(jitperf *jp)
{
	int err, err2;

	if (!jp)
		return 0;
	pthread_mutex_lock(&jp->lock);
	if (jp->closed) {               /* the default session, closed twice */
		pthread_mutex_unlock(&jp->lock);
		return 0;
	}
	jp->closed = 1;
	pthread_mutex_unlock(&jp->lock);
	registry_remove(jp);

	/* statistics and trace first: they may still name code */
	err = jp_instr_close(jp);
	pthread_mutex_lock(&jp->lock);
	err2 = jp_tiers_close(jp);
	err2 = jp_jitdump_close(jp->jitdump) ?: err2;
	jp->jitdump = NULL;
	jp_perfmap_close(jp->perfmap);
	jp->perfmap = NULL;
	__atomic_store_n(&jp->outputs, 0, __ATOMIC_RELAXED);   /* later calls: no-ops */
	jp_codetab_free(jp->codes);
	jp->codes = NULL;
	pthread_mutex_unlock(&jp->lock);
	if (!err)
		err = err2;

	if (jp->is_default)
		return err;             /* jitperf_default() keeps returning it */
	free(jp->dir);
	free(jp->counters);
	free(jp->clock);
	pthread_mutex_destroy(&jp->lock);
	free(jp);
	return err;
}

unsigned jitperf_outputs(const jitperf *jp)
{
	return jp ? __atomic_load_n(&jp->outputs, __ATOMIC_RELAXED) : 0;
}

/* ---- the default session */

static struct jitperf default_session;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_atexit(void)
{
	int err = jitperf_close(&default_session);

	if (err)                        /* no caller to return it to */
		jp_log_error("closing the default session: %s", jitperf_strerror(err));
}

/*
 * The environment is the user asking for outputs: when they cannot be had,
 * an error says so, whatever JITPERF_DEBUG says (a silent failure would
 * leave the user with nothing and no reason).
 */
static void say_inactive(int err, const char *where)
{
	const char *asked = jp_getenv("JITPERF"), *why = jp_env_reason();

	if (!asked)
		return;                 /* nothing asked: inactive is what was meant */
	if (why)                        /* a value refused: its own words */
		jp_log_error("JITPERF=%s: nothing is recorded: %s", asked, why);
	else if (where[0])              /* a directory or file: the system's words, or */
		jp_log_error("JITPERF=%s: nothing is recorded: %s: %s", asked, where,
			     err == -EPERM ? jitperf_strerror(err) : strerror(-err));  /* ours */
	else
		jp_log_error("JITPERF=%s: nothing is recorded: %s", asked, jitperf_strerror(err));
}

static void default_init(void)
{
	struct jitperf *jp = &default_session;
	char where[PATH_MAX];
	int err;

	jp->is_default = 1;
	jp_env_reason_clear();
	err = session_init(jp, NULL, where, sizeof(where));
	if (err) {
		say_inactive(err, where);
		/* never NULL: an inactive session, whose calls are no-ops */
		jp_debug("JITPERF: default session inactive: %s", jitperf_strerror(err));
		memset(jp, 0, sizeof(*jp));
		jp->is_default = 1;
		jp->sample_every = JITPERF_SAMPLE_ADAPTIVE;
		jp->pid = getpid();
		pthread_mutex_init(&jp->lock, NULL);
		jp_instr_open(jp);
		registry_add(jp);
	}
	atexit(default_atexit);
}

jitperf *jitperf_default(void)
{
	pthread_once(&default_once, default_init);
	return &default_session;
}

/* The function table is the instrumentation's (lib/instr/instrument.c);
 * which session NULL means is the session's. */
jitperf_fn jitperf_fn_register(jitperf *jp, const char *name, const void *addr, size_t len)
{
	return jp_fn_register(jp ? jp : jitperf_default(), name, addr, len);
}

/* ---- fork: the child gets its own files; the parent's stay as they are */

static void atfork_prepare(void)
{
	struct jitperf *jp;

	jp_standby_atfork_prepare();
	pthread_mutex_lock(&registry_lock);
	for (jp = registry; jp; jp = jp->next_open) {
		pthread_mutex_lock(&jp->lock);
		jp_instr_atfork_prepare(jp);
	}
}

static void atfork_parent(void)
{
	struct jitperf *jp;

	for (jp = registry; jp; jp = jp->next_open) {
		jp_instr_atfork_parent(jp);
		pthread_mutex_unlock(&jp->lock);
	}
	pthread_mutex_unlock(&registry_lock);
	jp_standby_atfork_parent();
}

/* Re-announce the code the child inherited, so its samples are named too. */
static void reannounce(struct jitperf *jp)
{
	uint64_t i, n = jp_codetab_count(jp->codes);

	for (i = 1; i <= n; i++) {
		struct jp_code_entry *e = jp_codetab_get(jp->codes, i);
		struct jp_jitdump_load ld;

		if (!e->live)
			continue;
		if (jp->perfmap)
			jp_perfmap_write(jp->perfmap, e->addr, e->len, e->name);
		if (jp->jitdump) {
			memset(&ld, 0, sizeof(ld));
			ld.name = e->name;
			ld.addr = e->addr;
			ld.len = e->len;
			ld.index = i;
			ld.checked = 1;   /* freed without jitperf_code_unload: EFAULT, skipped */
			jp_jitdump_load(jp->jitdump, &ld);
		}
	}
}

static void child_reopen(struct jitperf *jp)
{
	/* our copies of the mappings go; the parent's files stay as they are */
	jp_jitdump_drop(jp->jitdump);
	jp->jitdump = NULL;
	jp_perfmap_drop(jp->perfmap);
	jp->perfmap = NULL;
	jp->pid = getpid();
	jp_tiers_atfork_child(jp);
	if (jp->outputs & JITPERF_STANDBY)
		return;         /* still standby, on the child's own pid (atfork_child) */
	if (jp->outputs & JITPERF_PERFMAP) {
		if (jp_perfmap_open(&jp->perfmap, jp->pid) < 0)
			jp->outputs &= ~(unsigned)JITPERF_PERFMAP;
	}
	if (jp->outputs & JITPERF_JITDUMP) {
		if (jp_jitdump_open(&jp->jitdump, jp->dir, jp->pid) < 0)
			jp->outputs &= ~(unsigned)JITPERF_JITDUMP;
	}
	/* in the files before fork() returns: a child that execs at once keeps them */
	reannounce(jp);
}

static void atfork_child(void)
{
	struct jitperf *jp;
	int standby = 0;

	jp_tid_reset();
	jp_standby_atfork_child();
	for (jp = registry; jp; jp = jp->next_open) {
		if (!jp->closed)
			child_reopen(jp);
		standby |= !!(jp->outputs & JITPERF_STANDBY);
		pthread_mutex_unlock(&jp->lock);
		jp_instr_atfork_child(jp);
	}
	pthread_mutex_unlock(&registry_lock);
	if (standby && jp_standby_listen(wake_sessions))
		jp_debug("standby: the child %d cannot be woken", (int)getpid());
}
