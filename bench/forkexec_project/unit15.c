/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit15(int x) { return x % 211 * 2; }
