/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader of jitperf-<pid>.stats files (format: jitperf-stats(5)), used by
 * jitperf report and the record summary.
 */
#ifndef JITPERF_STATS_READ_H
#define JITPERF_STATS_READ_H

#include <stddef.h>
#include <stdint.h>

#define STATS_NO_VALUE UINT64_MAX   /* counter shown as "-": not supported */

struct stats_row {
	char     *name;
	uint64_t  calls, total_ns, self_ns, min_ns, mean_ns, max_ns, unbalanced;
	uint64_t *counters;         /* ncounters values, STATS_NO_VALUE if "-" */
};

struct stats_file {
	uint32_t          pid;
	char              clock[16];
	uint32_t          sample_every;
	size_t            ncounters;
	char            **counters;     /* names from the column header */
	size_t            nrows;
	struct stats_row *rows;
};

/*
 * Read one statistics file.  0, or a negative errno with a one-line message
 * in errbuf naming the file and the line.
 */
int stats_read(const char *path, struct stats_file **out, char *errbuf, size_t errlen);
void stats_free(struct stats_file *s);

#endif
