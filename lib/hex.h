/* SPDX-License-Identifier: MIT */
/* Bytes as lowercase hex text (build ids), header-only. */
#ifndef PTSHARE_LIB_HEX_H
#define PTSHARE_LIB_HEX_H

#include <stddef.h>
#include <stdint.h>

/* out holds 2 * len + 1 chars: len bytes, two digits each, then a NUL. */
static inline void hex_text(char *out, const uint8_t *bytes, size_t len)
{
	static const char digit[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digit[bytes[i] >> 4];
		out[2 * i + 1] = digit[bytes[i] & 15];
	}
	out[2 * len] = '\0';
}

#endif
