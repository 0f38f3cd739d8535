/* SPDX-License-Identifier: MIT */
/* The per-mapping lines of /proc/PID/smaps that ptshare uses. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "procfs_internal.h"

static const struct {
	char name[3];
	uint32_t flag;
} vmflag_names[] = {
	{ "sh", PROCFS_VMF_SHARED },	  { "ms", PROCFS_VMF_MAYSHARE },
	{ "mr", PROCFS_VMF_MAYREAD },	  { "mw", PROCFS_VMF_MAYWRITE },
	{ "lo", PROCFS_VMF_LOCKED },	  { "dc", PROCFS_VMF_DONTCOPY },
	{ "wf", PROCFS_VMF_WIPEONFORK },  { "pf", PROCFS_VMF_PFNMAP },
	{ "mm", PROCFS_VMF_MIXEDMAP },	  { "io", PROCFS_VMF_IO },
	{ "ht", PROCFS_VMF_HUGETLB },	  { "hg", PROCFS_VMF_HUGEPAGE },
	{ "nh", PROCFS_VMF_NOHUGEPAGE },  { "um", PROCFS_VMF_UFFD_MISSING },
	{ "uw", PROCFS_VMF_UFFD_WP },	  { "ui", PROCFS_VMF_UFFD_MINOR },
};

/* "rd wr mr mw me ac": names ptshare does not use are skipped. */
static uint32_t parse_vmflags(struct procfs_cursor line)
{
	uint32_t flags = 0;

	for (;;) {
		procfs_skip_blanks(&line);
		if (line.p == line.end)
			return flags;
		const char *word = line.p;
		while (line.p < line.end && *line.p != ' ')
			line.p++;
		if (line.p - word != 2)
			continue;
		for (size_t i = 0; i < sizeof(vmflag_names) / sizeof(vmflag_names[0]); i++)
			if (!memcmp(word, vmflag_names[i].name, 2))
				flags |= vmflag_names[i].flag;
	}
}

static const struct {
	const char *key;
	size_t offset;
} size_fields[] = {
	{ "KernelPageSize", offsetof(struct procfs_smaps, kernel_page_size) },
	{ "Rss", offsetof(struct procfs_smaps, rss) },
	{ "Anonymous", offsetof(struct procfs_smaps, anonymous) },
	{ "AnonHugePages", offsetof(struct procfs_smaps, anon_huge_pages) },
	{ "FilePmdMapped", offsetof(struct procfs_smaps, file_pmd_mapped) },
	{ "ShmemPmdMapped", offsetof(struct procfs_smaps, shmem_pmd_mapped) },
	{ "Swap", offsetof(struct procfs_smaps, swap) },
};

int procfs_smaps_field(struct procfs_cursor *line, struct procfs_smaps *s)
{
	uint64_t kb;

	if (procfs_parse_key(line, "VmFlags")) {
		s->vmflags = parse_vmflags(*line);
		return 0;
	}
	for (size_t i = 0; i < sizeof(size_fields) / sizeof(size_fields[0]); i++) {
		if (!procfs_parse_key(line, size_fields[i].key))
			continue;
		if (!procfs_parse_dec(line, &kb) || kb > UINT64_MAX >> 10)
			return -EPROTO;
		*(uint64_t *)((char *)s + size_fields[i].offset) = kb << 10;
		return 0;
	}
	return 0;
}
