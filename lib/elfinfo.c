/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* e_machine of the running executable, for the jitdump header (libelf). */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <unistd.h>

#include "core.h"

/* What this library was built for: used only when /proc/self/exe is unreadable. */
#if defined(__x86_64__)
# define JP_BUILD_MACHINE EM_X86_64
#elif defined(__aarch64__)
# define JP_BUILD_MACHINE EM_AARCH64
#elif defined(__i386__)
# define JP_BUILD_MACHINE EM_386
#elif defined(__arm__)
# define JP_BUILD_MACHINE EM_ARM
#elif defined(__riscv)
# define JP_BUILD_MACHINE EM_RISCV
#elif defined(__powerpc64__)
# define JP_BUILD_MACHINE EM_PPC64
#elif defined(__s390x__)
# define JP_BUILD_MACHINE EM_S390
#else
# define JP_BUILD_MACHINE EM_NONE
#endif

static unsigned machine;
static pthread_once_t machine_once = PTHREAD_ONCE_INIT;

static void read_machine(void)
{
	GElf_Ehdr ehdr;
	Elf *e = NULL;
	int fd;

	machine = JP_BUILD_MACHINE;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		jp_debug("cannot open /proc/self/exe; using the build's e_machine %u", machine);
		return;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && gelf_getehdr(e, &ehdr))
		machine = ehdr.e_machine;
	else
		jp_debug("/proc/self/exe: %s; using the build's e_machine %u", elf_errmsg(-1), machine);
	elf_end(e);
	close(fd);
}

unsigned jp_elf_machine(void)
{
	pthread_once(&machine_once, read_machine);
	return machine;
}
