/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JITPERF=standby: write nothing until a recorder attaches (doc/attach.md).
 *
 * - Each load keeps what its records need later and cannot be found
 *   again: its time, its thread, a copy of its lines and .eh_frame
 *   (jp_keep_make, one malloc, only with lines or unwind info or not).
 *   Name, address and length are in the code table already; the code
 *   bytes are read from memory at the wake, where live code still is.
 * - The protocol is format/standby.h's.
 * - One thread per process sleeps in accept() on the abstract unix socket
 *   "\0jitperf-standby-<pid>", with every signal blocked: no CPU while
 *   idle, no file to clean up (the name goes with the process), and no
 *   signal taken from a JIT that uses them.  It stays for the process's
 *   life (a later recorder is told "ok 0": nothing is in standby), so a
 *   session opened in standby later never races with its end.
 * - A peer whose SO_PEERCRED uid is neither this process's effective uid
 *   nor root is answered "error permission denied" and nothing else.
 * - The peer sends "attach [DIR]\n"; every standby session opens its perf
 *   map and its jitdump (in DIR when given, else its own directory),
 *   writes each live function with its ORIGINAL load time, and goes on as
 *   perfmap,jitdump.  The reply, one line per session, is sent once the
 *   files are complete: the recorder then knows perf can inject them.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "core.h"
#include "format/standby.h"

int jp_keep_make(const struct jitperf_code *c, struct jp_keep **out)
{
	size_t size = sizeof(struct jp_keep), i, strs = 0;
	struct jp_keep *k;
	char *s;

	for (i = 0; i < c->nlines; i++)
		strs += strlen(c->lines[i].file ? c->lines[i].file : "") + 1;
	size += c->nlines * sizeof(struct jitperf_line) + c->eh_frame_len + strs;
	k = malloc(size);
	if (!k)
		return -ENOMEM;
	k->ts = 0;
	k->tid = 0;
	k->addr = (uintptr_t)c->addr;
	k->nlines = c->nlines;
	k->lines = (struct jitperf_line *)(k + 1);
	k->eh_frame_len = c->eh_frame_len;
	k->eh_frame = (char *)(k->lines + c->nlines);
	if (c->eh_frame_len)
		memcpy(k->eh_frame, c->eh_frame, c->eh_frame_len);
	s = (char *)k->eh_frame + c->eh_frame_len;
	for (i = 0; i < c->nlines; i++) {
		const char *f = c->lines[i].file ? c->lines[i].file : "";
		size_t n = strlen(f) + 1;

		k->lines[i] = c->lines[i];
		/* consecutive rows mostly share one file: keep one copy */
		if (i && !strcmp(f, k->lines[i - 1].file)) {
			k->lines[i].file = k->lines[i - 1].file;
			continue;
		}
		memcpy(s, f, n);
		k->lines[i].file = s;
		s += n;
	}
	*out = k;
	return 0;
}

/* ---- the wake: under jp->lock */

/*
 * The records of many functions go out in few write()s: the jitdump units
 * are built in place in one buffer, the perf map lines in another, each
 * written when full.  A function's records are in the files when the wake
 * returns, as a registration's are when it returns.
 */
#define BATCH (256 * 1024)

struct batch {
	unsigned char *dump;
	size_t         dlen;
	char          *map;
	size_t         mlen;
};

static int flush_map(struct jitperf *jp, struct batch *b)
{
	int err = b->mlen ? jp_perfmap_append(jp->perfmap, b->map, b->mlen) : 0;

	b->mlen = 0;
	return err;
}

static int flush_dump(struct jitperf *jp, struct batch *b)
{
	int err = b->dlen ? jp_jitdump_put(jp->jitdump, b->dump, b->dlen) : 0;

	b->dlen = 0;
	return err;
}

