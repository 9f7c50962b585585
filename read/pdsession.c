/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Threads, maps and objects of a perf.data (perf's tools/perf/util/machine.c
 * and map.c in small).  Symbols of an object are found where perf finds
 * them, in perf's order: its build-id cache (~/.debug or $PERF_BUILDID_DIR),
 * the system's debug files (/usr/lib/debug), the file itself; an object
 * whose build id is recorded must match it.  jitperf adds the recording's
 * own directory, so a record directory copied elsewhere keeps its perf
 * maps and perf inject's jitted-PID-N.so images.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pdsession.h"

#define PEND_MAX 16

struct pd_proc {
	uint32_t        pid;
	struct pd_map  *maps;          /* sorted, not overlapping */
	size_t          n, cap;
	struct pd_map   pend[PEND_MAX];  /* newer maps, not overlapping the others */
	size_t          npend;
	struct pd_proc *next;          /* hash chain */
};

struct pd_thread {
	uint32_t          tid, pid;
	char             *comm;
	struct pd_proc   *proc;
	struct pd_thread *next;        /* hash chain */
};

#define NBUCKETS 4096

struct pd_session {
	const struct pd_file *f;
	char                 *datadir;
	char                 *buildid_dir;
	struct pd_dso        *dsos;
	struct pd_proc       *procs[NBUCKETS];
	struct pd_thread     *threads[NBUCKETS];
	struct pd_proc        kernel;  /* maps of the kernel and its modules */
	struct pd_dso        *kdso;
	int                   kallsyms_loaded;
	/* kallsyms read by a thread of its own (pd_session_preload) */
	pthread_t             kall_thread;
	int                   kall_started;
	int                   kall_ret;
	struct pd_symtab      kall_all;
	/* the kernel addresses to name (pd_session_kernel_addrs), sorted */
	uint64_t             *kaddrs;
	size_t                nkaddrs;
	int                   kaddrs_set;
	/* every change of a thread's name or of maps, in order: generation N
	 * is the state after changes[0..N) */
	struct pd_change {
		uint64_t                start, end;   /* maps: the range that changed */
		const struct pd_thread *t;            /* names: the thread (range empty) */
	}                    *changes;
	size_t                cap_changes;
	uint64_t              generation;
};

static int log_change(struct pd_session *s, uint64_t start, uint64_t end,
		      const struct pd_thread *t);

static inline size_t bucket(uint32_t k)
{
	return (k * 2654435761u) >> 20 & (NBUCKETS - 1);
}

/* ---- objects */

static struct pd_dso *find_dso(struct pd_session *s, const char *name, enum pd_dso_kind kind)
{
	struct pd_dso *d;

	for (d = s->dsos; d; d = d->next)
		if (d->kind == kind && !strcmp(d->name, name))
			return d;
	return NULL;
}

static int is_jitted(const char *path)
{
	const char *b = strrchr(path, '/');
	unsigned a, c;
	int n = 0;

	b = b ? b + 1 : path;
	if (sscanf(b, "jitted-%u-%u.so%n", &a, &c, &n) == 2 && n > 0 && b[n] == 0)
		return 1;
	n = 0;     /* jitperf inject's code images */
	return sscanf(b, "jitimage-%u-%u.so%n", &a, &c, &n) == 2 && n > 0 && b[n] == 0;
}

static struct pd_dso *new_dso(struct pd_session *s, const char *name, enum pd_dso_kind kind,
			      const uint8_t *bid, size_t bidlen)
{
	struct pd_dso *d = find_dso(s, name, kind);
	size_t i;

	if (d)
		return d;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->name = strdup(name))) {
		free(d);
		return NULL;
	}
	d->kind = kind;
	d->jit = kind == PD_DSO_PERFMAP || is_jitted(name);
	if (bidlen) {
		memcpy(d->build_id, bid, bidlen);
		d->build_id_size = (uint8_t)bidlen;
	} else {
		/* the build-id table of the file names objects by the path they were mapped from */
		for (i = 0; i < pd_nbuild_ids(s->f); i++) {
			const struct pd_build_id *b = pd_build_id(s->f, i);

			if (!strcmp(b->path, name)) {
				memcpy(d->build_id, b->id, b->size);
				d->build_id_size = b->size;
				break;
			}
		}
	}
	d->next = s->dsos;
	s->dsos = d;
	return d;
}

