/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kallsyms as a symbol table (read/pdsym.h): the lines perf keeps (text
 * and data symbols, not '$' names), whole or only those that name given
 * addresses.  kallsyms has 100k+ lines and a small conversion names a few
 * hundred kernel addresses, so the file is mapped, cut and parsed a word
 * at a time, and only the lines kept are copied.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "pdsym.h"

/* perf's symbol_type__filter and kallsyms2elf_binding */
static int kallsyms_keep(char type)
{
	switch (type) {
	case 'T': case 't': case 'W': case 'w': case 'D': case 'd': case 'B': case 'b':
		return 1;
	}
	return 0;
}

/* a hex digit's value + 1, 0 for anything else: 100k+ addresses go through it */
static const unsigned char hex1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
	['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
	['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
	['F'] = 16,
};

/*
 * kallsyms has 100k+ lines: they are cut sixteen bytes at a time and
 * their addresses read eight at a time.  ONES * b has byte b in every
 * byte.
 */
#define ONES 0x0101010101010101ull
#define HIGH (0x80 * ONES)

/* bit i set for each of the 16 bytes at p that is a newline */
static inline uint32_t newlines(const char *p)
{
#ifdef __SSE2__
	return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p),
							  _mm_set1_epi8('\n')));
#else
	const uint64_t low = 0x7f * ONES;
	uint32_t bits = 0;

	for (int k = 1; k >= 0; k--) {
		uint64_t w;

		memcpy(&w, p + 8 * k, 8);
		w ^= 0x0a * ONES;
		w = ~(((w & low) + low) | w | low);     /* 0x80 in each newline byte */
		/* the high bits of the eight bytes gathered into one byte */
		bits = bits << 8 | (uint32_t)(((w >> 7) * 0x0102040810204080ull) >> 56);
	}
	return bits;
#endif
}

/* the end of the line at p: its newline, or the end of the text */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', end - p);

	return nl ? nl : end;
}

/*
 * The 16 hex digits at p (a 64-bit kernel's addresses), or 0 if one is
 * not a digit: per byte, a digit is 0x30-0x39 or (| 0x20) 0x61-0x66, its
 * value its low nibble, + 9 for a letter (bit 6); then the nibbles are
 * packed, the first the highest.
 */
static int hex16(const char *p, uint64_t *out)
{
	uint64_t w[2], v = 0;

	memcpy(w, p, 16);
	for (int k = 0; k < 2; k++) {
		uint64_t x = w[k], l = x | 0x20 * ONES;
		uint64_t digit = (x + 0x50 * ONES) & ~(x + 0x46 * ONES);
		uint64_t letter = (l + 0x1f * ONES) & ~(l + 0x19 * ONES);

		if ((x & HIGH) || ((digit | letter) & HIGH) != HIGH)
			return 0;
		x = (x & 0x0f * ONES) + ((x >> 6) & ONES) * 9;
		x = ((x << 4) | (x >> 8)) & 0x00ff00ff00ff00ffull;
		x = ((x << 8) | (x >> 16)) & 0x0000ffff0000ffffull;
		x = ((x << 16) | (x >> 32)) & 0xffffffffull;
		v = v << 32 | x;
	}
	*out = v;
	return 1;
}

/*
 * One line of kallsyms, "ADDR TYPE NAME[\tMODULE]", without its newline
 * (e): 1 with its address, type and name if it is a symbol perf keeps,
 * else 0.
 */
static int kallsyms_parse(const char *p, const char *e, uint64_t *start, char *type,
			  const char **name)
{
	const char *q = p;
	uint64_t v = 0;
	unsigned d;

	if (e - p > 16 && p[16] == ' ' && hex16(p, &v))
		q = p + 16;
	else
		for (; q < e && (d = hex1[(unsigned char)*q]); q++)
			v = v << 4 | (d - 1);
	if (q == p || e - q < 3 || q[0] != ' ' || q[2] != ' ' || !kallsyms_keep(q[1]) ||
	    (e - q > 3 && q[3] == '$'))
		return 0;
	*start = v;
	*type = q[1];
	*name = q + 3;
	return 1;
}

