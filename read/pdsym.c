/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Symbol tables for the perf.data reader: ELF (libelf), perf maps and
 * kallsyms, finished by perf's rules (tools/perf/util/symbol.c:
 * symbols__fixup_end, symbols__fixup_duplicate, choose_best_symbol) so a
 * lookup gives the name perf script prints.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pdsym.h"
#include "pdsymtree.h"
#include "perfmap_read.h"
#include "util.h"

/* ---- names live in big blocks: kallsyms alone has 100k+ of them */

#define POOL_BLOCK (256u << 10)

struct pd_strpool {
	struct pd_strpool *next;
	size_t             used, size;
	char               data[];
};

static const char *pool_add(struct pd_strpool **pp, const char *s, size_t n)
{
	struct pd_strpool *p = *pp;
	char *d;

	if (!p || p->size - p->used < n + 1) {
		size_t size = n + 1 > POOL_BLOCK ? n + 1 : POOL_BLOCK;

		p = malloc(sizeof(*p) + size);
		if (!p)
			return NULL;
		p->size = size;
		p->used = 0;
		p->next = *pp;
		*pp = p;
	}
	d = p->data + p->used;
	memcpy(d, s, n);
	d[n] = 0;
	p->used += n + 1;
	return d;
}

void pd_symtab_free(struct pd_symtab *t)
{
	struct pd_strpool *p, *next;

	for (p = t->pool; p; p = next) {
		next = p->next;
		free(p);
	}
	free(t->syms);
	free(t->gone);
	pd_symtree_free(t->tree);
	free(t->pos);
	free(t->reach);
	pd_elf_close(t->elf);
	memset(t, 0, sizeof(*t));
}

