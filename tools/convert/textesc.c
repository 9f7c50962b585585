/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON and XML escaping of arbitrary bytes; invalid UTF-8 -> U+FFFD. */
#include "config.h"

#include <string.h>

#include "textesc.h"

static const char hex[] = "0123456789abcdef";

/* RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF */
size_t textesc_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

static char *put_fffd(char *d)
{
	*d++ = (char)0xef;
	*d++ = (char)0xbf;
	*d++ = (char)0xbd;
	return d;
}

/*
 * Copy the UTF-8 sequence starting at s (a byte >= 0x80) to *d, or write
 * U+FFFD for an invalid one -- and in XML for U+FFFE and U+FFFF, which
 * are not XML characters either.  Returns where the input goes on.
 */
static const unsigned char *put_utf8(char **d, const unsigned char *s,
				     const unsigned char *e, int xml)
{
	size_t k = textesc_utf8_seq(s, (size_t)(e - s));

	if (!k || (xml && k == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)) {
		*d = put_fffd(*d);
		return s + (k ? k : 1);
	}
	memcpy(*d, s, k);
	*d += k;
	return s + k;
}

char *textesc_json(char *d, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str, *e = s + n;

	while (s < e) {
		unsigned c = *s;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*d++ = c;
			s++;
			continue;
		}
		if (c < 0x80) {
			*d++ = '\\';
			switch (c) {
			case '"':  *d++ = '"'; break;
			case '\\': *d++ = '\\'; break;
			case '\n': *d++ = 'n'; break;
			case '\t': *d++ = 't'; break;
			case '\r': *d++ = 'r'; break;
			default:
				*d++ = 'u'; *d++ = '0'; *d++ = '0';
				*d++ = hex[c >> 4]; *d++ = hex[c & 15];
			}
			s++;
			continue;
		}
		s = put_utf8(&d, s, e, 0);
	}
	return d;
}

char *textesc_xml(char *d, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str, *e = s + n;

	while (s < e) {
		unsigned c = *s;

		if (c < 0x80) {
			switch (c) {
			case '&':  memcpy(d, "&amp;", 5); d += 5; break;
			case '<':  memcpy(d, "&lt;", 4); d += 4; break;
			case '>':  memcpy(d, "&gt;", 4); d += 4; break;
			case '"':  memcpy(d, "&quot;", 6); d += 6; break;
			case '\'': memcpy(d, "&#39;", 5); d += 5; break;
			default:
				/* XML 1.0 has no way to write other control characters */
				if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
					d = put_fffd(d);
				else
					*d++ = c;
			}
			s++;
			continue;
		}
		s = put_utf8(&d, s, e, 1);
	}
	return d;
}