/* A live function's records, with its load time; -EFAULT: its code is gone. */
static int wake_one(struct jitperf *jp, struct batch *b, uint64_t index, struct jp_code_entry *e)
{
	const struct jp_keep *k = e->keep;
	unsigned char hdr_space[256], *hdr = NULL;
	struct jp_jitdump_unit u;
	struct jp_jitdump_load ld;
	size_t hdr_len = 0, nlen = strlen(e->name);
	uint64_t ts = k ? k->ts : jp_monotonic_ns();
	int err;

	memset(&ld, 0, sizeof(ld));
	ld.name = e->name;
	ld.addr = e->addr;
	ld.len = e->len;
	ld.index = index;
	ld.checked = 1;         /* freed without jitperf_code_unload: EFAULT, left out */
	if (k) {
		ld.tid = k->tid;
		/* lines and unwind info describe the code where it was loaded */
		if (k->addr == e->addr) {
			ld.lines = k->lines;
			ld.nlines = k->nlines;
			if (k->eh_frame_len &&
			    !jp_ehframe_hdr(k->eh_frame, k->eh_frame_len, e->addr, e->len, hdr_space,
					    sizeof(hdr_space), &hdr, &hdr_len)) {
				ld.eh_frame = k->eh_frame;
				ld.eh_frame_len = k->eh_frame_len;
				ld.eh_hdr = hdr;
				ld.eh_hdr_len = hdr_len;
			}
		}
	}
	/* built in the batch when it fits there, else apart (and the batch written first) */
	err = jp_jitdump_prepare(&u, &ld, b->dump + b->dlen, BATCH - b->dlen);
	if (hdr && hdr != hdr_space)
		free(hdr);
	if (err)
		return err;
	if (nlen + JP_PERFMAP_LINE_EXTRA > BATCH - b->mlen)
		err = flush_map(jp, b);
	if (!err && nlen + JP_PERFMAP_LINE_EXTRA <= BATCH)
		b->mlen += jp_perfmap_line(b->map + b->mlen, e->addr, e->len, e->name, nlen);
	else if (!err)
		err = jp_perfmap_write(jp->perfmap, e->addr, e->len, e->name);
	/* a unit built apart goes after the batch's (it is in time order) */
	if (!err && u.heap && !(err = flush_dump(jp, b)))
		err = jp_jitdump_commit(jp->jitdump, &u, index, ts);
	else if (!err && !u.heap)
		b->dlen += jp_jitdump_stamp(jp->jitdump, &u, index, ts);
	jp_jitdump_unit_free(&u);
	return err;
}

int jp_standby_wake(struct jitperf *jp, const char *dir, uint64_t *n, char *path,
		    size_t pathlen)
{
	uint64_t i, count = jp_codetab_count(jp->codes);
	struct batch b = { 0 };
	int err;

	*n = 0;
	jp_standby_read_begin();
	b.dump = malloc(BATCH);
	b.map = malloc(BATCH);
	if (!b.dump || !b.map) {
		err = -ENOMEM;
		goto out;
	}
	err = jp_perfmap_open(&jp->perfmap, jp->pid);
	if (err)
		goto out;
	/* the header's time is the session's opening: the loads come after it */
	err = jp_jitdump_open_at(&jp->jitdump, dir ? dir : jp->dir, jp->pid, jp->opened_ns);
	if (err)
		goto fail;
	for (i = 1; i <= count; i++) {
		struct jp_code_entry *e = jp_codetab_get(jp->codes, i);

		if (!e->live)
			continue;
		err = wake_one(jp, &b, i, e);
		if (err == -EFAULT) {
			jp_debug("%s: its code is no longer mapped; left out", e->name);
			e->live = 0;
			continue;
		}
		if (err)
			goto fail;
		++*n;
	}
	err = flush_map(jp, &b);
	err = err ?: flush_dump(jp, &b);
	err = err ?: jp_tiers_wake(jp);         /* tier records held back, beside the jitdump */
	if (err)
		goto fail;
	snprintf(path, pathlen, "%s", jp_jitdump_path(jp->jitdump));
	for (i = 1; i <= count; i++) {
		struct jp_code_entry *e = jp_codetab_get(jp->codes, i);

		free(e->keep);
		e->keep = NULL;
	}
	/* from here on a load writes its records as it comes */
	__atomic_store_n(&jp->outputs, jp->outputs & ~(unsigned)JITPERF_STANDBY,
			 __ATOMIC_RELAXED);
	goto out;
fail:
	jp_jitdump_discard(jp->jitdump);
	jp->jitdump = NULL;
	jp_perfmap_discard(jp->perfmap);
	jp->perfmap = NULL;
out:
	free(b.dump);
	free(b.map);
	return err;
}