/* room for n more entries at once (a symbol table's count is known) */
static int sym_reserve(struct pd_symtab *t, size_t n)
{
	struct pd_sym *s;

	if (t->cap - t->n >= n)
		return 0;
	s = realloc(t->syms, (t->n + n) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->syms = s;
	t->cap = t->n + n;
	return 0;
}

/* The next entry of t, room made (first entries at first), not yet counted. */
static struct pd_sym *sym_slot(struct pd_symtab *t, size_t first)
{
	if (t->n == t->cap && sym_reserve(t, t->cap ? t->cap : first))
		return NULL;
	return &t->syms[t->n];
}

/* name as it is, not copied: it lives as long as the table (t->elf's strings) */
static int add_sym(struct pd_symtab *t, uint64_t start, uint64_t size, int bind, int type,
		   const char *name)
{
	struct pd_sym *s = sym_slot(t, 256);

	if (!s || !name)
		return -ENOMEM;
	s->name = name;
	s->start = start;
	s->end = start + size;
	s->bind = bind;
	s->type = type;
	s->seq = t->added++;
	t->n++;
	return 0;
}

int pd_symtab_add(struct pd_symtab *t, uint64_t start, uint64_t size, int bind, int type,
		  const char *name, size_t namelen)
{
	return add_sym(t, start, size, bind, type, pool_add(&t->pool, name, namelen));
}

/* ---- perf's rules */

/*
 * Sort by address; symbols at one address stay in the order they came
 * (seq: the entries are added in that order).
 */
static int by_start(const void *x, const void *y)
{
	const struct pd_sym *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/*
 * Stable radix sort by start, so (start, seq) order when equal starts are
 * in seq order already (sort_syms): a few linear passes over the digits
 * that differ (8 to 16 bits as the table grows), where qsort compares
 * n log n times through a function pointer.  0, or -1 without memory.
 */
static int radix_syms(struct pd_symtab *t)
{
	struct pd_sym *a = t->syms, *b = malloc(t->cap * sizeof(*b)), *x;
	size_t n = t->n, i, ndig, *count;
	uint64_t lo = UINT64_MAX, hi = 0;
	int bits = 8, shift, span, passes;

	for (i = 0; i < n; i++) {
		lo = a[i].start < lo ? a[i].start : lo;
		hi = a[i].start > hi ? a[i].start : hi;
	}
	while (bits < 16 && ((size_t)1 << (bits + 1)) <= n)
		bits++;
	/* as few passes as those bits need, each with the fewest digits */
	for (span = 0; span < 64 && ((lo ^ hi) >> span); span++)
		;
	if (span > bits) {
		passes = (span + bits - 1) / bits;
		bits = (span + passes - 1) / passes;
	}
	ndig = (size_t)1 << bits;
	count = malloc((ndig + 1) * sizeof(*count));
	if (!b || !count) {
		free(b);
		free(count);
		return -1;
	}
	for (shift = 0; shift < 64 && ((lo ^ hi) >> shift); shift += bits) {
		uint64_t mask = ndig - 1;

		memset(count, 0, (ndig + 1) * sizeof(*count));
		for (i = 0; i < n; i++)
			count[((a[i].start >> shift) & mask) + 1]++;
		for (i = 1; i <= ndig; i++)
			count[i] += count[i - 1];
		for (i = 0; i < n; i++)
			b[count[(a[i].start >> shift) & mask]++] = a[i];
		x = a;
		a = b;
		b = x;
	}
	free(count);
	t->syms = a;
	free(b);
	return 0;
}

/*
 * syms[0, i) is sorted and the few after it (the PLT entries) are not
 * many: those are sorted on their own and merged in from the end, so the
 * whole table is not sorted again.  0, or -1 without memory.
 */
static int merge_tail(struct pd_symtab *t, size_t i)
{
	size_t a = i, b = t->n - i, k = t->n;
	struct pd_sym *tail = malloc(b * sizeof(*tail));

	if (!tail)
		return -1;
	qsort(t->syms + i, b, sizeof(*tail), by_start);
	memcpy(tail, t->syms + i, b * sizeof(*tail));
	while (b > 0)
		if (a > 0 && by_start(&t->syms[a - 1], &tail[b - 1]) > 0)
			t->syms[--k] = t->syms[--a];
		else
			t->syms[--k] = tail[--b];
	free(tail);
	return 0;
}

/*
 * The radix sort keeps the array's order among equal starts, which is
 * seq order when the entries are in the order added, or when a sorted
 * run is followed by entries added after all of it, in that order (the
 * PLT entries after an ELF table sorted once).
 */
static void sort_syms(struct pd_symtab *t)
{
	size_t i, k, inseq = 1;
	uint32_t top = 0;

	for (i = 1; i < t->n && by_start(&t->syms[i - 1], &t->syms[i]) < 0; i++)
		;
	if (i == t->n)
		return;
	if (t->n - i <= i / 8 && !merge_tail(t, i))
		return;
	for (k = 0; k < i; k++)
		top = t->syms[k].seq > top ? t->syms[k].seq : top;
	for (k = i; k < t->n && inseq; k++)
		inseq = t->syms[k].seq > (k == i ? top : t->syms[k - 1].seq);
	if (!inseq || radix_syms(t))
		qsort(t->syms, t->n, sizeof(*t->syms), by_start);
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* choose_best_symbol: 1 keeps a, 0 keeps b */
static int better(const struct pd_sym *a, const struct pd_sym *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	size_t ua, ub, na, nb;

	if (lb == 0 && la > 0)
		return 1;
	if (la == 0 && lb > 0)
		return 0;
	if ((b->bind == STB_WEAK) != (a->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	ua = underscores(a->name);
	ub = underscores(b->name);
	if (ua != ub)
		return ub > ua;
	na = strlen(a->name);
	nb = strlen(b->name);
	if (na != nb)
		return na > nb;
	return 1;
}

static int has_module(const char *name)
{
	return strchr(name, '[') != NULL;
}

/* what the alias rule took out, for the tree (without memory, no tree) */
struct pd_gone {
	uint64_t start;
	uint32_t seq;
};

static void gone(struct pd_symtab *t, const struct pd_sym *s)
{
	if (t->gonecap == SIZE_MAX)
		return;                 /* out of memory before: no tree */
	if (t->ngone == t->gonecap) {
		size_t cap = t->gonecap ? t->gonecap * 2 : 64;
		struct pd_gone *g = realloc(t->gone, cap * sizeof(*g));

		if (!g) {
			t->gonecap = SIZE_MAX;  /* the replay would be wrong */
			return;
		}
		t->gone = g;
		t->gonecap = cap;
	}
	t->gone[t->ngone++] = (struct pd_gone){ s->start, s->seq };
}

static void drop_gone(struct pd_symtab *t);

void pd_symtab_finish(struct pd_symtab *t, int kallsyms)
{
	size_t i, n;

	if (t->n == 0)
		return;
	sort_syms(t);
	/* symbols__fixup_end: a symbol without a size ends at the next one */
	for (i = 1; i < t->n; i++) {
		struct pd_sym *prev = &t->syms[i - 1], *curr = &t->syms[i];

		if (prev->end != prev->start)
			continue;
		if (kallsyms && !has_module(prev->name) != !has_module(curr->name))
			prev->end = (prev->end + 4096 + 4095) & ~(uint64_t)4095;
		else
			prev->end = curr->start;
	}
	if (t->syms[t->n - 1].end == t->syms[t->n - 1].start)
		t->syms[t->n - 1].end = (t->syms[t->n - 1].start & ~(uint64_t)4095) + 4096;
	/* symbols__fixup_duplicate: one symbol per address */
	t->erase_at = t->added;
	for (i = 1, n = 1; i < t->n; i++) {
		struct pd_sym *kept = &t->syms[n - 1], *s = &t->syms[i];

		if (kept->start != s->start) {
			t->syms[n++] = *s;
		} else if (!better(kept, s)) {
			gone(t, kept);
			*kept = *s;
		} else {
			gone(t, s);
		}
	}
	t->n = n;
	/* no tree: a kernel's symbols do not overlap once their ends are set */
	if (kallsyms)
		drop_gone(t);
}

static void drop_gone(struct pd_symtab *t)
{
	free(t->gone);
	t->gone = NULL;
	t->ngone = t->gonecap = 0;
}

/*
 * perf's tree, replayed: nodes are seqs: the symbols went in in that order,
 * the alias rule's took out after the first erase_at, and those added
 * later (PLT entries, all kept) after that.
 */
static void make_tree(struct pd_symtab *t)
{
	uint64_t *key = NULL;
	size_t i;

	free(t->reach);
	t->reach = NULL;
	if (t->gonecap == SIZE_MAX || t->added == UINT32_MAX)
		goto out;
	t->tree = pd_symtree_new(t->added);
	t->pos = malloc(t->added * sizeof(*t->pos));
	key = malloc(t->added * sizeof(*key));
	if (!t->tree || !t->pos || !key) {
		pd_symtree_free(t->tree);
		t->tree = NULL;
		goto out;
	}
	for (i = 0; i < t->n; i++) {
		t->pos[t->syms[i].seq] = (uint32_t)i;
		key[t->syms[i].seq] = t->syms[i].start;
	}
	for (i = 0; i < t->ngone; i++)
		key[t->gone[i].seq] = t->gone[i].start;
	for (i = 0; i < t->erase_at; i++)
		pd_symtree_insert(t->tree, (uint32_t)i, key[i]);
	for (i = 0; i < t->ngone; i++)
		pd_symtree_erase(t->tree, t->gone[i].seq);
	for (i = t->erase_at; i < t->added; i++)
		pd_symtree_insert(t->tree, (uint32_t)i, key[i]);
out:
	free(key);
	drop_gone(t);
}

/*
 * Once a table is whole (sorted, PLT entries in): where no two symbols
 * overlap, the symbol holding an address is the one perf's tree finds.
 * Where some do, the tree is built when a lookup first needs it: an
 * address whose last symbol at or before it is reached by an earlier
 * symbol, or shares its start, may be held by more than one.  Elsewhere
 * only that symbol can hold the address, and the tree's walk, which
 * passes by the greatest start at or below the address, finds it too.
 */
static void build_tree(struct pd_symtab *t)
{
	uint64_t r = 0;
	size_t i;
	int overlap = 0;

	for (i = 1; i < t->n && !overlap; i++)
		overlap = t->syms[i - 1].end > t->syms[i].start ||
			  t->syms[i - 1].start == t->syms[i].start;
	if (!overlap || t->gonecap == SIZE_MAX || t->added == UINT32_MAX ||
	    !(t->reach = malloc(t->n * sizeof(*t->reach)))) {
		drop_gone(t);
		return;
	}
	for (i = 0; i < t->n; i++) {
		t->reach[i] = r;
		r = t->syms[i].end > r ? t->syms[i].end : r;
	}
}

/* whether the lookup of an address whose last symbol at or before it is i needs the tree */
static int needs_tree(const struct pd_symtab *t, size_t i)
{
	return t->reach[i] > t->syms[i].start ||
	       (i > 0 && t->syms[i - 1].start == t->syms[i].start);
}

static void node_range(const void *ctx, uint32_t node, uint64_t *start, uint64_t *end)
{
	const struct pd_symtab *t = ctx;
	const struct pd_sym *s = &t->syms[t->pos[node]];

	*start = s->start;
	*end = s->end;
}

const struct pd_sym *pd_symtab_find(const struct pd_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	/* the last symbol that starts at or before addr */
	if (!t->tree) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (t->syms[mid].start <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* the tree is a cache of the table: built on the first need */
		if (t->reach && lo > 0 && needs_tree(t, lo - 1))
			make_tree((struct pd_symtab *)t);
	}
	if (t->tree) {
		uint32_t node = pd_symtree_find(t->tree, addr, node_range, t);

		return node == PD_SYMTREE_NONE ? NULL : &t->syms[t->pos[node]];
	}
	/* a symbol without a size holds its own address, as in perf; one whose
	 * end wrapped past 2^64 holds none */
	if (lo == 0 || (addr >= t->syms[lo - 1].end &&
			(addr != t->syms[lo - 1].start || t->syms[lo - 1].end != addr)))
		return NULL;
	return &t->syms[lo - 1];
}

/* ---- ELF */

#ifdef HAVE_CPLUS_DEMANGLE
#include <libiberty/demangle.h>
#elif defined(HAVE_CXA_DEMANGLE)
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * __cxa_demangle's full name cut to what cplus_demangle prints without
 * options: from the parameter list on, and the return type of a template
 * function, both found at nesting depth 0.
 */
static void cut_to_name(char *d)
{
	int angle = 0, paren = 0;
	char *p, *space = NULL;

	for (p = d; *p; p++) {
		if (*p == '<')
			angle++;
		else if (*p == '>' && angle)
			angle--;
		else if (*p == '(' && !angle && !paren) {
			if (!strncmp(p, "(anonymous namespace)", 21)) {
				p += 20;
				continue;
			}
			if (p - d >= 8 && !strncmp(p - 8, "operator", 8)) {
				p++;           /* operator() */
				continue;
			}
			break;
		} else if (*p == ' ' && !angle && !paren &&
			   !(p - d >= 8 && !strncmp(p - 8, "operator", 8))) {
			space = p;
		}
	}
	*p = 0;
	if (space && space < p)
		memmove(d, space + 1, strlen(space + 1) + 1);
}
#endif

char *pd_demangle(const char *name)
{
	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
#ifdef HAVE_CPLUS_DEMANGLE
	return cplus_demangle(name, DMGL_NO_OPTS);
#elif defined(HAVE_CXA_DEMANGLE)
	int status = 0;
	char *d = __cxa_demangle(name, NULL, NULL, &status);

	if (status) {
		free(d);
		return NULL;
	}
	cut_to_name(d);
	return d;
#else
	return NULL;
#endif
}

int pd_open_regular(const char *path)
{
	int fd = rd_open_regular(path, 0, NULL);

	if (fd < 0)
		return errno = fd == -RD_ENOTREG ? EINVAL : -fd, -1;
	return fd;
}

/* an ELF file, opened once for its build id, its sections and its symbols */
struct pd_elf {
	Elf *e;
	int  fd;
};

struct pd_elf *pd_elf_open(const char *path)
{
	struct pd_elf *f;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return errno = EINVAL, NULL;
	fd = pd_open_regular(path);
	if (fd < 0)
		return NULL;
	f = malloc(sizeof(*f));
	if (!f) {
		close(fd);
		return errno = ENOMEM, NULL;
	}
	f->fd = fd;
	f->e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!f->e || elf_kind(f->e) != ELF_K_ELF) {
		pd_elf_close(f);
		return errno = EINVAL, NULL;
	}
	return f;
}

void pd_elf_close(struct pd_elf *f)
{
	if (!f)
		return;
	if (f->e)
		elf_end(f->e);
	close(f->fd);
	free(f);
}

static Elf_Scn *find_section(Elf *e, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

int pd_elf_file_has_symtab(struct pd_elf *f)
{
	GElf_Shdr sh;

	return find_section(f->e, SHT_SYMTAB, &sh) != NULL;
}

static int note_build_id(Elf *e, uint8_t *id, size_t max)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4)) {
				size_t n = nh.n_descsz < max ? nh.n_descsz : max;

				memcpy(id, (char *)d->d_buf + doff, n);
				return (int)n;
			}
		}
	}
	return 0;
}

