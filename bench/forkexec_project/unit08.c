/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit08(int x) { return (x >> 1) | 1; }
