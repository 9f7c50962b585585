/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Registered functions inside tier code, by address.  The statistics
 * files name functions, not addresses; a trace (recorded with them by
 * --instrument) has both tables: the functions given to
 * jitperf_fn_register with their address, and the code loaded with its
 * name.  A function whose address lies in code named as tier code
 * (sum[opt], a trampoline's sum[interp]) counts its calls for that tier,
 * whatever name it was registered under.  A name registered in two tiers
 * is the same statistics row for both: it goes to neither.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "read/trace_read.h"

struct code_range {
	uint64_t    addr, len;
	const char *name;           /* in the reader */
};

struct codes {
	struct code_range *v;
	size_t             n;
};

static int add_code(const struct jpt_code *c, void *arg)
{
	struct codes *cs = arg;
	struct code_range *v;

	if (c->kind == JPT_CODE_UNLOAD)
		return 0;
	v = realloc(cs->v, (cs->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	cs->v = v;
	v[cs->n++] = (struct code_range){ .addr = c->addr, .len = c->len, .name = c->name };
	return 0;
}

/* name is an alias of code; a second, different code makes it ambiguous */
static int add_alias(struct tiers *tt, const char *name, const char *code)
{
	struct tier_alias *a;

	for (size_t i = 0; i < tt->naliases; i++) {
		a = &tt->aliases[i];
		if (strcmp(a->name, name))
			continue;
		if (a->code && strcmp(a->code, code)) {
			free(a->code);
			a->code = NULL;
		}
		return 0;
	}
	a = realloc(tt->aliases, (tt->naliases + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	tt->aliases = a;
	a = &tt->aliases[tt->naliases];
	a->name = strdup(name);
	a->code = strdup(code);
	if (!a->name || !a->code) {
		free(a->name);
		free(a->code);
		return -ENOMEM;
	}
	tt->naliases++;
	return 0;
}

static int trace_aliases(struct tiers *tt, const char *path)
{
	struct jpt_reader *r;
	struct codes cs = { 0 };
	int err;

	/* a trace that cannot be read leaves the join by name */
	if (jpt_open(&r, path, NULL, 0))
		return 0;
	err = jpt_for_each_code(r, add_code, &cs, NULL, 0);
	for (uint32_t id = 1; !err && id <= jpt_nfns(r); id++) {
		const struct jpt_fn *fn = jpt_fn(r, id);

		if (!fn || !fn->addr || report_is_tier_code(tt, fn->name))
			continue;
		for (size_t i = 0; i < cs.n; i++)
			if (fn->addr >= cs.v[i].addr && fn->addr - cs.v[i].addr < cs.v[i].len &&
			    report_is_tier_code(tt, cs.v[i].name)) {
				err = add_alias(tt, fn->name, cs.v[i].name);
				break;
			}
	}
	free(cs.v);
	jpt_close(r);
	return err == -ENOMEM ? err : 0;
}

int report_tiers_aliases(struct tiers *tt, const struct rundir *rd)
{
	int err = 0;

	for (size_t i = 0; i < rd->ntraces && !err; i++)
		err = trace_aliases(tt, rd->traces[i]);
	return err;
}

const char *report_tiers_alias(const struct tiers *tt, const char *name)
{
	for (size_t i = 0; i < tt->naliases; i++)
		if (!strcmp(tt->aliases[i].name, name))
			return tt->aliases[i].code;
	return NULL;
}
