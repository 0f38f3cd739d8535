/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit02(int x) { return x ^ 0x5a5a; }
