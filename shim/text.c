/* SPDX-License-Identifier: MIT */
/* Strings without allocation or locale: usable anywhere in the shim. */
#include "shim.h"

size_t str_copy(char *dst, size_t cap, const char *src)
{
	size_t n = 0;

	if (!cap)
		return 0;
	while (src && src[n] && n + 1 < cap) {
		dst[n] = src[n];
		n++;
	}
	dst[n] = '\0';
	return n;
}

bool str_starts(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

size_t fmt_ulong(char *dst, size_t cap, unsigned long v)
{
	char digits[24];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (n >= cap)
		return str_copy(dst, cap, "");
	for (size_t i = 0; i < n; i++)
		dst[i] = digits[n - 1 - i];
	dst[n] = '\0';
	return n;
}
