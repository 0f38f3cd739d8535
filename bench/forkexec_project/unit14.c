/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit14(int x) { return (x | 256) - 3; }
