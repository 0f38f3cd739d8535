/* SPDX-License-Identifier: MIT */
/* The worlds of include/ptshare/mm.h: one per policy named. */
#include "ptshare/mm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(struct mm_worlds *ws, const struct mm_policy *p, char *err,
	       size_t errlen)
{
	for (size_t i = 0; i < ws->n; i++)
		if (!strcmp(ws->policy[i].name, p->name) &&
		    ws->policy[i].levels == p->levels &&
		    ws->policy[i].mshare_min == p->mshare_min &&
		    ws->policy[i].mshare_nobj == p->mshare_nobj &&
		    !memcmp(ws->policy[i].mshare_ino, p->mshare_ino,
			    sizeof(p->mshare_ino)))
			return 0; /* named twice */
	if (ws->n == MM_WORLDS_MAX) {
		snprintf(err, errlen, "at most %d policies", MM_WORLDS_MAX);
		return -1;
	}
	ws->policy[ws->n] = *p;
	if (!(ws->w[ws->n] = mm_world_new(&ws->policy[ws->n]))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ws->n++;
	return 0;
}

int mm_worlds_init(struct mm_worlds *ws, const char *list, char *err,
		   size_t errlen)
{
	*ws = (struct mm_worlds){ 0 };
	if (add(ws, &mm_policy_linux, err, errlen))
		return -1;
	if (!list) {
		for (const struct mm_policy *const *p = mm_policies; *p; p++)
			if (!(*p)->opt_in && add(ws, *p, err, errlen))
				goto fail;
		return 0;
	}
	char *copy = strdup(list), *save = NULL;
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	size_t specs = 0;
	for (char *spec = strtok_r(copy, ",", &save); spec;
	     spec = strtok_r(NULL, ",", &save), specs++) {
		struct mm_policy p;
		if (mm_policy_parse(spec, &p, err, errlen) ||
		    add(ws, &p, err, errlen)) {
			free(copy);
			goto fail;
		}
	}
	free(copy);
	if (specs)
		return 0;
	snprintf(err, errlen, "no policy in '%s'", list);
fail:
	mm_worlds_free(ws);
	return -1;
}

void mm_worlds_free(struct mm_worlds *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		mm_world_free(ws->w[i]);
	ws->n = 0;
}
