/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ringfix FILE...: ring_recover() on each FILE, as jitperf record does for
 * the files of killed processes; prints "FILE BYTES" (bytes put in) or
 * "FILE none"/"FILE busy", and the error, exiting 1, when a ring is bad.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "read/ring_read.h"

int main(int argc, char **argv)
{
	char err[8192];
	int st = 0;

	for (int i = 1; i < argc; i++) {
		int r = ring_recover(argv[i], err, sizeof(err));

		if (r >= 0)
			printf("%s %d\n", argv[i], r);
		else if (r == -ENOENT || r == -EBUSY)
			printf("%s %s\n", argv[i], r == -ENOENT ? "none" : "busy");
		else {
			fprintf(stderr, "ringfix: %s\n", err);
			st = 1;
		}
	}
	return st;
}
