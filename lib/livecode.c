/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading this process's live code for the standby wake (lib/core.h,
 * jp_standby_read): below lib/jitdump.c, which writes the bytes read, and
 * lib/standby.c, which wakes the sessions.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "core.h"

/*
 * The code bytes are read with the kernel's checks, so that code freed
 * without jitperf_code_unload is an error (EFAULT), not a crash:
 * process_vm_readv of our own pid.  A seccomp profile may forbid that
 * call (Docker's default does, without CAP_SYS_PTRACE): then the bytes
 * come through /proc/self/mem, whose pread fails (EIO) on memory that is
 * not mapped, as process_vm_readv does.  Only when neither can be used is
 * the wake an error, said in its reply (jp_standby_strerror), never
 * taken for code that is gone.  Under jp->lock of the session woken;
 * sessions are woken one at a time (the wake of jp_standby_listen).
 */
static int mem_fd = -1;
static pid_t mem_pid;           /* whose /proc/self/mem mem_fd is (a fork child reopens) */
static int vm_readv_fails;      /* process_vm_readv refused: /proc/self/mem from then on */
static char read_why[256];      /* why code cannot be read at all, for the reply */

static int read_mem(void *dst, uintptr_t addr, size_t len, int vm_err)
{
	pid_t pid = getpid();
	ssize_t n;

	if (mem_fd >= 0 && mem_pid != pid) {
		close(mem_fd);  /* the parent's memory, inherited */
		mem_fd = -1;
	}
	if (mem_fd < 0) {
		mem_fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
		if (mem_fd < 0) {
			int err = errno;

			snprintf(read_why, sizeof(read_why),
				 "cannot read the JIT code: process_vm_readv: %s, /proc/self/mem: %s; "
				 "allow process_vm_readv in the seccomp profile (docker run "
				 "--cap-add SYS_PTRACE) or mount /proc",
				 strerror(vm_err), strerror(err));
			return -err;
		}
		mem_pid = pid;
	}
	do
		n = pread(mem_fd, dst, len, (off_t)addr);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0 || errno == EIO || errno == EFAULT)
		return -EFAULT;         /* not mapped (all or part): the code is gone */
	snprintf(read_why, sizeof(read_why),
		 "cannot read the JIT code: process_vm_readv: %s, /proc/self/mem: %s; allow "
		 "process_vm_readv in the seccomp profile (docker run --cap-add SYS_PTRACE)",
		 strerror(vm_err), strerror(errno));
	return -errno;
}

void jp_standby_read_begin(void)
{
	read_why[0] = '\0';
}

int jp_standby_read(void *dst, uintptr_t addr, size_t len)
{
	struct iovec to = { dst, len }, from = { (void *)addr, len };
	ssize_t n;

	if (!vm_readv_fails) {
		n = process_vm_readv(getpid(), &to, 1, &from, 1, 0);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || errno == EFAULT)
			return -EFAULT;
		jp_debug("process_vm_readv: %s: reading code through /proc/self/mem",
			 strerror(errno));
		vm_readv_fails = errno;
	}
	return read_mem(dst, addr, len, vm_readv_fails);
}

const char *jp_standby_strerror(int err)
{
	return read_why[0] ? read_why : jitperf_strerror(err);
}
