/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit06(int x) { return ~x & 0xffff; }
