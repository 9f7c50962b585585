/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kallsyms as a symbol table (read/pdsym.h): the lines perf keeps (text
 * and data symbols, not '$' names), whole or only those that name given
 * addresses.  kallsyms has 100k+ lines and a small conversion names a few
 * hundred kernel addresses, so the file is read a block at a time, cut
 * and parsed a word at a time, and only the lines kept are copied.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "pdsym.h"

/* the per-line steps, inlined into the loop over a block's lines */
#define HOT static inline __attribute__((always_inline))

/* perf's symbol_type__filter and kallsyms2elf_binding */
HOT int kallsyms_keep(char type)
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

/* bit i set for each of the 64 bytes at p that is a newline */
static inline uint64_t newlines64(const char *p)
{
	return (uint64_t)newlines(p) | (uint64_t)newlines(p + 16) << 16 |
	       (uint64_t)newlines(p + 32) << 32 | (uint64_t)newlines(p + 48) << 48;
}

/* the end of the line at p: its newline, or the end of the text */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', end - p);

	return nl ? nl : end;
}

/*
 * The 16 hex digits at p (a 64-bit kernel's addresses), or 0 if one is
 * not a digit.  Each byte's value is its digit's; the first digit is the
 * highest.
 */
#ifdef __SSE2__
/* All 16 at once: a digit is x - '0' when x <= '9', else (x | 0x20) - 'a' +
 * 10; bytes are then paired into 8, the first digit the high nibble, and
 * the 8 reversed into the number. */
HOT int hex16(const char *p, uint64_t *out)
{
	const __m128i x = _mm_loadu_si128((const __m128i *)p);
	const __m128i letter = _mm_cmpgt_epi8(x, _mm_set1_epi8('9'));
	const __m128i d = _mm_sub_epi8(x, _mm_set1_epi8('0'));
	const __m128i l = _mm_sub_epi8(_mm_or_si128(x, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
	/* valid: a digit's d is 0-9 (unsigned), a letter's l 0-5 */
	const __m128i dok = _mm_cmpeq_epi8(_mm_max_epu8(d, _mm_set1_epi8(9)), _mm_set1_epi8(9));
	const __m128i lok = _mm_cmpeq_epi8(_mm_max_epu8(l, _mm_set1_epi8(5)), _mm_set1_epi8(5));
	const __m128i ok = _mm_or_si128(_mm_andnot_si128(letter, dok), _mm_and_si128(letter, lok));
	__m128i v, pairs;
	uint64_t w;

	if (_mm_movemask_epi8(ok) != 0xffff)
		return 0;
	v = _mm_or_si128(_mm_andnot_si128(letter, d),
			 _mm_and_si128(letter, _mm_add_epi8(l, _mm_set1_epi8(10))));
	/* in each 16-bit lane: the first digit is the low byte, the second the high */
	pairs = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0xff)), 4),
			     _mm_srli_epi16(v, 8));
	w = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs));
	*out = __builtin_bswap64(w);
	return 1;
}
#else
/* Per byte: a digit is 0x30-0x39 or (| 0x20) 0x61-0x66, its value its low
 * nibble, + 9 for a letter (bit 6); then the nibbles are packed, eight a
 * word. */
HOT int hex16(const char *p, uint64_t *out)
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
#endif

/*
 * One line of kallsyms, "ADDR TYPE NAME[\tMODULE]", without its newline
 * (e): 1 with its address, type and name if it is a symbol perf keeps,
 * else 0.
 */
