/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit09(int x) { return x + 4099; }
