/* SPDX-License-Identifier: MIT */
/* Reading what the program passed to a call, where a bad pointer must get
 * the program the kernel's own error rather than a crash in the shim. */
#ifndef PTSHARE_SHIM_PEEK_H
#define PTSHARE_SHIM_PEEK_H

#include <stdbool.h>
#include <stddef.h>

/* No page is smaller: a piece that does not cross a multiple of it lies in
 * one page. */
#define PEEK_PAGE 4096

/* len bytes at src into dst: false when any of them cannot be read
 * (unmapped, PROT_NONE: where the kernel would answer EFAULT). */
bool peek(void *dst, const void *src, size_t len);
/* The string at src into dst, cut at cap - 1 bytes (cap > 0) and
 * terminated: the length copied, or -1 when it cannot be read up to its
 * end or the cut. */
long peek_str(char *dst, size_t cap, const char *src);
/* The first cap - 1 bytes (or fewer, to its end) of each of the n
 * strings at src[i] into dst + i * cap, as peek_str() would, in one system
 * call for most: false when one of them cannot be read. */
bool peek_heads(char *dst, size_t cap, char *const *src, size_t n);
/* The length of the string at src, or -1 when it cannot be read to its
 * end. */
long peek_strlen(const char *src);

#endif