int pd_elf_file_build_id(struct pd_elf *f, uint8_t *id, size_t max)
{
	return note_build_id(f->e, id, max);
}

int pd_elf_build_id_mem(const void *image, size_t size, uint8_t *id, size_t max)
{
	Elf *e;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_memory((char *)image, size);
	if (!e)
		return -EINVAL;
	ret = elf_kind(e) == ELF_K_ELF ? note_build_id(e, id, max) : -EINVAL;
	elf_end(e);
	return ret;
}

/* perf's elf_sym__is_function / _is_object / _is_label */
enum { SYM_SKIP, SYM_KEEP, SYM_LABEL };

static int sym_kind(const GElf_Sym *s)
{
	int type = GELF_ST_TYPE(s->st_info);

	if (s->st_name == 0 || s->st_shndx == SHN_UNDEF)
		return SYM_SKIP;
	if (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT)
		return SYM_KEEP;
	if (type == STT_NOTYPE && s->st_shndx != SHN_ABS && s->st_size == 0)
		return SYM_LABEL;
	return SYM_SKIP;
}

/* file offset of a virtual address: the PT_LOAD segment that holds it */
/* The loadable segments of the runtime image: where an address is in the file. */
struct loads {
	size_t n;
	struct load { uint64_t vaddr, memsz, offset; } *seg;
};

