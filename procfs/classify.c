/* SPDX-License-Identifier: MIT */
/*
 * What backs a mapping, from what maps shows of it.  The kernel names:
 *   no file: inode 0, no path, or a [bracketed] name;
 *   MAP_SHARED|MAP_ANONYMOUS and shared /dev/zero: "/dev/zero (deleted)",
 *     or "[anon_shmem:NAME]" once named, on the internal shmem mount;
 *   memfd_create: "/memfd:NAME (deleted)", on the internal shmem mount, or on
 *     an internal hugetlbfs mount for MFD_HUGETLB;
 *   SysV shm: "/SYSV%08x (deleted)" with the key in hex, and the shmid as
 *     the inode number (ipc/shm.c sets i_ino to it);
 *   private /dev/zero: "/dev/zero", though its memory is anonymous.
 * Files of other mounts are shmem or hugetlb by their device (fs_table.c).
 */
#include <errno.h>
#include <string.h>

#include "procfs_internal.h"

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static const struct {
	const char *name;
	enum procfs_special special;
} special_names[] = {
	{ "[heap]", PROCFS_SPECIAL_HEAP },
	{ "[stack]", PROCFS_SPECIAL_STACK },
	{ "[vdso]", PROCFS_SPECIAL_VDSO },
	{ "[vvar]", PROCFS_SPECIAL_VVAR },
	{ "[vvar_vclock]", PROCFS_SPECIAL_VVAR },
	{ "[vsyscall]", PROCFS_SPECIAL_VSYSCALL },
};

static enum procfs_special special_of(const char *path)
{
	if (path[0] != '[')
		return PROCFS_SPECIAL_NONE;
	for (size_t i = 0; i < sizeof(special_names) / sizeof(special_names[0]); i++)
		if (!strcmp(path, special_names[i].name))
			return special_names[i].special;
	if (starts_with(path, "[anon:") || starts_with(path, "[anon_shmem:"))
		return PROCFS_SPECIAL_ANON_NAME;
	return PROCFS_SPECIAL_OTHER;
}

/* "/SYSV" and exactly eight hex digits. */
static bool is_sysv_name(const char *path)
{
	if (!starts_with(path, "/SYSV") || strlen(path) != 13)
		return false;
	for (const char *p = path + 5; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

static enum mm_obj_kind kind_of(const struct procfs_vma *v,
				const struct procfs_fs *fs)
{
	if (starts_with(v->path, "[anon_shmem:"))
		return MM_OBJ_SHMEM;
	if (v->ino == 0)
		return MM_OBJ_ANON;
	if (v->deleted && is_sysv_name(v->path))
		return MM_OBJ_SYSV;
	if (fs)
		return fs->kind;
	/* Names of the internal shmem mount, for callers without a table. */
	if (v->deleted &&
	    (!strcmp(v->path, "/dev/zero") || starts_with(v->path, "/memfd:")))
		return MM_OBJ_SHMEM;
	if (!v->shared && !v->deleted && !strcmp(v->path, "/dev/zero"))
		return MM_OBJ_ANON;
	return MM_OBJ_FILE;
}

void procfs_classify(struct procfs_vma *v, const struct procfs_fs_table *fs)
{
	const struct procfs_fs *f = v->ino ? procfs_fs_find(fs, v->dev) : NULL;

	v->special = special_of(v->path);
	v->kind = kind_of(v, f);
	v->huge_shift = f ? f->huge_shift : 0;
	/* smaps knows for sure, table or not. */
	if (v->smaps.vmflags & PROCFS_VMF_HUGETLB) {
		v->huge_shift = procfs_log2(v->smaps.kernel_page_size);
		if (v->kind != MM_OBJ_SYSV)
			v->kind = MM_OBJ_HUGETLB;
	}
}

int procfs_vma_mapping(const struct procfs_vma *v, struct mm_mapping *out)
{
	bool anon = v->kind == MM_OBJ_ANON;
	uint32_t vmf = v->smaps.vmflags;

	if (v->end > MM_TASK_SIZE || v->start >= v->end)
		return -EINVAL;
	*out = (struct mm_mapping){
		.addr = v->start,
		.len = v->end - v->start,
		.offset = anon ? 0 : v->offset,
		.obj = { v->kind, anon ? 0 : v->dev, anon ? 0 : v->ino },
		.prot = v->prot,
		.huge_shift = v->huge_shift,
		.listed = true,
	};
	if (v->shared)
		out->flags |= MM_VMA_SHARED;
	if (vmf & PROCFS_VMF_LOCKED)
		out->flags |= MM_VMA_LOCKED;
	if (vmf & PROCFS_VMF_DONTCOPY)
		out->flags |= MM_VMA_DONTFORK;
	if (vmf & PROCFS_VMF_WIPEONFORK)
		out->flags |= MM_VMA_WIPEONFORK;
	/* fork copies both kinds of PFN mapping (vma_needs_copy). */
	if ((vmf & (PROCFS_VMF_PFNMAP | PROCFS_VMF_MIXEDMAP)) ||
	    v->special == PROCFS_SPECIAL_VVAR)
		out->flags |= MM_VMA_PFNMAP;
	return 0;
}
