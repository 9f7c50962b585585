/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf.data as an input of jitperf convert: read natively
 * (read/pdscript.h), so converting needs no perf.  Recordings whose call
 * graphs are copies of the user stack (perf record --call-graph dwarf)
 * need an unwinder; those are handed to `perf script`, and the user is
 * told so.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cvinput.h"
#include "read/pdscript.h"
#include "read/perfdata.h"
#include "tools/cmds.h"

int cv_read_perfdata(const char *data, const char *peek, size_t npeek, unsigned flags,
		     int with_calls, const struct cv_sink *sink, void *arg, char *err,
		     size_t errlen)
{
	struct pd_script_info info;
	struct pd_file *f;
	int ret;

	if (strcmp(data, "-")) {
		ret = pd_script_read(data, flags, NULL, sink->sample, arg, &info, err, errlen);
	} else {
		ret = pd_open_stream(&f, 0, peek, npeek, "-", err, errlen);
		if (ret)
			return ret;
		ret = pd_script_read_file(f, flags, NULL, sink->sample, arg, &info, err, errlen);
		pd_close(f);
		if (ret == -EOPNOTSUPP && info.unwind) {
			cmd_err("-: call graphs recorded with --call-graph dwarf need perf "
				"script to unwind them: give the file's name");
			return ret;
		}
	}
	if (ret == -EOPNOTSUPP && info.unwind) {
		cmd_err("%s: call graphs recorded with --call-graph dwarf are unwound by "
			"perf script", data);
		return cv_read_perfscript(data, flags, with_calls, sink, arg, err, errlen);
	}
	if (ret)
		return ret;
	if (info.filtered)
		cmd_err("%s: only samples of the first event (%s) are kept", data, info.event);
	if (info.lost)
		cmd_err("%s: %" PRIu64 " samples were lost while recording", data, info.lost);
	if (!info.monotonic && with_calls)
		cmd_err("%s was not recorded with perf record -k 1 "
			"(CLOCK_MONOTONIC): its samples are not on the timeline of the traced calls",
			data);
	return 0;
}
