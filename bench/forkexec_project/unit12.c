/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit12(int x) { return x - (x >> 3); }
