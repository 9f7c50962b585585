/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which names are tier code, and of which tier: the marks of
 * read/tiers_model.h, with the tags the recording's tiers files give.
 * Both the table (report_tiers.c) and the calls placed by address
 * (report_tiers_addr.c) ask here.
 */
#include "config.h"

#include <string.h>

#include "report.h"

/*
 * The tier a mark names.  A jitperf tag counts when a tiers file gives
 * it (the latest file that does), or is a default "tierN": a name such
 * as "operator[]" is not tier code.
 */
int report_tier_of_name(const struct tiers *tt, const char *name, struct tm_mark *mk)
{
	char tag[JPTIERS_TAG_MAX + 1];

	if (!tm_mark_parse(name, mk))
		return -1;
	if (mk->kind == TM_V8)
		return mk->tier;
	if (mk->tag_len > JPTIERS_TAG_MAX)
		return mk->kind == TM_DOTNET ? mk->tier : -1;
	memcpy(tag, name + mk->tag_off, mk->tag_len);
	tag[mk->tag_len] = '\0';
	for (size_t i = tt->nmodels; i-- > 0;) {
		int t = tm_tier_of_tag(&tt->models[i], tag);

		if (t >= 0) {
			mk->kind = TM_JITPERF;
			return t;
		}
	}
	return mk->tier;
}

int report_is_tier_code(const struct tiers *tt, const char *name)
{
	struct tm_mark mk;

	return report_tier_of_name(tt, name, &mk) >= 0;
}

