/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One frame name, tidied and annotated by stackcollapse-perf.pl's rules:
 * [unknown] named after its module, argument lists, quotes and ';' tidied
 * (Go methods and C++ anonymous namespaces kept), Java signatures
 * shortened, and _[i], _[k], _[j] annotations.
 */
#include "config.h"

#include <string.h>

#include "perfscript.h"
#include "stackframe.h"

static inline int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static const char *find(const char *s, size_t n, const char *pat, size_t m)
{
	return memmem(s, n, pat, m);
}

/* /\.\(.*\)\./ : a Go method name such as net/http.(*Client).Do */
static int looks_go(const char *s, size_t n)
{
	const char *a = find(s, n, ".(", 2);
	const char *b;

	if (!a)
		return 0;
	for (b = s + n - 2; b >= a + 2; b--)
		if (b[0] == ')' && b[1] == '.')
			return 1;
	return 0;
}

/* mod =~ m:/tmp/perf-\d+\.map: */
static int is_perfmap(const char *m, size_t n)
{
	const char *e = m + n, *s = m;

	while ((s = find(s, e - s, "/tmp/perf-", 10))) {
		const char *d = s + 10, *q = d;

		while (q < e && is_digit(*q))
			q++;
		if (q > d && e - q >= 4 && !memcmp(q, ".map", 4))
			return 1;
		s++;
	}
	return 0;
}

/*
 * perf inject --jit's images, .../jitted-PID-INDEX.so, and jitperf
 * inject's, .../jitimage-PID-N.so (jitperf's addition)
 */
static int is_jitted(const char *m, size_t n)
{
	const char *b = m + n;
	const char *q;

	while (b > m && b[-1] != '/')
		b--;
	if ((size_t)(m + n - b) >= 13 && !memcmp(b, "jitted-", 7))
		q = b + 7;
	else if ((size_t)(m + n - b) >= 15 && !memcmp(b, "jitimage-", 9))
		q = b + 9;
	else
		return 0;
	if (memcmp(m + n - 3, ".so", 3))
		return 0;
	if (!is_digit(*q))
		return 0;
	while (is_digit(*q))
		q++;
	if (*q++ != '-' || !is_digit(*q))
		return 0;
	while (is_digit(*q))
		q++;
	return q == m + n - 3;
}

size_t sf_tidy(char *d, const char *f, size_t fn, const struct sf_ctx *c, int inlined)
{
	const char *pc = c->pc, *mod = c->mod, *src = f;
	size_t pcn = c->pcn, modn = c->modn, i, cut, len;

	if (fn == 9 && !memcmp(f, "[unknown]", 9)) {
		/* use the module's base name instead, if known */
		char *w = d;

		*w++ = '[';
		if (modn == 9 && !memcmp(mod, "[unknown]", 9)) {
			memcpy(w, "unknown", 7);
			w += 7;
		} else {
			const char *b = mod + modn;

			while (b > mod && b[-1] != '/')
				b--;
			memcpy(w, b, mod + modn - b);
			w += mod + modn - b;
		}
		if (c->flags & PS_ADDRS) {
			*w++ = ' ';
			*w++ = '<';
			memcpy(w, pc, pcn);
			w += pcn;
			*w++ = '>';
		}
		*w++ = ']';
		src = d;
		fn = w - d;
	}
	/* tidy_generic: ';' -> ':', drop from the first '(' (except an
	 * "(anonymous namespace)") unless it is a Go method, drop quotes */
	cut = fn;
	if (memchr(src, '(', fn) && !looks_go(src, fn)) {
		for (i = 0; i < fn; i++)
			if (src[i] == '(' && !(fn - i - 1 >= 20 &&
					       !memcmp(src + i + 1, "anonymous namespace)", 20))) {
				cut = i;
				break;
			}
	}
	if (src != d)
		memcpy(d, src, cut);
	len = cut;
	if (memchr(d, ';', cut) || memchr(d, '"', cut) || memchr(d, '\'', cut)) {
		len = 0;
		for (i = 0; i < cut; i++) {
			char ch = d[i];

			if (ch == '"' || ch == '\'')
				continue;
			d[len++] = ch == ';' ? ':' : ch;
		}
	}
	/* tidy_java: drop the "L" of a Java signature */
	if (c->java && len > 0 && d[0] == 'L' && memchr(d, '/', len)) {
		memmove(d, d + 1, len - 1);
		len--;
	}
	/* annotations */
	if (inlined) {
		if (!find(d, len, "_[i]", 4))
			memcpy(d + len, "_[i]", 4), len += 4;
	} else if ((c->flags & PS_KERNEL) &&
		   ((modn > 0 && mod[0] == '[') || (modn >= 7 && !memcmp(mod + modn - 7, "vmlinux", 7))) &&
		   !find(mod, modn, "unknown", 7)) {
		memcpy(d + len, "_[k]", 4), len += 4;
	} else if ((c->flags & PS_JIT) && (is_perfmap(mod, modn) || is_jitted(mod, modn))) {
		if (!find(d, len, "_[j]", 4))
			memcpy(d + len, "_[j]", 4), len += 4;
	}
	return len;
}
