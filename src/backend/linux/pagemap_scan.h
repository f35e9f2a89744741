/* pagemap_scan.h - the PAGEMAP_SCAN ioctl on /proc/PID/pagemap (Linux 6.7,
 * Documentation/admin-guide/mm/pagemap.rst): the kernel walks the page
 * tables and hands back only the runs of pages in the asked categories.
 * For C libraries whose kernel headers predate it (Debian 12's are 6.1),
 * the UAPI's own definitions (include/uapi/linux/fs.h). Used by the
 * soft-dirty reads (softdirty_scan.c) and the huge-page map (space_huge.c).
 */
#ifndef TIER_LINUX_PAGEMAP_SCAN_H
#define TIER_LINUX_PAGEMAP_SCAN_H

#include <linux/fs.h>
#include <linux/types.h>
#include <sys/ioctl.h>

#ifndef PAGEMAP_SCAN
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_HUGE (1 << 6)
#define PAGE_IS_SOFT_DIRTY (1 << 7)
struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};
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
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

#endif