static int kallsyms_add(struct pd_symtab *t, uint64_t start, char type, const char *name,
			const char *e)
{
	int bind = type == 'W' || type == 'w' ? STB_WEAK :
		   type >= 'A' && type <= 'Z' ? STB_GLOBAL : STB_LOCAL;

	return pd_symtab_add(t, start, 0, bind, STT_FUNC, name, e - name);
}

/*
 * Which lines of kallsyms can name the addresses asked for (sorted,
 * distinct), by perf's rules: for each address, every symbol at the
 * greatest start at or below it (the aliases the duplicate rule chooses
 * among) and every one at the least start above it (where it ends, and
 * whether a module begins there).  The table made of only these lines
 * names those addresses as the whole one does.
 *
 * One pass, whatever the order of the lines: a line goes to slot j, the
 * first address at or above its start, where the lines of the greatest
 * start so far are kept (max), and to slot j - 1, where those of the least
 * start are (min).  A running maximum over the slots, from the first
 * address on, then gives each address its greatest start below, and a
 * running minimum from the last its least start above.
 */
#define KALIASES 8

struct kslot {
	uint64_t max, min;
	uint32_t nmax, nmin;
	uint32_t maxoff[KALIASES], minoff[KALIASES];   /* their lines, in file order */
};

struct kfilter {
	const uint64_t *addrs;
	size_t          n, last;       /* last: the slot of the line before */
	struct kslot   *slots;
	int             overflow;      /* more aliases than a slot keeps */
};