/* rt's PT_LOAD segments, read once for all its symbols; 0 or -ENOMEM */
static int loads_of(Elf *rt, struct loads *l)
{
	size_t n, i;

	l->n = 0;
	l->seg = NULL;
	if (elf_getphdrnum(rt, &n) || !n)
		return 0;
	if (!(l->seg = calloc(n, sizeof(*l->seg))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(rt, (int)i, &ph) && ph.p_type == PT_LOAD)
			l->seg[l->n++] = (struct load){ ph.p_vaddr, ph.p_memsz, ph.p_offset };
	}
	return 0;
}

static int vaddr_to_offset(const struct loads *l, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < l->n; i++)
		if (vaddr >= l->seg[i].vaddr && vaddr < l->seg[i].vaddr + l->seg[i].memsz) {
			*off = vaddr - l->seg[i].vaddr + l->seg[i].offset;
			return 0;
		}
	return -1;
}

/* what a symbol's section says of it, per section index, found once per file */
enum { SEC_ALLOC = 1, SEC_TEXT = 2 };

static uint8_t *section_kinds(Elf *e, size_t shstrndx, size_t *n)
{
	Elf_Scn *scn = NULL;
	uint8_t *k;

	if (elf_getshdrnum(e, n) || !(k = calloc(*n ? *n : 1, 1)))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		size_t i = elf_ndxscn(scn);
		const char *name;
		GElf_Shdr sh;

		if (i >= *n || !gelf_getshdr(scn, &sh))
			continue;
		k[i] = sh.sh_flags & SHF_ALLOC ? SEC_ALLOC : 0;
		if ((name = elf_strptr(e, shstrndx, sh.sh_name)) && strstr(name, "text"))
			k[i] |= SEC_TEXT;
	}
	return k;
}

