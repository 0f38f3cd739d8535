/* SPDX-License-Identifier: MIT */
/* bench/forkexec's small project: its program folds every unit into one number. */
#include <stdio.h>
#include "units.h"

int main(void)
{
	static int (*const units[])(int) = {
		unit01,
		unit02,
		unit03,
		unit04,
		unit05,
		unit06,
		unit07,
		unit08,
		unit09,
		unit10,
		unit11,
		unit12,
		unit13,
		unit14,
		unit15,
		unit16,
		unit17,
		unit18,
		unit19,
	};
	int x = 1;
	for (unsigned i = 0; i < sizeof(units) / sizeof(*units); i++)
		x = units[i](x);
	printf("%d\n", x);
	return 0;
}