/* the slot of start: the first address at or above it (n if none) */
static size_t kslot_of(struct kfilter *k, uint64_t start)
{
	size_t lo = 0, hi = k->n, j = k->last;

	/* lines mostly come in address order: the slot of the line before */
	if (j < k->n && k->addrs[j] >= start && (j == 0 || k->addrs[j - 1] < start))
		return j;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->addrs[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return k->last = lo;
}

static void keep_line(uint32_t *offs, uint32_t *n, uint64_t *have, uint64_t start, int better,
		      uint32_t off, int *overflow)
{
	if (better)
		*n = 0, *have = start;
	if (*n == KALIASES)
		*overflow = 1;
	else
		offs[(*n)++] = off;
}

static void kfilter_see(struct kfilter *k, uint64_t start, uint32_t off)
{
	size_t j = kslot_of(k, start);
	struct kslot *s;

	if (j < k->n) {
		s = &k->slots[j];
		if (!s->nmax || start >= s->max)
			keep_line(s->maxoff, &s->nmax, &s->max, start, !s->nmax || start > s->max,
				  off, &k->overflow);
	}
	if (j > 0) {
		s = &k->slots[j - 1];
		if (!s->nmin || start <= s->min)
			keep_line(s->minoff, &s->nmin, &s->min, start, !s->nmin || start < s->min,
				  off, &k->overflow);
	}
}

/* a start to keep, and where its lines are */
struct kkeep {
	uint64_t        start;
	const uint32_t *offs;
	uint32_t        n;
};

static int by_keep(const void *x, const void *y)
{
	const struct kkeep *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* the starts to keep, sorted, distinct: *n of them in *out (free it) */
static int kfilter_keeps(const struct kfilter *k, struct kkeep **out, size_t *n)
{
	struct kkeep *kk = malloc(2 * k->n * sizeof(*kk)), lo = { 0 }, hi = { 0 };
	size_t i, m = 0;

	if (!kk)
		return -ENOMEM;
	for (i = 0; i < k->n; i++) {
		const struct kslot *s = &k->slots[i];

		if (s->nmax && (!lo.n || s->max > lo.start))
			lo = (struct kkeep){ s->max, s->maxoff, s->nmax };
		if (lo.n)
			kk[m++] = lo;
	}
	for (i = k->n; i-- > 0;) {
		const struct kslot *s = &k->slots[i];

		if (s->nmin && (!hi.n || s->min < hi.start))
			hi = (struct kkeep){ s->min, s->minoff, s->nmin };
		if (hi.n)
			kk[m++] = hi;
	}
	qsort(kk, m, sizeof(*kk), by_keep);
	for (i = 0, *n = 0; i < m; i++)
		if (!*n || kk[*n - 1].start != kk[i].start)
			kk[(*n)++] = kk[i];
	*out = kk;
	return 0;
}

/*
 * The text of a kallsyms file: a regular file is mapped (*mapped set),
 * anything else (procfs reports no size) read to its end.
 */
static int kallsyms_text(const char *path, char **text, size_t *len, int *mapped)
{
	int fd = pd_open_regular(path), ret = 0;
	size_t cap = 0;
	struct stat st;
	char *b = NULL;

	*mapped = 0;
	if (fd < 0)
		return -errno;
	if (!fstat(fd, &st) && st.st_size > 0) {
		b = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (b != MAP_FAILED) {
			close(fd);
			*text = b;
			*len = st.st_size;
			*mapped = 1;
			return 0;
		}
		b = NULL;
	}
	*len = 0;
	for (;;) {
		ssize_t r;

		if (*len == cap) {
			char *nb = realloc(b, cap = cap ? 2 * cap : 8u << 20);

			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			b = nb;
		}
		r = read(fd, b + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ret = r < 0 ? -errno : 0;
			break;
		}
		*len += r;
	}
	close(fd);
	if (ret)
		free(b);
	else
		*text = b;
	return ret;
}

/* every symbol of the text, or with k only the lines it keeps */
static int kallsyms_table(struct pd_symtab *t, const char *text, size_t len,
			  struct kfilter *k)
{
	const char *p, *e, *end = text + len, *name;
	struct kkeep *kk = NULL;
	size_t nkk = 0, i;
	uint64_t start;
	int nonzero = 0, ret = 0;
	char type;

	for (p = text, i = 0; p < end && !ret; i += 16) {
		uint32_t nl;

		if (i + 16 <= len) {
			nl = newlines(text + i);
		} else {              /* the last bytes; a last line without newline ends here */
			char tail[16] = { 0 };

			memcpy(tail, text + i, len - i);
			tail[len - i] = '\n';
			nl = newlines(tail);
		}
		for (; nl && !ret; nl &= nl - 1) {
			e = text + i + __builtin_ctz(nl);
			if (kallsyms_parse(p, e, &start, &type, &name)) {
				nonzero |= start != 0;
				if (k)
					kfilter_see(k, start, (uint32_t)(p - text));
				else
					ret = kallsyms_add(t, start, type, name, e);
			}
			p = e + 1;
		}
	}
	if (ret)
		return ret;
	/* kptr_restrict: every address reads 0, nothing can be named */
	if (!nonzero) {
		t->n = 0;
		return -EPERM;
	}
	if (k && k->overflow)
		return kallsyms_table(t, text, len, NULL);
	if (k && (ret = kfilter_keeps(k, &kk, &nkk)))
		return ret;
	for (i = 0; i < nkk && !ret; i++)
		for (uint32_t a = 0; a < kk[i].n && !ret; a++) {
			p = text + kk[i].offs[a];
			e = line_end(p, end);
			if (kallsyms_parse(p, e, &start, &type, &name))
				ret = kallsyms_add(t, start, type, name, e);
		}
	free(kk);
	return ret;
}

int pd_symtab_load_kallsyms_for(struct pd_symtab *t, const char *path, const uint64_t *addrs,
				size_t naddrs)
{
	struct kfilter k = { addrs, naddrs, 0, NULL, 0 };
	char *text = NULL;
	size_t len = 0;
	int mapped, ret;

	if (addrs && !naddrs)
		return 0;
	ret = kallsyms_text(path, &text, &len, &mapped);
	if (ret)
		return ret;
	if (addrs && len <= UINT32_MAX) {
		k.slots = calloc(naddrs, sizeof(*k.slots));
		ret = k.slots ? kallsyms_table(t, text, len, &k) : -ENOMEM;
		free(k.slots);
	} else {
		ret = kallsyms_table(t, text, len, NULL);
	}
	if (mapped)
		munmap(text, len);
	else
		free(text);
	if (ret)
		return ret;
	pd_symtab_finish(t, 1);
	return 0;
}

int pd_symtab_load_kallsyms(struct pd_symtab *t, const char *path)
{
	return pd_symtab_load_kallsyms_for(t, path, NULL, 0);
}