/*
 * A string table read in place: its bytes when it is a plain table that
 * ends in a NUL (any offset in it is then a string), else NULL and each
 * name goes through elf_strptr.
 */
static const Elf_Data *plain_strtab(Elf *e, size_t ndx)
{
	Elf_Scn *scn = elf_getscn(e, ndx);
	Elf_Data *d;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED) || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
	    !d->d_size || ((const char *)d->d_buf)[d->d_size - 1])
		return NULL;
	return d;
}

/*
 * Symbol i of d: ELF64's are read as they are (libelf has them in this
 * machine's order), others through gelf.  0 past the end.
 */
static int get_sym(Elf_Data *d, int native, size_t i, GElf_Sym *s)
{
	if (!native)
		return gelf_getsym(d, (int)i, s) != NULL;
	if (i >= d->d_size / sizeof(Elf64_Sym))
		return 0;
	memcpy(s, (const Elf64_Sym *)d->d_buf + i, sizeof(*s));
	return 1;
}

/*
 * The symbols of e placed through rt's segments.  Names are those of e's
 * string table, kept in place (t->elf holds e) unless copy is set or they
 * are demangled.
 */
static int load_syms(struct pd_symtab *t, Elf *e, Elf *rt, int copy)
{
	struct loads loads;
	Elf_Scn *scn;
	Elf_Data *d;
	const Elf_Data *strs;
	GElf_Shdr sh;
	size_t shstrndx, i, nsyms, nsec;
	uint8_t *sec;
	int ret = 0, native;

	scn = find_section(e, SHT_SYMTAB, &sh);
	if (!scn)
		scn = find_section(e, SHT_DYNSYM, &sh);
	if (!scn || !sh.sh_entsize || elf_getshdrstrndx(e, &shstrndx))
		return -EINVAL;
	d = elf_getdata(scn, NULL);
	if (!d)
		return -EINVAL;
	if (!(sec = section_kinds(e, shstrndx, &nsec)))
		return -ENOMEM;
	if (loads_of(rt, &loads)) {
		free(sec);
		return -ENOMEM;
	}
	native = gelf_getclass(e) == ELFCLASS64 && d->d_type == ELF_T_SYM;
	strs = plain_strtab(e, sh.sh_link);
	nsyms = sh.sh_size / sh.sh_entsize;
	/* one allocation, not a copy at each doubling, for the entries the data holds */
	sym_reserve(t, d->d_size / sh.sh_entsize < nsyms ? d->d_size / sh.sh_entsize : nsyms);
	for (i = 0; i < nsyms && !ret; i++) {
		GElf_Sym s;
		const char *name;
		char *dem;
		uint64_t off;
		int kind;

		if (!get_sym(d, native, i, &s))
			break;
		kind = sym_kind(&s);
		if (kind == SYM_SKIP || s.st_shndx >= SHN_LORESERVE || s.st_shndx >= nsec ||
		    !(sec[s.st_shndx] & SEC_ALLOC) || (kind == SYM_LABEL && !(sec[s.st_shndx] & SEC_TEXT)))
			continue;
		if (strs)
			name = s.st_name < strs->d_size ? (const char *)strs->d_buf + s.st_name : NULL;
		else
			name = elf_strptr(e, sh.sh_link, s.st_name);
		if (!name || vaddr_to_offset(&loads, s.st_value, &off))
			continue;
		dem = pd_demangle(name);
		if (dem || copy)
			ret = pd_symtab_add(t, off, s.st_size, GELF_ST_BIND(s.st_info),
					    GELF_ST_TYPE(s.st_info), dem ? dem : name,
					    strlen(dem ? dem : name));
		else
			ret = add_sym(t, off, s.st_size, GELF_ST_BIND(s.st_info),
				      GELF_ST_TYPE(s.st_info), name);
		free(dem);
	}
	free(loads.seg);
	free(sec);
	return ret;
}

