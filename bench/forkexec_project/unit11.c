/* SPDX-License-Identifier: MIT */
#include "units.h"

int unit11(int x) { return (x ^ 13) * 5; }
