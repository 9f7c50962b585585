/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Escaping arbitrary bytes (symbol names may hold anything but NUL, and
 * perf script text may hold NULs too) for JSON strings and XML text.
 * Invalid UTF-8 becomes U+FFFD, so the output always parses.
 * Each function writes at most TEXTESC_MAX(n) bytes and returns the end.
 */
#ifndef JITPERF_TEXTESC_H
#define JITPERF_TEXTESC_H

#include <stddef.h>

#define TEXTESC_MAX(n) ((n) * 6 + 1)

char *textesc_json(char *d, const char *s, size_t n);
char *textesc_xml(char *d, const char *s, size_t n);
/* Length of the valid UTF-8 sequence at s (1-4), 0 if invalid. */
size_t textesc_utf8_seq(const unsigned char *s, size_t n);

#endif