static Elf_Scn *section_by_name(Elf *e, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(e, shstrndx, sh->sh_name)) &&
		    !strcmp(n, want))
			return scn;
	}
	return NULL;
}

/*
 * perf's dso__synthesize_plt_symbols (as in perf 6.1): one "NAME@plt"
 * symbol per .rela.plt entry, in relocation order, entries of .plt's
 * sh_entsize after a header of the same size, at file offsets.
 */
static int add_plt(struct pd_symtab *t, Elf *e)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rel, *dyn;
	Elf_Data *rd, *sd;
	uint64_t off, n, i;
	GElf_Ehdr eh;
	int ret = 0;

	if (!gelf_getehdr(e, &eh) || !(dyn = find_section(e, SHT_DYNSYM, &dsh)))
		return 0;
	rel = section_by_name(e, ".rela.plt", &rsh);
	if (!rel)
		rel = section_by_name(e, ".rel.plt", &rsh);
	if (!rel || elf_ndxscn(dyn) != rsh.sh_link || !rsh.sh_entsize ||
	    !section_by_name(e, ".plt", &psh))
		return 0;
	rd = elf_getdata(rel, NULL);
	sd = elf_getdata(dyn, NULL);
	if (!rd || !sd)
		return 0;
	n = rsh.sh_size / rsh.sh_entsize;
	off = psh.sh_offset + psh.sh_entsize;
	for (i = 0; i < n && !ret; i++) {
		GElf_Rela ra;
		GElf_Rel r;
		GElf_Sym sym;
		uint64_t info;
		const char *name = NULL;
		char buf[1024], *dem;

		if (rsh.sh_type == SHT_RELA) {
			if (!gelf_getrela(rd, (int)i, &ra))
				break;
			info = ra.r_info;
		} else if (rsh.sh_type == SHT_REL) {
			if (!gelf_getrel(rd, (int)i, &r))
				break;
			info = r.r_info;
		} else {
			break;
		}
		if (gelf_getsym(sd, (int)GELF_R_SYM(info), &sym))
			name = elf_strptr(e, dsh.sh_link, sym.st_name);
		if (!name)
			name = "";
		dem = pd_demangle(name);
		snprintf(buf, sizeof(buf), "%s@plt", dem ? dem : name);
		free(dem);
		ret = pd_symtab_add(t, off, psh.sh_entsize, STB_GLOBAL, STT_FUNC, buf, strlen(buf));
		off += psh.sh_entsize;
	}
	return ret;
}

