/* SPDX-License-Identifier: MIT */
/* One model world per policy, fed the same operations; `linux` is always
 * the first, the baseline every other policy is compared with. */
#ifndef PTSHARE_WORLDS_H
#define PTSHARE_WORLDS_H

#include <stddef.h>

#include "ptshare/mm.h"

#define WORLDS_MAX 8

struct worlds {
	struct mm_policy policy[WORLDS_MAX];
	struct mm_world *w[WORLDS_MAX];
	size_t n;
};

/* list: comma-separated policy specs (mm_policy_parse), or NULL for every
 * built-in policy.  Returns 0, or -1 with a message in err. */
int worlds_init(struct worlds *ws, const char *list, char *err, size_t errlen);
void worlds_free(struct worlds *ws);

#endif