/* ---- the listener */

static pthread_mutex_t listen_lock = PTHREAD_MUTEX_INITIALIZER;
static int listen_fd = -1;
static pid_t listen_pid;

static void reply(int c, const char *text)
{
	size_t len = strlen(text), done = 0;

	while (done < len) {
		ssize_t w = send(c, text + done, len - done, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		done += (size_t)w;
	}
}

/* "attach [DIR]\n", read with a deadline: a peer that says nothing is dropped. */
static int request(int c, char *dir, size_t dirlen)
{
	struct timeval tv = { 2, 0 };
	char buf[PATH_MAX + 16], *nl;
	size_t have = 0;

	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (have < sizeof(buf) - 1) {
		ssize_t r = recv(c, buf + have, sizeof(buf) - 1 - have, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = '\0';
		if (memchr(buf, '\n', have))
			break;
	}
	buf[have] = '\0';
	nl = strchr(buf, '\n');
	if (!nl)
		return -EINVAL;
	*nl = '\0';
	dir[0] = '\0';
	if (!strcmp(buf, JPSTANDBY_ATTACH))
		return 0;
	if (strncmp(buf, JPSTANDBY_ATTACH " /", sizeof(JPSTANDBY_ATTACH) + 1) ||
	    strlen(buf + sizeof(JPSTANDBY_ATTACH)) >= dirlen)
		return -EINVAL;
	strcpy(dir, buf + sizeof(JPSTANDBY_ATTACH));
	return 0;
}

/* the sessions' wake (lib/session.c), set by jp_standby_listen */
static jp_standby_wake_fn wake_sessions;

static void serve(int c)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char dir[PATH_MAX], out[4096];

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
	    (cr.uid != geteuid() && cr.uid != 0)) {
		reply(c, JPSTANDBY_DENIED);
		return;
	}
	if (request(c, dir, sizeof(dir))) {
		reply(c, JPSTANDBY_ERROR "expected \"" JPSTANDBY_ATTACH " [DIR]\"\n");
		return;
	}
	wake_sessions(dir[0] ? dir : NULL, out, sizeof(out));
	reply(c, out);
}

static void *listener(void *arg)
{
	int fd = (int)(intptr_t)arg;

	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EBADF || errno == EINVAL)
				break;
			if (errno != EINTR && errno != ECONNABORTED) {
				/* out of descriptors or memory: try again later, never spin */
				struct timespec ts = { 0, 100 * 1000 * 1000 };

				nanosleep(&ts, NULL);
			}
			continue;
		}
		serve(c);
		close(c);
	}
	return NULL;
}

int jp_standby_listen(jp_standby_wake_fn wake)
{
	struct sockaddr_un a;
	socklen_t alen;
	pthread_t t;
	int fd, err = 0;

	pthread_mutex_lock(&listen_lock);
	wake_sessions = wake;           /* before the thread that calls it starts */
	if (listen_fd >= 0 && listen_pid == getpid())
		goto out;
	alen = jpstandby_address(&a, getpid());
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (bind(fd, (struct sockaddr *)&a, alen) || listen(fd, 8)) {
		err = -errno;
		jp_debug("standby: cannot listen on @jitperf-standby-%d: %s", (int)getpid(),
			 strerror(errno));
		close(fd);
		goto out;
	}
	err = jp_bgthread_start(&t, listener, (void *)(intptr_t)fd, "jitperf-standby");
	if (err) {
		close(fd);
		goto out;
	}
	pthread_detach(t);
	listen_fd = fd;
	listen_pid = getpid();
out:
	pthread_mutex_unlock(&listen_lock);
	return err;
}

void jp_standby_atfork_prepare(void)
{
	pthread_mutex_lock(&listen_lock);
}

void jp_standby_atfork_parent(void)
{
	pthread_mutex_unlock(&listen_lock);
}

/* The parent's socket and thread are the parent's: the child listens on its own pid. */
void jp_standby_atfork_child(void)
{
	if (listen_fd >= 0) {
		close(listen_fd);
		listen_fd = -1;
	}
	pthread_mutex_unlock(&listen_lock);
}
