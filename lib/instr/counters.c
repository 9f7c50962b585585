/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-call counters (JITPERF_COUNTERS): one perf_event_open group per
 * thread, counting that thread on any CPU.  Values are read with rdpmc from
 * the event's mmapped page when the kernel allows it (hardware events),
 * otherwise with one read() of the whole group.  An event that cannot be
 * opened is "unsupported": reported once by the session, read as 0.
 */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "instr.h"

static const struct {
	const char *name;
	uint32_t    type;
	uint64_t    config;
} known[] = {
	{ "cycles",           PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches",         PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses",    PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles",       PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles",       PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock",       PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults",      PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults",     PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults",     PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations",   PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
};

static int event_open(uint32_t type, uint64_t config, int group, int exclude_kernel)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	/* The leader starts disabled; enabling the whole group at once puts
	 * every member on the CPU now (members added to a running leader
	 * would only start counting at the next context switch). */
	a.disabled = group < 0;
	a.exclude_kernel = exclude_kernel;
	a.exclude_hv = exclude_kernel;
	a.read_format = PERF_FORMAT_GROUP;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

/* Open one event, adding exclude_kernel when perf_event_paranoid asks for it. */
static int open_one(struct jp_counter_set *cs, unsigned i, int group)
{
	int fd = event_open(cs->type[i], cs->config[i], group, cs->exclude_kernel);

	if (fd < 0 && (errno == EACCES || errno == EPERM) && !cs->exclude_kernel) {
		fd = event_open(cs->type[i], cs->config[i], group, 1);
		if (fd >= 0)
			cs->exclude_kernel = 1;
	}
	return fd < 0 ? -errno : fd;
}

static void reason(struct jp_counter_set *cs, unsigned i, int err)
{
	const char *r = err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV ?
			"not supported by this CPU or kernel" :
			err == -EACCES || err == -EPERM ?
			"not permitted (see /proc/sys/kernel/perf_event_paranoid)" :
			err == -ENOSYS ? "perf_event_open is not available" : strerror(-err);

	snprintf(cs->why[i], sizeof(cs->why[i]), "%s", r);
}

int jp_counters_parse(struct jp_counter_set *cs, const char *list, int debug)
{
	const char *p = list;
	int leader = -1;

	memset(cs, 0, sizeof(*cs));
	while (p && *p) {
		size_t len = strcspn(p, ",");
		unsigned i = cs->n;

		if (len && i < JPT_MAX_COUNTERS) {
			if (!(cs->names[i] = strndup(p, len)))
				return jp_counters_free(cs), -ENOMEM;
			cs->n++;
			snprintf(cs->why[i], sizeof(cs->why[i]), "unknown counter name");
			for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
				if (strcmp(known[k].name, cs->names[i]))
					continue;
				cs->type[i] = known[k].type;
				cs->config[i] = known[k].config;
				/* Try it in the group, as each thread will open it. */
				int fd = open_one(cs, i, leader);
				if (fd < 0 && leader >= 0)
					fd = open_one(cs, i, -1) >= 0 ? -EINVAL : fd;
				if (fd >= 0) {
					cs->ok[i] = 1;
					if (leader < 0)
						leader = fd;
					else
						close(fd);
				} else {
					reason(cs, i, fd == -EINVAL ? -EOPNOTSUPP : fd);
				}
			}
			if (!cs->ok[i] && debug)
				fprintf(stderr, "jitperf: counter %s: %s\n", cs->names[i], cs->why[i]);
		} else if (len && debug) {
			fprintf(stderr, "jitperf: more than %d counters: %.*s ignored\n",
				JPT_MAX_COUNTERS, (int)len, p);
		}
		p += len;
		p += *p == ',';
	}
	if (leader >= 0)
		close(leader);
	return 0;
}

void jp_counters_free(struct jp_counter_set *cs)
{
	for (unsigned i = 0; i < cs->n; i++)
		free(cs->names[i]);
	memset(cs, 0, sizeof(*cs));
}

void jp_counters_thread_open(const struct jp_counter_set *cs, struct jp_thread_counters *tc)
{
	long pgsz = sysconf(_SC_PAGESIZE);

	tc->leader = -1;
	tc->nopen = 0;
	for (unsigned i = 0; i < cs->n; i++) {
		tc->fd[i] = -1;
		tc->page[i] = NULL;
		if (!cs->ok[i])
			continue;
		tc->fd[i] = event_open(cs->type[i], cs->config[i], tc->leader, cs->exclude_kernel);
		if (tc->fd[i] < 0)
			continue;
		if (tc->leader < 0)
			tc->leader = tc->fd[i];
		tc->slot[i] = tc->nopen++;
		if (cs->type[i] == PERF_TYPE_HARDWARE) {
			void *pg = mmap(NULL, (size_t)pgsz, PROT_READ, MAP_SHARED, tc->fd[i], 0);
			tc->page[i] = pg == MAP_FAILED ? NULL : pg;
		}
	}
	if (tc->leader >= 0)
		ioctl(tc->leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

#if defined(__x86_64__)
/* The self-monitoring protocol of perf_event_mmap_page: retry while the kernel updates it. */
static int rdpmc_read(struct perf_event_mmap_page *pc, uint64_t *val)
{
	uint32_t seq, idx;
	uint64_t count;

	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		idx = pc->index;
		count = pc->offset;
		if (!pc->cap_user_rdpmc || !idx)
			return -1;
		uint32_t lo, hi;
		__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx - 1));
		uint64_t pmc = ((uint64_t)hi << 32) | lo;
		unsigned w = pc->pmc_width;
		pmc <<= 64 - w;
		count += (uint64_t)((int64_t)pmc >> (64 - w));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq);
	*val = count;
	return 0;
}
#endif

void jp_counters_read(const struct jp_counter_set *cs, struct jp_thread_counters *tc,
		      uint64_t *out)
{
	uint64_t buf[1 + JPT_MAX_COUNTERS];
	int need_read = 0, saved;
	ssize_t got;

	for (unsigned i = 0; i < cs->n; i++) {
		out[i] = 0;
		if (tc->fd[i] < 0)
			continue;
#if defined(__x86_64__)
		if (tc->page[i] && !rdpmc_read(tc->page[i], &out[i]))
			continue;
#endif
		need_read = 1;
	}
	if (!need_read || tc->leader < 0)
		return;
	/* PERF_FORMAT_GROUP: nr, then one value per member in open order. */
	saved = errno;
	got = read(tc->leader, buf, sizeof(buf));
	errno = saved;
	if (got < (ssize_t)(sizeof(uint64_t) * (1 + tc->nopen)))
		return;
	for (unsigned i = 0; i < cs->n; i++)
		if (tc->fd[i] >= 0 && !(tc->page[i] && out[i]))
			out[i] = buf[1 + tc->slot[i]];
}

void jp_counters_thread_close(struct jp_thread_counters *tc)
{
	long pgsz = sysconf(_SC_PAGESIZE);

	for (unsigned i = 0; i < JPT_MAX_COUNTERS; i++) {
		if (tc->page[i])
			munmap(tc->page[i], (size_t)pgsz);
		tc->page[i] = NULL;
		if (tc->fd[i] >= 0)
			close(tc->fd[i]);
		tc->fd[i] = -1;
	}
	tc->leader = -1;
	tc->nopen = 0;
}
