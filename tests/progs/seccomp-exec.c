/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * seccomp-exec SYSCALL[,SYSCALL...] PROGRAM [ARG...]: run PROGRAM with
 * the named system calls refused (EPERM) by a seccomp filter, as a
 * container's profile refuses them (Docker's default refuses
 * process_vm_readv without CAP_SYS_PTRACE).  Knows process_vm_readv and
 * pread64.  Exit 77 where seccomp filters cannot be installed, 2 on bad
 * usage, 127 when PROGRAM cannot be run.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static const struct { const char *name; long nr; } known[] = {
	{ "process_vm_readv", SYS_process_vm_readv },
	{ "pread64",          SYS_pread64 },
};

int main(int argc, char **argv)
{
	struct sock_filter f[16];
	struct sock_fprog prog;
	char *list, *name, *save;
	unsigned n = 0, nsys = 0;
	long nrs[4];

#if !defined(__x86_64__)
	fputs("seccomp-exec: x86-64 only\n", stderr);
	return 77;
#endif
	if (argc < 3) {
		fputs("usage: seccomp-exec SYSCALL[,SYSCALL...] PROGRAM [ARG...]\n", stderr);
		return 2;
	}
	list = strdup(argv[1]);
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(name, known[i].name))
				break;
		if (i == sizeof(known) / sizeof(known[0]) || nsys == 4) {
			fprintf(stderr, "seccomp-exec: %s: not a system call it knows\n", name);
			return 2;
		}
		nrs[nsys++] = known[i].nr;
	}
	/* another architecture's calls are let through; ours are compared */
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (unsigned i = 0; i < nsys; i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		fprintf(stderr, "seccomp-exec: cannot install a filter: %s\n", strerror(errno));
		return 77;
	}
	free(list);
	execvp(argv[2], argv + 2);
	fprintf(stderr, "seccomp-exec: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
