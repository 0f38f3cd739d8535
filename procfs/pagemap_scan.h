/* SPDX-License-Identifier: MIT */
/* PAGEMAP_SCAN's uapi (linux/fs.h since 6.7), for older installed headers:
 * procfs/scan.c and bench/cow_written.c. */
#ifndef PTSHARE_PAGEMAP_SCAN_H
#define PTSHARE_PAGEMAP_SCAN_H

#include <linux/fs.h>

#ifndef PAGEMAP_SCAN
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)

#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_FILE (1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#define PAGE_IS_PFNZERO (1 << 5)
#define PAGE_IS_HUGE (1 << 6)

struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};

#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)

struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};
#endif

#endif