static void hex(const struct pd_dso *d, char *out)
{
	for (size_t i = 0; i < d->build_id_size; i++)
		sprintf(out + 2 * i, "%02x", d->build_id[i]);
	out[2 * d->build_id_size] = 0;
}

/*
 * Whether the file at path, opened as *f if it is ELF, is the object: it
 * can be read and has the recorded build id, if any.
 */
static int matches(const struct pd_dso *d, const char *path, struct pd_elf **f)
{
	uint8_t id[20];
	int n;

	if (access(path, R_OK))
		return 0;
	*f = pd_elf_open(path);
	if (!d->build_id_size)
		return 1;
	n = *f ? pd_elf_file_build_id(*f, id, sizeof(id)) : -1;
	return n == d->build_id_size && !memcmp(id, d->build_id, n);
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/*
 * Candidates in perf's order; "real" ones are images that were mapped (their
 * program headers place the symbols), the others separate debug files.
 */
static void load_elf(struct pd_session *s, struct pd_dso *d)
{
	char c[7][PATH_MAX], h[41];
	static const int real[7] = { 1, 0, 0, 0, 0, 1, 1 };
	const char *syms = NULL, *runtime = NULL;
	struct pd_elf *f[7] = { NULL }, *own = NULL;
	int i, n, is = -1, ir = -1;

	/* no build id recorded (pipe mode): perf takes the file's own */
	if (!d->build_id_size && (own = pd_elf_open(d->name))) {
		n = pd_elf_file_build_id(own, d->build_id, sizeof(d->build_id));
		d->build_id_size = n > 0 ? (uint8_t)n : 0;
		pd_elf_close(own);
	}
	hex(d, h);
	if (d->build_id_size) {
		snprintf(c[0], PATH_MAX, "%s/.build-id/%.2s/%s/elf", s->buildid_dir, h, h + 2);
		snprintf(c[1], PATH_MAX, "%s/.build-id/%.2s/%s/debug", s->buildid_dir, h, h + 2);
	} else {
		c[0][0] = c[1][0] = 0;
	}
	snprintf(c[2], PATH_MAX, "/usr/lib/debug%s.debug", d->name);
	snprintf(c[3], PATH_MAX, "/usr/lib/debug%s", d->name);
	if (d->build_id_size)
		snprintf(c[4], PATH_MAX, "/usr/lib/debug/.build-id/%.2s/%s.debug", h, h + 2);
	else
		c[4][0] = 0;
	snprintf(c[5], PATH_MAX, "%s", d->name);
	if (s->datadir)
		snprintf(c[6], PATH_MAX, "%s/%s", s->datadir, base_name(d->name));
	else
		c[6][0] = 0;
	/* each candidate is opened once, for its build id, its sections and symbols */
	for (i = 0; i < 7; i++) {
		if (!c[i][0] || !matches(d, c[i], &f[i]))
			continue;
		if (is < 0 && f[i] && pd_elf_file_has_symtab(f[i]) == 1)
			is = i;
		if (ir < 0 && real[i])
			ir = i;
		if (is >= 0 && ir >= 0)
			break;
	}
	if (is < 0)
		is = ir;
	syms = is >= 0 ? c[is] : NULL;
	runtime = ir >= 0 ? c[ir] : NULL;
	if (syms) {
		/* the table keeps the file its names are in */
		struct pd_elf *sf = f[is], *rf = ir >= 0 && ir != is ? f[ir] : NULL;

		f[is] = NULL;
		if (!sf || pd_symtab_load_elf_file(&d->syms, sf, rf))
			pd_symtab_free(&d->syms);
	}
	for (i = 0; i < 7; i++)
		pd_elf_close(f[i]);
	/* kept for the source lines, looked up only when asked for */
	d->symfile = syms ? strdup(syms) : NULL;
	d->runtime = runtime ? strdup(runtime) : NULL;
}

struct pd_lines *pd_dso_lines(struct pd_dso *d)
{
	if (!d->lines_tried && d->kind == PD_DSO_ELF && d->loaded) {
		d->lines_tried = 1;
		if (d->symfile || d->runtime)
			d->lines = pd_lines_open(d->symfile, d->runtime);
	}
	return d->lines;
}

/* [vdso]: perf's saved copy, else this process's own if it is the same */
static void load_vdso(struct pd_session *s, struct pd_dso *d)
{
	char p[PATH_MAX], h[41];
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	uint8_t id[20];
	FILE *maps;
	char line[512];
	int n;

	hex(d, h);
	if (d->build_id_size) {
		snprintf(p, sizeof(p), "%s/[vdso]/%s/vdso", s->buildid_dir, h);
		if (!access(p, R_OK) && !pd_symtab_load_elf(&d->syms, p, p))
			return;
		pd_symtab_free(&d->syms);
	}
	if (!base || !(maps = fopen("/proc/self/maps", "re")))
		return;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base && strstr(line, "[vdso]")) {
			n = pd_elf_build_id_mem((void *)lo, hi - lo, id, sizeof(id));
			if (!d->build_id_size || (n == d->build_id_size && !memcmp(id, d->build_id, n)))
				if (pd_symtab_load_elf_mem(&d->syms, (void *)lo, hi - lo))
					pd_symtab_free(&d->syms);
			break;
		}
	}
	fclose(maps);
}