/* after the alias and size rules: sort again, PLT entries included */
int pd_symtab_load_elf_file(struct pd_symtab *t, struct pd_elf *sym, struct pd_elf *rt)
{
	int ret;

	t->elf = sym;
	if (!rt)
		rt = sym;
	ret = load_syms(t, sym->e, rt->e, 0);
	if (!ret && t->n) {
		pd_symtab_finish(t, 0);
		ret = add_plt(t, rt->e);
		sort_syms(t);
		build_tree(t);
	}
	return ret;
}

int pd_symtab_load_elf(struct pd_symtab *t, const char *symfile, const char *runtime)
{
	struct pd_elf *sym, *rt = NULL;
	int ret;

	sym = pd_elf_open(symfile);
	if (!sym)
		return errno == ENOENT ? -ENOENT : -EINVAL;
	if (runtime && strcmp(runtime, symfile))
		rt = pd_elf_open(runtime);
	ret = pd_symtab_load_elf_file(t, sym, rt);
	pd_elf_close(rt);
	return ret;
}

int pd_symtab_load_elf_mem(struct pd_symtab *t, const void *image, size_t size)
{
	Elf *e;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_memory((char *)image, size);
	if (!e)
		return -EINVAL;
	ret = elf_kind(e) == ELF_K_ELF ? load_syms(t, e, e, 1) : -EINVAL;
	elf_end(e);
	if (!ret) {
		pd_symtab_finish(t, 0);
		build_tree(t);
	}
	return ret;
}

/* ---- text formats */

static int by_line(const void *a, const void *b)
{
	const struct pm_sym *x = *(const struct pm_sym *const *)a;
	const struct pm_sym *y = *(const struct pm_sym *const *)b;

	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * A perf map: its lines read by perf's rules (read/perfmap_read.c), added
 * in file order, which is the order perf inserts them in: where entries
 * overlap, the tree replayed from that order names what perf names.
 */
int pd_symtab_load_perfmap(struct pd_symtab *t, const char *path)
{
	struct pm_map *m;
	const struct pm_sym **order = NULL;
	char err[512];
	int ret;

	ret = pm_read(path, &m, err, sizeof(err));
	if (ret)
		return ret;
	if (m->nsyms && !(order = malloc(m->nsyms * sizeof(*order))))
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < m->nsyms; i++)
		order[i] = &m->syms[i];
	if (order)
		qsort(order, m->nsyms, sizeof(*order), by_line);
	for (size_t i = 0; !ret && i < m->nsyms; i++)
		ret = pd_symtab_add(t, order[i]->start, order[i]->size, STB_GLOBAL, STT_FUNC,
				    order[i]->name, strlen(order[i]->name));
	free(order);
	pm_free(m);
	/* perf keeps a perf map's entries as they are: no alias or size rules */
	if (!ret && t->n) {
		sort_syms(t);
		build_tree(t);
	}
	return ret;
}

const char *pd_kallsyms_module(const char *name, size_t *len)
{
	const char *tab = strchr(name, '\t'), *b, *e;

	if (!tab || !(b = strchr(tab, '[')) || !(e = strchr(b, ']')))
		return NULL;
	*len = e - b - 1;
	return b + 1;
}

size_t pd_kallsyms_namelen(const char *name)
{
	return strcspn(name, "\t");
}
