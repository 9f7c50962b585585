/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The standby protocol (doc/attach.md): how `jitperf record -p` wakes a
 * process whose sessions hold their files back (JITPERF=standby).  Shared
 * by the listener (lib/standby.c) and the recorder (tools/record/attach.c).
 *
 * - The process listens on the abstract unix stream socket
 *   "\0jitperf-standby-<pid>", pid as the process knows itself (in a
 *   container: its own pid namespace's).
 * - The recorder sends one line: "attach\n", or "attach DIR\n" with DIR an
 *   absolute path where the files are to be written.
 * - The process answers once its files are complete, a line per session:
 *   "ok N PATH" (N functions written, PATH the jitdump) or "error TEXT";
 *   "ok 0" alone when nothing is in standby.  A peer whose uid is neither
 *   the process's effective uid nor root gets "error permission denied".
 */
#ifndef JITPERF_FORMAT_STANDBY_H
#define JITPERF_FORMAT_STANDBY_H

#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>

#define JPSTANDBY_NAME     "jitperf-standby-%d"  /* after the abstract socket's NUL */
#define JPSTANDBY_ATTACH   "attach"              /* the request, then " DIR" or not, "\n" */
#define JPSTANDBY_OK       "ok "                 /* a reply line's start: woken */
#define JPSTANDBY_ERROR    "error "              /* ... or not, and why */
#define JPSTANDBY_NOTHING  "ok 0\n"              /* the whole reply: nothing in standby */
#define JPSTANDBY_DENIED   "error permission denied\n"

/* The listening address of process pid into a; its length for bind/connect. */
static inline socklen_t jpstandby_address(struct sockaddr_un *a, int pid)
{
	int n;

	*a = (struct sockaddr_un){ .sun_family = AF_UNIX };
	/* sun_path[0] = 0: the abstract namespace, no file to clean up */
	n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, JPSTANDBY_NAME, pid);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

#endif /* JITPERF_FORMAT_STANDBY_H */