static void load_perfmap(struct pd_session *s, struct pd_dso *d)
{
	char p[PATH_MAX];

	if (!pd_symtab_load_perfmap(&d->syms, d->name))
		return;
	pd_symtab_free(&d->syms);
	if (!s->datadir)
		return;
	snprintf(p, sizeof(p), "%s/%s", s->datadir, base_name(d->name));
	if (pd_symtab_load_perfmap(&d->syms, p))
		pd_symtab_free(&d->syms);
}

/* the symbols of one kallsyms file: those that name s->kaddrs, if given */
static int load_kallsyms_file(const struct pd_session *s, struct pd_symtab *all,
			      const char *path)
{
	if (s->kaddrs_set)
		return pd_symtab_load_kallsyms_for(all, path, s->kaddrs, s->nkaddrs);
	return pd_symtab_load_kallsyms(all, path);
}

/*
 * The kallsyms of the recorded kernel, whole: its copy in the build-id
 * cache, else /proc/kallsyms if that is the running kernel.  Reads only
 * what pd_session_new set, so it can run in a thread of its own.
 */
static int read_kallsyms(const struct pd_session *s, struct pd_symtab *all)
{
	char p[PATH_MAX], h[41];
	int ret = -ENOENT;

	if (s->kdso->build_id_size) {
		hex(s->kdso, h);
		snprintf(p, sizeof(p), "%s/[kernel.kallsyms]/%s/kallsyms", s->buildid_dir, h);
		ret = load_kallsyms_file(s, all, p);
		if (ret)
			pd_symtab_free(all);
	}
	/* /proc/kallsyms only for the kernel that was recorded */
	if (ret) {
		uint8_t id[20];
		FILE *nf = fopen("/sys/kernel/notes", "re");
		unsigned char buf[4096];
		size_t n = nf ? fread(buf, 1, sizeof(buf), nf) : 0, off = 0;
		int same = !s->kdso->build_id_size;

		if (nf)
			fclose(nf);
		while (!same && off + 12 <= n) {
			uint32_t nsz, dsz, type;

			memcpy(&nsz, buf + off, 4);
			memcpy(&dsz, buf + off + 4, 4);
			memcpy(&type, buf + off + 8, 4);
			off += 12;
			if (off + ((nsz + 3) & ~3u) + dsz > n)
				break;
			if (type == 3 && nsz == 4 && !memcmp(buf + off, "GNU", 4) && dsz <= 20) {
				memcpy(id, buf + off + 4, dsz);
				same = dsz == s->kdso->build_id_size && !memcmp(id, s->kdso->build_id, dsz);
			}
			off += ((nsz + 3) & ~3u) + ((dsz + 3) & ~3u);
		}
		if (same)
			ret = load_kallsyms_file(s, all, "/proc/kallsyms");
	}
	if (ret)
		pd_symtab_free(all);
	return ret;
}

