/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit18(int x) { return x & 0x3ff; }
