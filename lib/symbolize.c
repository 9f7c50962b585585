/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placeholder symbolizer: gives the "@native:module+0xoff" name back
 * unchanged.  Helper C2 replaces this file with the libdw symbolizer.
 */
#include "config.h"

#include <stdio.h>

#include "symbolize.h"

int jp_symbolize_native(const char *name, char *out, size_t outlen)
{
	if (outlen)
		snprintf(out, outlen, "%s", name);
	return 0;
}