HOT int kallsyms_parse(const char *p, const char *e, uint64_t *start, char *type,
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

/* max starts at 0 and min at UINT64_MAX: the first line seen always goes in */
struct kslot {
	uint64_t max, min;
	uint32_t nmax, nmin;
	uint32_t maxoff[KALIASES], minoff[KALIASES];   /* their lines, in file order */
};

struct kfilter {
	const uint64_t *addrs;
	size_t          n;
	struct kslot   *slots;
	int             overflow;      /* more aliases than a slot keeps */
	/* the slot of the line before: its starts [wlo, whi], its slot and the
	 * one before (NULL at either end) */
	uint64_t        wlo, whi;
	struct kslot   *smax, *smin;
};

/* the slot of start: the first address at or above it (n if none), made the window */
static void kfilter_window(struct kfilter *k, uint64_t start)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->addrs[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo > 0: start is above addrs[lo - 1], which is below UINT64_MAX then */
	k->wlo = lo ? k->addrs[lo - 1] + 1 : 0;
	k->whi = lo < k->n ? k->addrs[lo] : UINT64_MAX;
	k->smax = lo < k->n ? &k->slots[lo] : NULL;
	k->smin = lo ? &k->slots[lo - 1] : NULL;
}

HOT void keep_line(uint32_t *offs, uint32_t *n, uint32_t off, int *overflow)
{
	if (*n == KALIASES)
		*overflow = 1;
	else
		offs[(*n)++] = off;
}

HOT void kfilter_see(struct kfilter *k, uint64_t start, uint32_t off)
{
	struct kslot *s;

	/* lines mostly come in address order: in the window of the line before */
	if (start < k->wlo || start > k->whi)
		kfilter_window(k, start);
	if ((s = k->smax) && start >= s->max) {
		if (start > s->max)
			s->max = start, s->nmax = 0;
		keep_line(s->maxoff, &s->nmax, off, &k->overflow);
	}
	if ((s = k->smin) && start <= s->min) {
		if (start < s->min)
			s->min = start, s->nmin = 0;
		keep_line(s->minoff, &s->nmin, off, &k->overflow);
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
 * kallsyms is read a block at a time into one small buffer, which stays in
 * the cache: mapping 5 MB of page cache costs more in page tables than the
 * scan itself.  /proc/kallsyms (a size of 0, no offsets to come back to)
 * is read whole.
 */
#define KBLOCK (64u << 10)

struct ktext {
	int    fd;
	char  *whole;          /* all of it, or NULL: read by blocks from fd */
	size_t len;            /* of the file */
	char  *buf;            /* KBLOCK bytes; what it holds: */
	size_t buf_off, buf_len;
	int    eof;
};

static int ktext_open(struct ktext *x, const char *path)
{
	struct stat st;
	size_t cap = 0;
	int ret = 0;

	*x = (struct ktext){ .fd = pd_open_regular(path) };
	if (x->fd < 0)
		return -errno;
	if (!fstat(x->fd, &st) && st.st_size > 0) {
		x->len = (size_t)st.st_size;
		if (!(x->buf = malloc(KBLOCK)))
			ret = -ENOMEM;
		return ret;
	}
	for (;;) {
		ssize_t r;

		if (x->len == cap) {
			char *nb = realloc(x->whole, cap = cap ? 2 * cap : 8u << 20);

			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			x->whole = nb;
		}
		r = read(x->fd, x->whole + x->len, cap - x->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ret = r < 0 ? -errno : 0;
			break;
		}
		x->len += r;
	}
	return ret;
}

static void ktext_close(struct ktext *x)
{
	if (x->fd >= 0)
		close(x->fd);
	free(x->whole);
	free(x->buf);
}

/* bytes at offset off into buf: whatever read gives, up to KBLOCK */
static int ktext_fill(struct ktext *x, uint64_t off)
{
	ssize_t r;

	do
		r = pread(x->fd, x->buf, KBLOCK, (off_t)off);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	x->buf_off = off;
	x->buf_len = (size_t)r;
	x->eof = r == 0;
	return 0;
}

/*
 * The line at offset off (without its newline) in [*p, *e): from the
 * whole text, or the buffer, read again from off unless it holds the line.
 */
static int ktext_line(struct ktext *x, uint64_t off, const char **p, const char **e)
{
	const char *nl;
	int ret;

	if (x->whole) {
		*p = x->whole + off;
		*e = line_end(*p, x->whole + x->len);
		return 0;
	}
	if (off < x->buf_off || off >= x->buf_off + x->buf_len ||
	    !memchr(x->buf + (off - x->buf_off), '\n', x->buf_len - (off - x->buf_off)))
		if ((ret = ktext_fill(x, off)))
			return ret;
	*p = x->buf + (off - x->buf_off);
	nl = memchr(*p, '\n', x->buf_off + x->buf_len - off);
	/* a line longer than a block is cut there: no symbol name is */
	*e = nl ? nl : x->buf + x->buf_len;
	return 0;
}

struct kscan {
	struct pd_symtab *t;
	struct kfilter   *k;            /* only keep offsets, or NULL: add every line */
	int               nonzero;      /* an address not 0 was seen */
};

HOT int kscan_line(struct kscan *ks, const char *p, const char *e, uint64_t off)
{
	uint64_t start;
	const char *name;
	char type;

	if (!kallsyms_parse(p, e, &start, &type, &name))
		return 0;
	ks->nonzero |= start != 0;
	if (ks->k) {
		kfilter_see(ks->k, start, (uint32_t)off);
		return 0;
	}
	return kallsyms_add(ks->t, start, type, name, e);
}

/*
 * The whole lines of text[0, len), which starts at offset base of the
 * file; with last, the bytes after the last newline are a line too.  The
 * bytes used into *used.
 */
static int kscan_block(struct kscan *ks, const char *text, size_t len, uint64_t base, int last,
		       size_t *used)
{
	const char *p = text, *e;
	int ret = 0;
	size_t i;

	/* 64 bytes a step: about two lines */
	for (i = 0; i + 64 <= len && !ret; i += 64)
		for (uint64_t nl = newlines64(text + i); nl && !ret; nl &= nl - 1) {
			e = text + i + __builtin_ctzll(nl);
			ret = kscan_line(ks, p, e, base + (p - text));
			p = e + 1;
		}
	for (; i + 16 <= len && !ret; i += 16)
		for (uint32_t nl = newlines(text + i); nl && !ret; nl &= nl - 1) {
			e = text + i + __builtin_ctz(nl);
			ret = kscan_line(ks, p, e, base + (p - text));
			p = e + 1;
		}
	for (; !ret && (e = memchr(text + i, '\n', len - i)); i = e + 1 - text) {
		ret = kscan_line(ks, p, e, base + (p - text));
		p = e + 1;
	}
	if (!ret && last && p < text + len) {
		ret = kscan_line(ks, p, text + len, base + (p - text));
		p = text + len;
	}
	*used = p - text;
	return ret;
}

/* every line of the file, through kscan_line */
static int kscan_all(struct ktext *x, struct kscan *ks)
{
	size_t have = 0, used;
	uint64_t off = 0;
	int ret;

	if (x->whole)
		return kscan_block(ks, x->whole, x->len, 0, 1, &used);
	for (;;) {
		ssize_t r;

		do
			r = pread(x->fd, x->buf + have, KBLOCK - have, (off_t)(off + have));
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return -errno;
		have += r;
		if ((ret = kscan_block(ks, x->buf, have, off, r == 0, &used)))
			return ret;
		if (r == 0)
			return 0;
		if (!used && have == KBLOCK)
			used = have;         /* a line longer than a block names nothing */
		memmove(x->buf, x->buf + used, have - used);
		off += used;
		have -= used;
	}
}

/* every symbol of the file, or with k only the lines it keeps */
static int kallsyms_table(struct pd_symtab *t, struct ktext *x, struct kfilter *k)
{
	struct kscan ks = { t, k, 0 };
	struct kkeep *kk = NULL;
	const char *p, *e, *name;
	size_t nkk = 0, i;
	uint64_t start;
	int ret;
	char type;

	if ((ret = kscan_all(x, &ks)))
		return ret;
	/* kptr_restrict: every address reads 0, nothing can be named */
	if (!ks.nonzero) {
		t->n = 0;
		return -EPERM;
	}
	if (k && k->overflow)
		return kallsyms_table(t, x, NULL);
	if (k && (ret = kfilter_keeps(k, &kk, &nkk)))
		return ret;
	for (i = 0; i < nkk && !ret; i++)
		for (uint32_t a = 0; a < kk[i].n && !ret; a++)
			if (!(ret = ktext_line(x, kk[i].offs[a], &p, &e)) &&
			    kallsyms_parse(p, e, &start, &type, &name))
				ret = kallsyms_add(t, start, type, name, e);
	free(kk);
	return ret;
}

int pd_symtab_load_kallsyms_for(struct pd_symtab *t, const char *path, const uint64_t *addrs,
				size_t naddrs)
{
	struct kfilter k = { .addrs = addrs, .n = naddrs, .wlo = 1, .whi = 0 };
	struct ktext x;
	int ret;

	if (addrs && !naddrs)
		return 0;
	ret = ktext_open(&x, path);
	if (!ret && addrs && x.len <= UINT32_MAX) {
		k.slots = calloc(naddrs, sizeof(*k.slots));
		for (size_t i = 0; k.slots && i < naddrs; i++)
			k.slots[i].min = UINT64_MAX;
		ret = k.slots ? kallsyms_table(t, &x, &k) : -ENOMEM;
		free(k.slots);
	} else if (!ret) {
		ret = kallsyms_table(t, &x, NULL);
	}
	ktext_close(&x);
	if (ret)
		return ret;
	pd_symtab_finish(t, 1);
	return 0;
}

int pd_symtab_load_kallsyms(struct pd_symtab *t, const char *path)
{
	return pd_symtab_load_kallsyms_for(t, path, NULL, 0);
}
