/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cli.c - what the example programs' command lines share: source files
 * read whole, numeric options.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "jit.h"

/* The whole file, NUL-terminated; NULL with errno set. *len gets its length. */
char *jc_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0, n;
	int err = 0;

	*len = 0;
	if (!f)
		return NULL;
	do {
		if (*len + 4096 + 1 > cap) {
			char *t = realloc(text, cap = (cap ? cap * 2 : 8192));

			if (!t) {
				err = ENOMEM;
				break;
			}
			text = t;
		}
		n = fread(text + *len, 1, 4096, f);
		*len += n;
	} while (n);
	if (!err && ferror(f))
		err = errno ? errno : EIO;
	fclose(f);
	if (err) {
		free(text);
		return errno = err, NULL;
	}
	text[*len] = 0;
	return text;
}

long jc_number(const char *prog, const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < 1 || v > INT_MAX) {
		fprintf(stderr, "%s: %s must be a positive number, not '%s'\n", prog, what, s);
		exit(2);
	}
	return v;
}
