/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit17(int x) { return (x * 7) ^ 99; }
