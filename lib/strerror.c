/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jitperf_strerror: text for every code the library returns. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "jitperf.h"

static const struct {
	int         err;
	const char *text;
} texts[] = {
	{ 0,            "success" },
	{ EINVAL,       "invalid argument (NULL name, function or address, zero length, "
			"tier over 15, bad tier tag, bad options, bad JITPERF* variable "
			"or eh_frame)" },
	{ ENOMEM,       "out of memory" },
	{ ENOENT,       "no such code index or open compile, or the output directory "
			"does not exist" },
	{ ENOSPC,       "no space left on the device of an output file" },
	{ ENOBUFS,      "the session's function table is full (jitperf_fn_register)" },
	{ EDQUOT,       "disk quota exceeded writing an output file" },
	{ EFBIG,        "output file too large" },
	{ EIO,          "input/output error writing an output file" },
	{ EACCES,       "permission denied creating an output file" },
	{ EPERM,        "operation not permitted (an output name in a sticky directory such "
			"as /tmp is taken by another user's file, link or FIFO, "
			"or the jitdump cannot be mapped executable)" },
	{ EROFS,        "output directory is on a read-only file system" },
	{ ENOTDIR,      "output directory is not a directory" },
	{ ENAMETOOLONG, "output path too long" },
	{ ELOOP,        "output file is a symbolic link (not followed)" },
	{ EEXIST,       "output file exists" },
	{ EMFILE,       "too many open files in this process" },
	{ ENFILE,       "too many open files in the system" },
	{ E2BIG,        "record too large for the jitdump or tiers format (over 4 GiB)" },
	{ EFAULT,       "code address is not readable" },
	{ EOPNOTSUPP,   "not supported on this architecture" },
	{ EBADF,        "session is closed" },
	{ EBUSY,        "another session of this process already traces or counts "
			"(only one instrumenting session per process)" },
	{ ENODEV,       "the output directory's file system cannot map files "
			"(the jitdump must be mapped for perf to find it)" },
	{ EISDIR,       "an output file name is taken by a directory" },
	{ EADDRINUSE,   "standby: another process holds this process's socket name "
			"(@jitperf-standby-<pid>)" },
};

const char *jitperf_strerror(int err)
{
	const char *s;
	size_t i;

	if (err == INT_MIN)
		return "unknown jitperf error";
	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (texts[i].err == err)
			return texts[i].text;
	/* anything else the system handed us: its own description */
	s = strerrordesc_np(err);
	return s ? s : "unknown jitperf error";
}
