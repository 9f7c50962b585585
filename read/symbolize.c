/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Symbolizer for native functions recorded by libjitperf-cyg:
 * "@native:<module path>+0x<address>" -> "function (file.c:line)".
 *
 * <address> is the function's address in the module's own ELF address
 * space (run-time address minus load bias), as addr2line -e <module>
 * takes it.  Each module is opened once with libdw (offline reporting, so
 * separate debuginfo under /usr/lib/debug is found too) and kept for later
 * names; a module that cannot be opened is remembered as such.
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize.h"

struct module {
	struct module *next;
	char          *path;
	Dwfl          *dwfl;    /* NULL: could not be opened */
	Dwfl_Module   *mod;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module *cache;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static struct module *module_get(const char *path, size_t pathlen)
{
	struct module *m;

	for (m = cache; m; m = m->next)
		if (strlen(m->path) == pathlen && memcmp(m->path, path, pathlen) == 0)
			return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = strndup(path, pathlen);
	if (!m->path) {
		free(m);
		return NULL;
	}
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (m->dwfl) {
		m->mod = dwfl_report_offline(m->dwfl, m->path, m->path, -1);
		dwfl_report_end(m->dwfl, NULL, NULL);
		if (!m->mod) {
			dwfl_end(m->dwfl);
			m->dwfl = NULL;
		}
	}
	m->next = cache;
	cache = m;
	return m;
}

/* Free the modules at exit, so leak checkers see a clean reader. */
static void __attribute__((destructor)) symbolize_cleanup(void)
{
	struct module *m, *next;

	for (m = cache; m; m = next) {
		next = m->next;
		if (m->dwfl)
			dwfl_end(m->dwfl);
		free(m->path);
		free(m);
	}
	cache = NULL;
}

/*
 * Where the function at addr (module address) is defined: its DWARF
 * declaration (DW_AT_decl_file/line, through an abstract origin for
 * out-of-line copies of inlined functions); else the line of its first
 * instruction.  Returns the file name (NULL if unknown) and sets *lineno.
 */
static const char *source_of(Dwfl_Module *mod, GElf_Addr addr, int *lineno)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
	Dwarf_Die *scopes = NULL;
	const char *file = NULL;
	Dwfl_Line *line;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;

	for (int i = 0; i < n; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		file = dwarf_decl_file(&scopes[i]);
		if (!file || dwarf_decl_line(&scopes[i], lineno) != 0)
			file = NULL;
		break;
	}
	free(scopes);
	if (file)
		return file;
	line = dwfl_module_getsrc(mod, addr);
	return line ? dwfl_lineinfo(line, NULL, lineno, NULL, NULL, NULL) : NULL;
}

/* Name and source position of addr (ELF address) in m; 0 or -ENOENT. */
static int lookup(struct module *m, GElf_Addr addr, char *out, size_t outlen)
{
	GElf_Addr bias = 0, off = 0;
	GElf_Sym sym;
	const char *fname, *file, *base;
	int lineno = 0;

	if (!m->dwfl || !dwfl_module_getelf(m->mod, &bias))
		return -ENOENT;
	addr += bias;
	fname = dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
	if (!fname)
		return -ENOENT;
	file = source_of(m->mod, addr, &lineno);

	/* "fn", "fn+0x10" inside a function, then " (file.c:line)" if known */
	if (off)
		snprintf(out, outlen, "%s+0x%llx", fname, (unsigned long long)off);
	else
		snprintf(out, outlen, "%s", fname);
	if (file && lineno > 0) {
		size_t n = strlen(out);

		base = strrchr(file, '/');
		base = base ? base + 1 : file;
		if (n < outlen)
			snprintf(out + n, outlen - n, " (%s:%d)", base, lineno);
	}
	return 0;
}

int sym_native_name(const char *name, char *out, size_t outlen)
{
	const char *path, *plus;
	unsigned long long addr;
	struct module *m;
	char *end;
	int err;

	if (!name || !out || outlen == 0)
		return -EINVAL;
	snprintf(out, outlen, "%s", name);
	if (strncmp(name, SYM_NATIVE_PREFIX, strlen(SYM_NATIVE_PREFIX)) != 0)
		return -EINVAL;
	path = name + strlen(SYM_NATIVE_PREFIX);
	/* the last "+0x": a path may contain '+' */
	plus = NULL;
	for (const char *p = strstr(path, "+0x"); p; p = strstr(p + 1, "+0x"))
		plus = p;
	if (!plus || plus == path)
		return -EINVAL;
	errno = 0;
	addr = strtoull(plus + 3, &end, 16);
	if (errno || *end || end == plus + 3)
		return -EINVAL;

	pthread_mutex_lock(&cache_lock);
	m = module_get(path, (size_t)(plus - path));
	err = m ? lookup(m, addr, out, outlen) : -ENOMEM;
	pthread_mutex_unlock(&cache_lock);
	if (err)
		snprintf(out, outlen, "%s", name);
	return err;
}

/*
 * The line table alone, for objects whose compile unit has no address
 * range (perf inject's jitted-*.so): the last row at or before addr, in
 * the sequence that holds it.
 */
static const char *line_from_table(Dwfl_Module *mod, GElf_Addr addr, int *lineno)
{
	Dwarf_Addr bias = 0;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_Off off = 0, next;
	size_t hsize, i, n;
	const char *best = NULL;
	Dwarf_Addr best_addr = 0;

	if (!dw)
		return NULL;
	addr -= bias;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0) {
			for (i = 0; i < n; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				Dwarf_Addr a;
				bool end = false;
				int ln;

				if (!l || dwarf_lineaddr(l, &a) || a > addr)
					continue;
				dwarf_lineendsequence(l, &end);
				if (a < best_addr && best)
					continue;
				if (end) {          /* addr is past this sequence */
					if (a <= addr && a >= best_addr)
						best = NULL, best_addr = a;
					continue;
				}
				if (dwarf_lineno(l, &ln) == 0 && ln > 0) {
					best = dwarf_linesrc(l, NULL, NULL);
					best_addr = a;
					*lineno = ln;
				}
			}
		}
		off = next;
	}
	return best;
}

int sym_source_line(const char *module, uint64_t addr, char *file, size_t filelen, int *line)
{
	GElf_Addr bias = 0;
	Dwfl_Line *l;
	struct module *m;
	const char *src = NULL;
	int err = -ENOENT;

	if (!module || !file || !filelen || !line)
		return -EINVAL;
	pthread_mutex_lock(&cache_lock);
	m = module_get(module, strlen(module));
	if (!m)
		err = -ENOMEM;
	else if (m->dwfl && dwfl_module_getelf(m->mod, &bias)) {
		l = dwfl_module_getsrc(m->mod, addr + bias);
		src = l ? dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL) :
			  line_from_table(m->mod, addr + bias, line);
	}
	if (src && *line > 0) {
		snprintf(file, filelen, "%s", src);
		err = 0;
	}
	pthread_mutex_unlock(&cache_lock);
	return err;
}