static void *read_kallsyms_thread(void *arg)
{
	struct pd_session *s = arg;

	s->kall_ret = read_kallsyms(s, &s->kall_all);
	return NULL;
}

int pd_session_kernel_addrs(struct pd_session *s, const uint64_t *addrs, size_t n)
{
	uint64_t *a = malloc((n ? n : 1) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	if (n)
		memcpy(a, addrs, n * sizeof(*a));
	free(s->kaddrs);
	s->kaddrs = a;
	s->nkaddrs = n;
	s->kaddrs_set = 1;
	return 0;
}

void pd_session_preload(struct pd_session *s)
{
	size_t i;

	if (s->kall_started || s->kallsyms_loaded)
		return;
	/* nothing to read ahead if no event samples the kernel */
	for (i = 0; i < pd_nattrs(s->f); i++)
		if (!pd_attr(s->f, i)->attr.exclude_kernel)
			break;
	if (i == pd_nattrs(s->f))
		return;
	s->kall_started = !pthread_create(&s->kall_thread, NULL, read_kallsyms_thread, s);
}

/* the preloading thread's kallsyms, once it is done; 0 or -errno */
static int join_kallsyms(struct pd_session *s, struct pd_symtab *all)
{
	s->kall_started = 0;
	pthread_join(s->kall_thread, NULL);
	*all = s->kall_all;
	memset(&s->kall_all, 0, sizeof(s->kall_all));
	return s->kall_ret;
}

/* kallsyms, split among the kernel and its modules as perf splits them */
static void load_kallsyms(struct pd_session *s)
{
	struct pd_symtab all = { 0 };
	char p[PATH_MAX];
	size_t i, kept;

	s->kallsyms_loaded = 1;
	if (s->kall_started ? join_kallsyms(s, &all) : read_kallsyms(s, &all))
		return;
	/* module symbols go to their modules; the kernel keeps the table */
	for (i = 0, kept = 0; i < all.n; i++) {
		const struct pd_sym *y = &all.syms[i];
		size_t ml;
		const char *m = pd_kallsyms_module(y->name, &ml);
		struct pd_dso *d;

		if (!m) {
			all.syms[kept++] = *y;
			continue;
		}
		snprintf(p, sizeof(p), "[%.*s]", (int)ml, m);
		d = find_dso(s, p, PD_DSO_MODULE);
		/* perf drops symbols of modules it has no map of */
		if (d && pd_symtab_add(&d->syms, y->start, y->end - y->start, y->bind, y->type,
				       y->name, pd_kallsyms_namelen(y->name)))
			break;
	}
	all.n = kept;
	pd_symtab_free(&s->kdso->syms);
	s->kdso->syms = all;
}

static void load_dso(struct pd_session *s, struct pd_dso *d)
{
	d->loaded = 1;
	switch (d->kind) {
	case PD_DSO_ELF:
		load_elf(s, d);
		break;
	case PD_DSO_PERFMAP:
		load_perfmap(s, d);
		break;
	case PD_DSO_VDSO:
		load_vdso(s, d);
		break;
	case PD_DSO_KERNEL:
	case PD_DSO_MODULE:
		if (!s->kallsyms_loaded)
			load_kallsyms(s);
		break;
	}
}

/* ---- processes and threads */

static struct pd_proc *find_proc(struct pd_session *s, uint32_t pid, int create)
{
	struct pd_proc *p;

	for (p = s->procs[bucket(pid)]; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!create || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->next = s->procs[bucket(pid)];
	s->procs[bucket(pid)] = p;
	return p;
}

static struct pd_thread *find_thread(struct pd_session *s, uint32_t tid)
{
	struct pd_thread *t;

	for (t = s->threads[bucket(tid)]; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static int set_comm(struct pd_thread *t, const char *comm)
{
	char *c = strdup(comm);

	if (!c)
		return -ENOMEM;
	free(t->comm);
	t->comm = c;
	return 0;
}

struct pd_thread *pd_session_thread(struct pd_session *s, uint32_t pid, uint32_t tid)
{
	struct pd_thread *t = find_thread(s, tid);
	char name[16];

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->pid = pid;
	t->proc = find_proc(s, pid, 1);
	snprintf(name, sizeof(name), ":%d", (int)tid);
	if (!t->proc || set_comm(t, name)) {
		free(t);
		return NULL;
	}
	t->next = s->threads[bucket(tid)];
	s->threads[bucket(tid)] = t;
	return t;
}

const char *pd_thread_comm(const struct pd_thread *t)
{
	return t->comm;
}

/* ---- maps */

/*
 * A process's maps: a sorted array plus a few recent maps not yet merged
 * into it, so the thousands of small maps perf inject --jit adds cost
 * O(log n) each instead of moving the array every time.  Maps never
 * overlap: a new map cuts what it covers out of the old ones (an emptied
 * map stays as a hole with end == start until the next merge).
 */
static const struct pd_map *find_map(const struct pd_proc *p, uint64_t ip)
{
	size_t lo = 0, hi = p->n, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ip < p->maps[lo - 1].end)
		return &p->maps[lo - 1];
	for (i = 0; i < p->npend; i++)
		if (ip >= p->pend[i].start && ip < p->pend[i].end)
			return &p->pend[i];
	return NULL;
}

static int by_map_start(const void *x, const void *y)
{
	const struct pd_map *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

static int merge_maps(struct pd_proc *p)
{
	size_t n = p->n + p->npend, i = 0, j = 0, k = 0, lo, hi;
	struct pd_map *m;

	if (!p->npend)
		return 0;
	qsort(p->pend, p->npend, sizeof(*p->pend), by_map_start);
	/*
	 * All between two neighbours (a JIT loading upwards, below the stack):
	 * put in place, the maps after them moved up, the array grown by
	 * doubling, instead of copying the whole array.
	 */
	lo = 0;
	hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= p->pend[0].start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->n || p->pend[p->npend - 1].start < p->maps[lo].start) {
		size_t add = 0;

		if (n > p->cap) {
			size_t cap = 2 * p->cap > n ? 2 * p->cap : n;

			m = realloc(p->maps, cap * sizeof(*m));
			if (!m)
				return -ENOMEM;
			p->maps = m;
			p->cap = cap;
		}
		for (j = 0; j < p->npend; j++)
			add += p->pend[j].end > p->pend[j].start;
		memmove(p->maps + lo + add, p->maps + lo, (p->n - lo) * sizeof(*m));
		for (j = 0; j < p->npend; j++)
			if (p->pend[j].end > p->pend[j].start)
				p->maps[lo++] = p->pend[j];
		p->n += add;
		p->npend = 0;
		return 0;
	}
	m = malloc((n ? n : 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	while (i < p->n || j < p->npend) {
		const struct pd_map *x;

		if (j == p->npend || (i < p->n && p->maps[i].start <= p->pend[j].start))
			x = &p->maps[i++];
		else
			x = &p->pend[j++];
		if (x->end > x->start)
			m[k++] = *x;
	}
	free(p->maps);
	p->maps = m;
	p->n = k;
	p->cap = n ? n : 1;
	p->npend = 0;
	return 0;
}

/* cut [start, end) out of m; a part after it becomes *tail (returns 1) */
static int clip(struct pd_map *m, uint64_t start, uint64_t end, struct pd_map *tail)
{
	int has_tail = 0;

	if (m->end <= start || m->start >= end || m->end == m->start)
		return 0;
	if (m->end > end) {
		*tail = *m;
		if (!tail->identity)
			tail->pgoff += end - tail->start;
		tail->start = end;
		has_tail = 1;
	}
	if (m->start < start)
		m->end = start;
	else
		m->end = m->start;     /* covered: a hole */
	return has_tail;
}

static int add_pending(struct pd_proc *p, const struct pd_map *m)
{
	if (p->npend == PEND_MAX) {
		int ret = merge_maps(p);

		if (ret)
			return ret;
	}
	p->pend[p->npend++] = *m;
	return 0;
}

static int insert_map(struct pd_proc *p, const struct pd_map *nm)
{
	struct pd_map tails[PEND_MAX + 1];
	size_t lo = 0, hi = p->n, i, nt = 0;
	int ret;

	if (nm->end <= nm->start)
		return 0;
	/* the first sorted map that can reach nm: the last one starting before it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= nm->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo ? lo - 1 : 0; i < p->n && p->maps[i].start < nm->end; i++)
		nt += clip(&p->maps[i], nm->start, nm->end, &tails[nt > PEND_MAX ? PEND_MAX : nt]);
	for (i = 0; i < p->npend; i++)
		nt += clip(&p->pend[i], nm->start, nm->end, &tails[nt > PEND_MAX ? PEND_MAX : nt]);
	/* at most one map reaches past nm's end, so at most one tail */
	for (i = 0; i < nt && i <= PEND_MAX; i++) {
		ret = add_pending(p, &tails[i]);
		if (ret)
			return ret;
	}
	return add_pending(p, nm);
}

static int clone_maps(struct pd_proc *dst, struct pd_proc *src)
{
	int ret = merge_maps(src);

	if (ret)
		return ret;
	free(dst->maps);
	dst->npend = 0;
	dst->maps = malloc((src->n ? src->n : 1) * sizeof(*src->maps));
	if (!dst->maps) {
		dst->n = dst->cap = 0;
		return -ENOMEM;
	}
	if (src->n)
		memcpy(dst->maps, src->maps, src->n * sizeof(*src->maps));
	dst->n = dst->cap = src->n;
	return 0;
}

/* perf map__new: executable anonymous memory is named by the process's perf map */
static int is_anon(const char *f)
{
	return !strcmp(f, "//anon") || !strncmp(f, "/dev/zero", 9) ||
	       !strncmp(f, "/anon_hugepage", 14) || !strncmp(f, "[stack", 6) ||
	       !strncmp(f, "/SYSV", 5) || !strcmp(f, "[heap]");
}

static int kernel_mmap(struct pd_session *s, const struct pd_event *ev)
{
	const char *f = ev->mmap.filename;
	struct pd_map m = { ev->mmap.addr, ev->mmap.addr + ev->mmap.len, ev->mmap.pgoff, NULL, 1 };
	char name[PATH_MAX];

	if (!strncmp(f, "[kernel.kallsyms]", 17) || !strncmp(f, "[guest.kernel", 13)) {
		if (strncmp(f, "[kernel.kallsyms]", 17))
			return 0;
		m.dso = s->kdso;
		if (m.end < m.start)
			m.end = UINT64_MAX;
	} else {
		/* a module: [name] from /lib/modules/.../name.ko(.xz), '-' read as '_' */
		const char *b = base_name(f);
		size_t n = strcspn(b, ".");

		if (b[0] == '[')
			snprintf(name, sizeof(name), "%s", b);
		else
			snprintf(name, sizeof(name), "[%.*s]", (int)n, b);
		for (char *c = name; *c; c++)
			if (*c == '-')
				*c = '_';
		m.dso = new_dso(s, name, PD_DSO_MODULE, NULL, 0);
		if (!m.dso)
			return -ENOMEM;
	}
	if (log_change(s, m.start, m.end, NULL))
		return -ENOMEM;
	return insert_map(&s->kernel, &m);
}

static int user_mmap(struct pd_session *s, const struct pd_event *ev)
{
	const char *f = ev->mmap.filename;
	struct pd_thread *t;
	struct pd_map m = { ev->mmap.addr, ev->mmap.addr + ev->mmap.len, ev->mmap.pgoff, NULL, 0 };
	char name[64];

	if (ev->misc & PERF_RECORD_MISC_MMAP_DATA)
		return 0;
	t = pd_session_thread(s, ev->mmap.pid, ev->mmap.tid);
	if (!t)
		return -ENOMEM;
	if (is_anon(f) && (ev->mmap.prot & PROT_EXEC)) {
		snprintf(name, sizeof(name), "/tmp/perf-%u.map", ev->mmap.pid);
		m.dso = new_dso(s, name, PD_DSO_PERFMAP, NULL, 0);
		m.identity = 1;
	} else if (!strcmp(f, "[vdso]")) {
		m.dso = new_dso(s, f, PD_DSO_VDSO, ev->mmap.build_id, ev->mmap.build_id_size);
	} else {
		m.dso = new_dso(s, f, PD_DSO_ELF, ev->mmap.build_id, ev->mmap.build_id_size);
	}
	if (!m.dso)
		return -ENOMEM;
	if (m.end < m.start)
		m.end = UINT64_MAX;
	if (log_change(s, m.start, m.end, NULL))
		return -ENOMEM;
	return insert_map(t->proc, &m);
}

static int fork_event(struct pd_session *s, const struct pd_event *ev)
{
	struct pd_thread *parent = pd_session_thread(s, ev->task.ppid, ev->task.ptid);
	struct pd_thread *child = find_thread(s, ev->task.tid);

	if (!parent)
		return -ENOMEM;
	if (!child) {
		child = pd_session_thread(s, ev->task.pid, ev->task.tid);
		if (!child)
			return -ENOMEM;
	}
	if (child == parent)
		return 0;
	child->pid = ev->task.pid;
	child->proc = find_proc(s, ev->task.pid, 1);
	if (!child->proc || set_comm(child, parent->comm))
		return -ENOMEM;
	/* a new process starts with a copy of its parent's maps */
	if (ev->task.pid != ev->task.ppid && child->proc != parent->proc)
		return clone_maps(child->proc, parent->proc);
	return 0;
}

uint64_t pd_session_generation(const struct pd_session *s)
{
	return s->generation;
}

static int log_change(struct pd_session *s, uint64_t start, uint64_t end,
		      const struct pd_thread *t)
{
	if (s->generation == s->cap_changes) {
		size_t cap = s->cap_changes ? s->cap_changes * 2 : 256;
		struct pd_change *c = realloc(s->changes, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		s->changes = c;
		s->cap_changes = cap;
	}
	s->changes[s->generation++] = (struct pd_change){ start, end, t };
	return 0;
}

int pd_session_changed(const struct pd_session *s, uint64_t since, const struct pd_thread *t,
		       const unsigned char *ips, size_t n)
{
	for (uint64_t g = since; g < s->generation; g++) {
		const struct pd_change *c = &s->changes[g];

		if (c->t) {
			if (c->t == t)
				return 1;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t ip;

			memcpy(&ip, ips + 8 * i, 8);
			if (ip >= c->start && ip < c->end)
				return 1;
		}
	}
	return 0;
}

int pd_session_event(struct pd_session *s, const struct pd_event *ev)
{
	struct pd_thread *t;

	switch (ev->type) {
	case PERF_RECORD_COMM:
		t = pd_session_thread(s, ev->comm.pid, ev->comm.tid);
		if (!t || log_change(s, 0, 0, t))
			return -ENOMEM;
		return set_comm(t, ev->comm.comm);
	case PERF_RECORD_FORK:
		t = pd_session_thread(s, ev->task.pid, ev->task.tid);
		if (!t || log_change(s, 0, 0, t))
			return -ENOMEM;
		return fork_event(s, ev);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (ev->mmap.pid == UINT32_MAX)
			return kernel_mmap(s, ev);
		return user_mmap(s, ev);
	}
	return 0;
}

void pd_session_resolve(struct pd_session *s, struct pd_thread *t, int kernel, uint64_t ip,
			struct pd_loc *loc)
{
	const struct pd_map *m;

	loc->sym = NULL;
	loc->addr = ip;
	if (kernel) {
		m = find_map(&s->kernel, ip);
		if (!m && !s->kernel.n && !s->kernel.npend) {
			/* no kernel map recorded: the kernel's symbols still name it */
			static struct pd_map whole = { 0, UINT64_MAX, 0, NULL, 1 };

			whole.dso = s->kdso;
			m = &whole;
		}
	} else {
		m = t ? find_map(t->proc, ip) : NULL;
	}
	loc->map = m;
	if (!m)
		return;
	if (!m->identity)
		loc->addr = ip - m->start + m->pgoff;
	if (!m->dso->loaded)
		load_dso(s, m->dso);
	loc->sym = pd_symtab_find(&m->dso->syms, loc->addr);
}

struct pd_session *pd_session_new(const struct pd_file *f, const char *datadir)
{
	struct pd_session *s = calloc(1, sizeof(*s));
	const char *bd = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	size_t i;

	if (!s)
		return NULL;
	s->f = f;
	if (datadir && !(s->datadir = strdup(datadir)))
		goto err;
	if (bd && *bd)
		s->buildid_dir = strdup(bd);
	else if (asprintf(&s->buildid_dir, "%s/.debug", home && *home ? home : "") < 0)
		s->buildid_dir = NULL;
	if (!s->buildid_dir)
		goto err;
	s->kdso = new_dso(s, "[kernel.kallsyms]", PD_DSO_KERNEL, NULL, 0);
	if (!s->kdso)
		goto err;
	/* modules named in the build-id table get their objects now, so their
	 * kallsyms symbols are kept even before their map is seen */
	for (i = 0; i < pd_nbuild_ids(f); i++) {
		const struct pd_build_id *b = pd_build_id(f, i);

		if (b->pid == -1 && b->path[0] == '[' && strcmp(b->path, "[kernel.kallsyms]") &&
		    strcmp(b->path, "[vdso]") && !new_dso(s, b->path, PD_DSO_MODULE, b->id, b->size))
			goto err;
	}
	return s;
err:
	pd_session_free(s);
	return NULL;
}

void pd_session_free(struct pd_session *s)
{
	struct pd_dso *d, *dn;
	size_t i;

	if (!s)
		return;
	if (s->kall_started) {
		struct pd_symtab all;

		join_kallsyms(s, &all);
		pd_symtab_free(&all);
	}
	for (d = s->dsos; d; d = dn) {
		dn = d->next;
		pd_symtab_free(&d->syms);
		pd_lines_free(d->lines);
		free(d->symfile);
		free(d->runtime);
		free(d->name);
		free(d);
	}
	for (i = 0; i < NBUCKETS; i++) {
		struct pd_proc *p, *pn;
		struct pd_thread *t, *tn;

		for (p = s->procs[i]; p; p = pn) {
			pn = p->next;
			free(p->maps);
			free(p);
		}
		for (t = s->threads[i]; t; t = tn) {
			tn = t->next;
			free(t->comm);
			free(t);
		}
	}
	free(s->kernel.maps);
	free(s->kaddrs);
	free(s->changes);
	free(s->datadir);
	free(s->buildid_dir);
	free(s);
}
