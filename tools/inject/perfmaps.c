/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitperf inject's perf maps: the symbols of a process that wrote a perf
 * map and no jitdump go into code images, mapped at its exec.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "ctx.h"
#include "read/perfmap_read.h"
#include "tools/cmds.h"
#include "tools/nsproc.h"

/*
 * A process that wrote only a perf map (V8, the JVM's agents, .NET,
 * Python): its symbols go into images as a jitdump's functions do, without
 * the code a perf map does not carry, mapped at its exec (the
 * symbols hold from then on, as perf reads a perf map for the whole
 * process); its later anonymous mappings are left out.  perf's own tools
 * then name its code from the output alone, after /tmp is cleaned or on
 * another machine.  Where addresses are used again, each piece of the
 * address space gets the symbol perf's own reading of the map names it
 * with (pm_pieces).
 */
static struct mapproc *mapproc_get(struct ctx *c, uint32_t pid)
{
	struct mapproc *m;

	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	m = realloc(c->procs, (c->nprocs + 1) * sizeof(*m));
	if (!m)
		return NULL;
	c->procs = m;
	m = &c->procs[c->nprocs++];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->off = UINT64_MAX;
	return m;
}

/* A COMM record at off: a process's exec, or its first name (attached). */
int ij_note_comm(struct ctx *c, const unsigned char *p, uint16_t size, uint16_t misc,
		 uint64_t off)
{
	uint32_t pid, tid;
	struct mapproc *m;
	int exec = !!(misc & PERF_RECORD_MISC_COMM_EXEC);

	memcpy(&pid, p + 8, 4);
	memcpy(&tid, p + 12, 4);
	if (pid != tid)
		return 0;
	if (!(m = mapproc_get(c, pid)))
		return -ENOMEM;
	if (exec || m->off == UINT64_MAX) {
		m->off = off;
		m->time = ij_record_time(c, p, size);
	}
	return 0;
}

static uint16_t host_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__aarch64__)
	return EM_AARCH64;
#elif defined(__i386__)
	return EM_386;
#else
	return EM_NONE;
#endif
}

/*
 * Where the perf map of process pid (as perf.data knows it) is: beside
 * the input (record's copy); else as the process sees /tmp, named by the
 * pid it knows itself by (NSpid: a container's own /tmp, through
 * /proc/PID/root), while it lives; else /tmp/perf-PID.map.  0 with path
 * filled, or -ENOENT.
 */
static int perfmap_path(const char *dir, uint32_t pid, char *path, size_t len)
{
	char own[64];
	pid_t nspid;

	snprintf(path, len, "%s/perf-%" PRIu32 ".map", dir, pid);
	if (!access(path, R_OK))
		return 0;
	if (!nsproc_pid((pid_t)pid, &nspid)) {
		snprintf(own, sizeof(own), "/tmp/perf-%d.map", (int)nspid);
		if (!nsproc_path((pid_t)pid, own, path, len) && !access(path, R_OK))
			return 0;
	}
	snprintf(path, len, "/tmp/perf-%" PRIu32 ".map", pid);
	return access(path, R_OK) ? -ENOENT : 0;
}

/* The processes without a jitdump whose perf map is beside the input or
 * theirs in /tmp; their anonymous mappings go from their exec on. */
int ij_find_perfmaps(struct ctx *c)
{
	char *copy = strdup(c->in), path[PATH_MAX];
	const char *dir = copy ? dirname(copy) : NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < c->nprocs && !err; i++) {
		struct mapproc *m = &c->procs[i];
		struct range *mk;

		if (m->off == UINT64_MAX || ij_marker_time(c, m->pid))
			continue;
		if (perfmap_path(dir, m->pid, path, sizeof(path)))
			continue;
		if (!(m->map = strdup(path)))
			err = -ENOMEM;
		else if (m->time) {     /* its anonymous mappings go from then on */
			if ((mk = realloc(c->marks, (c->nmarks + 1) * sizeof(*mk)))) {
				c->marks = mk;
				c->marks[c->nmarks++] = (struct range){ m->pid, m->time, 0 };
			} else {
				err = -ENOMEM;
			}
		}
	}
	free(copy);
	return err;
}

/*
 * m's perf map into images at m's exec: one function and one MMAP2 per
 * piece of the address space perf names one symbol (pm_pieces: perf's
 * tree decides where entries overlap).  A map that cannot be read is
 * named in one line and left out.
 */
int ij_inject_perfmap(struct ctx *c, const struct mapproc *m)
{
	struct pm_piece *pieces = NULL;
	struct pm_map *pm = NULL;
	size_t npieces = 0, *plan = NULL;
	struct jitdump *d;
	char msg[512];
	int err = 0;

	if (pm_read(m->map, &pm, msg, sizeof(msg))) {
		cmd_err("%s (not injected)", msg);
		return 0;
	}
	d = realloc(c->dumps, (c->ndumps + 1) * sizeof(*d));
	if (d)
		c->dumps = d;
	if (!d || pm_pieces(pm, &pieces, &npieces) ||
	    (npieces && !(plan = malloc(npieces * sizeof(*plan))))) {
		free(pieces);
		pm_free(pm);
		return -ENOMEM;
	}
	d = &c->dumps[c->ndumps];
	memset(d, 0, sizeof(*d));
	d->pid = m->pid;
	d->machine = host_machine();
	if (!(d->path = strdup(m->map)))
		err = -ENOMEM;
	else
		c->ndumps++;
	for (size_t i = 0; i < npieces && !err; i++)
		err = ij_plan(c, d, pieces[i].start, pieces[i].end - pieces[i].start, m->time,
			      &plan[i]);
	ij_plan_done(c, d);
	for (size_t i = 0; i < npieces && !err; i++) {
		const struct pm_piece *pc = &pieces[i];
		struct ij_func fn = { .name = pc->sym->name, .code_addr = pc->start,
				      .size = pc->end - pc->start };
		uint64_t va;

		err = ij_add_code(c, d, &fn, pc->sym->line, plan[i], &va);
		err = err ?: ij_emit_mmap(c, &c->images[plan[i]], m->pid, m->pid, pc->start, fn.size,
					  va, m->time);
		c->functions += !err;
	}
	free(plan);
	free(pieces);
	pm_free(pm);
	return err ?: ij_add_jitpid(c, m->pid);
}
