/* SPDX-License-Identifier: MIT */
/* The /proc parsers on literal text: maps, smaps, status, mountinfo. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "ptshare/procfs.h"

static const char maps_text[] =
	"55d0c6a00000-55d0c6a21000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"
	"7f0000100000-7f0000200000 r-xp 00002000 fe:00 1234                       /usr/lib/lib with spaces.so\n"
	"7f0000200000-7f0000300000 rw-p 00010000 fe:00 99                         /tmp/gone (deleted)\n"
	"7f0000300000-7f0000400000 r--s 00000000 fe:00 100                        /tmp/a (deleted) b\n"
	"7f0000400000-7f0000500000 rw-s 00000000 00:01 34                         /SYSV1234abcd (deleted)\n"
	"7f0000500000-7f0000600000 rw-s 00100000 00:01 87                         /memfd:my memfd (deleted)\n"
	"7f0000600000-7f0000700000 rw-s 00000000 00:01 84                         /dev/zero (deleted)\n"
	"7f0000700000-7f0000800000 rw-p 00000000 00:06 4                          /dev/zero\n"
	"7f0000800000-7f0000900000 rw-p 00000000 00:00 0                          [anon:my buffer]\n"
	"7f0000900000-7f0000a00000 rw-s 00000000 00:01 90                         [anon_shmem:pool]\n"
	"7f0000a00000-7f0000a01000 ---p 00000000 00:00 0                          [uprobes]\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd00100000-7ffd00104000 r--p 00000000 00:00 0                          [vvar]\n"
	"7ffd00104000-7ffd00106000 r--p 00000000 00:00 0                          [vvar_vclock]\n"
	"7ffd00106000-7ffd00108000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

struct want {
	uint64_t start, end, offset, dev, ino;
	uint32_t prot;
	bool shared, deleted;
	enum mm_obj_kind kind;
	enum procfs_special special;
	const char *path;
};

#define RW (MM_PROT_READ | MM_PROT_WRITE)
#define RX (MM_PROT_READ | MM_PROT_EXEC)

static const struct want maps_want[] = {
	{ 0x55d0c6a00000, 0x55d0c6a21000, 0, 0, 0, RW, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_HEAP, "[heap]" },
	{ 0x7f0000000000, 0x7f0000100000, 0, 0, 0, RW, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_NONE, "" },
	{ 0x7f0000100000, 0x7f0000200000, 0x2000, 0xfe00, 1234, RX, false, false, MM_OBJ_FILE, PROCFS_SPECIAL_NONE, "/usr/lib/lib with spaces.so" },
	{ 0x7f0000200000, 0x7f0000300000, 0x10000, 0xfe00, 99, RW, false, true, MM_OBJ_FILE, PROCFS_SPECIAL_NONE, "/tmp/gone" },
	{ 0x7f0000300000, 0x7f0000400000, 0, 0xfe00, 100, MM_PROT_READ, true, false, MM_OBJ_FILE, PROCFS_SPECIAL_NONE, "/tmp/a (deleted) b" },
	{ 0x7f0000400000, 0x7f0000500000, 0, 1, 34, RW, true, true, MM_OBJ_SYSV, PROCFS_SPECIAL_NONE, "/SYSV1234abcd" },
	{ 0x7f0000500000, 0x7f0000600000, 0x100000, 1, 87, RW, true, true, MM_OBJ_SHMEM, PROCFS_SPECIAL_NONE, "/memfd:my memfd" },
	{ 0x7f0000600000, 0x7f0000700000, 0, 1, 84, RW, true, true, MM_OBJ_SHMEM, PROCFS_SPECIAL_NONE, "/dev/zero" },
	{ 0x7f0000700000, 0x7f0000800000, 0, 6, 4, RW, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_NONE, "/dev/zero" },
	{ 0x7f0000800000, 0x7f0000900000, 0, 0, 0, RW, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_ANON_NAME, "[anon:my buffer]" },
	{ 0x7f0000900000, 0x7f0000a00000, 0, 1, 90, RW, true, false, MM_OBJ_SHMEM, PROCFS_SPECIAL_ANON_NAME, "[anon_shmem:pool]" },
	{ 0x7f0000a00000, 0x7f0000a01000, 0, 0, 0, 0, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_OTHER, "[uprobes]" },
	{ 0x7ffd00000000, 0x7ffd00021000, 0, 0, 0, RW, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_STACK, "[stack]" },
	{ 0x7ffd00100000, 0x7ffd00104000, 0, 0, 0, MM_PROT_READ, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_VVAR, "[vvar]" },
	{ 0x7ffd00104000, 0x7ffd00106000, 0, 0, 0, MM_PROT_READ, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_VVAR, "[vvar_vclock]" },
	{ 0x7ffd00106000, 0x7ffd00108000, 0, 0, 0, RX, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_VDSO, "[vdso]" },
	{ 0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, MM_PROT_EXEC, false, false, MM_OBJ_ANON, PROCFS_SPECIAL_VSYSCALL, "[vsyscall]" },
};

static void assert_vma(const struct procfs_vma *v, const struct want *w)
{
	assert_int_equal(v->start, w->start);
	assert_int_equal(v->end, w->end);
	assert_int_equal(v->offset, w->offset);
	assert_int_equal(v->dev, w->dev);
	assert_int_equal(v->ino, w->ino);
	assert_int_equal(v->prot, w->prot);
	assert_int_equal(v->shared, w->shared);
	assert_int_equal(v->deleted, w->deleted);
	assert_int_equal(v->kind, w->kind);
	assert_int_equal(v->special, w->special);
	assert_string_equal(v->path, w->path);
}

static void test_maps_lines(void **state)
{
	struct procfs_maps m = { 0 };
	size_t nwant = sizeof(maps_want) / sizeof(maps_want[0]);

	assert_int_equal(procfs_maps_parse(maps_text, strlen(maps_text), NULL, &m), 0);
	assert_int_equal(m.n, nwant);
	assert_false(m.has_smaps);
	for (size_t i = 0; i < nwant; i++)
		assert_vma(&m.vmas[i], &maps_want[i]);
	procfs_maps_free(&m);
}

/* A reused struct is refilled, and its paths stay valid until then. */
static void test_maps_reuse(void **state)
{
	static const char one[] =
		"7f0000100000-7f0000200000 r-xp 00002000 fe:00 1234 /bin/one\n";
	struct procfs_maps m = { 0 };

	assert_int_equal(procfs_maps_parse(maps_text, strlen(maps_text), NULL, &m), 0);
	assert_int_equal(procfs_maps_parse(one, strlen(one), NULL, &m), 0);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.vmas[0].path, "/bin/one");
	procfs_maps_free(&m);
	assert_null(m.vmas);
}

/* Paths up to PATH_MAX and beyond, wide device numbers, no fixed limits. */
static void test_maps_long_line(void **state)
{
	size_t plen = 5000;
	char *text = malloc(plen + 200);
	struct procfs_maps m = { 0 };

	assert_non_null(text);
	int n = sprintf(text, "7f0000100000-7f0000200000 r--s 00000000 103:fffff 18446744073709551615 /");
	memset(text + n, 'x', plen - 1);
	strcpy(text + n + plen - 1, " (deleted)\n");
	assert_int_equal(procfs_maps_parse(text, strlen(text), NULL, &m), 0);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.vmas[0].dev, makedev(0x103, 0xfffff));
	assert_int_equal(m.vmas[0].ino, UINT64_MAX);
	assert_true(m.vmas[0].deleted);
	assert_int_equal(strlen(m.vmas[0].path), plen);
	assert_int_equal(m.vmas[0].kind, MM_OBJ_FILE);
	procfs_maps_free(&m);
	free(text);
}

static void test_maps_malformed(void **state)
{
	static const char *const bad[] = {
		"7f0000100000-7f0000200000 r-xq 00000000 fe:00 1 /x\n",   /* perms */
		"7f0000100000-7f0000200000 rxwp 00000000 fe:00 1 /x\n",   /* order */
		"7f0000200000-7f0000100000 r-xp 00000000 fe:00 1 /x\n",   /* end < start */
		"7f0000100000-7f0000200000 r-xp 00000000 fe00 1 /x\n",    /* dev */
		"7f0000100000-7f0000200000 r-xp 00000000 fe:00\n",        /* inode */
		"7f0000100000-7f0000200000 r-xp 00000000 fe:00 12x /x\n", /* inode */
		"7f0000100000 r-xp 00000000 fe:00 1 /x\n",                /* range */
		"\n",
		"Rss: 4 kB\n", /* a field before any mapping */
		"7f0000100000-7f0000200000 r-xp 00000000 fe:00 1 /x\nRss: x kB\n",
		"7f0000100000-7f0000200000 r-xp 00000000 fe:00 1 /x\n garbage\n",
		"1ffffffffffffffff-2 r-xp 00000000 fe:00 1 /x\n",          /* overflow */
		/* overlapping: a read torn by the process mapping meanwhile */
		"7f0000100000-7f0000200000 r-xp 00000000 fe:00 1 /x\n"
		"7f00001ff000-7f0000300000 rw-p 00000000 00:00 0\n",
		"7f0000300000-7f0000400000 r-xp 00000000 fe:00 1 /x\n" /* order */
		"7f0000100000-7f0000200000 rw-p 00000000 00:00 0\n",
	};
	struct procfs_maps m = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("%s", bad[i]);
		assert_int_equal(procfs_maps_parse(bad[i], strlen(bad[i]), NULL, &m),
				 -EPROTO);
		assert_int_equal(m.n, 0);
	}
	procfs_maps_free(&m);
}

static const char mountinfo_text[] =
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	"25 24 0:23 / /dev/shm rw,relatime shared:5 master:1 - tmpfs tmpfs rw,size=24683568k\n"
	"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
	"66 46 0:40 / /mnt/huge\\040pages rw,relatime - hugetlbfs none rw,pagesize=2M\n"
	"67 66 0:41 / /mnt/huge1g rw,relatime - hugetlbfs none rw,pagesize=1024M\n"
	"68 66 0:42 / /mnt/huge64k rw,relatime - hugetlbfs none rw,pagesize=64K,size=1G\n";

static void test_mountinfo(void **state)
{
	struct procfs_fs_table t = { 0 };
	const struct procfs_fs want[] = {
		{ makedev(0, 23), MM_OBJ_SHMEM, 0 },
		{ makedev(0, 40), MM_OBJ_HUGETLB, 21 },
		{ makedev(0, 41), MM_OBJ_HUGETLB, 30 },
		{ makedev(0, 42), MM_OBJ_HUGETLB, 16 },
	};

	assert_int_equal(procfs_fs_table_parse(mountinfo_text, strlen(mountinfo_text), &t), 0);
	assert_int_equal(t.n, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(t.fs[i].dev, want[i].dev);
		assert_int_equal(t.fs[i].kind, want[i].kind);
		assert_int_equal(t.fs[i].huge_shift, want[i].huge_shift);
	}
	procfs_fs_table_free(&t);
}

static void test_mountinfo_malformed(void **state)
{
	static const char *const bad[] = {
		"66 46 0:40 / /mnt rw - hugetlbfs none rw\n", /* no pagesize */
		"66 46 0:40 / /mnt rw - hugetlbfs none rw,pagesize=2Q\n",
		"66 46 0x40 / /mnt rw - tmpfs none rw\n",
		"66 46 0:40 / /mnt rw tmpfs none rw\n", /* no separator */
		"66 46 0:40 / /mnt rw -\n",
	};
	struct procfs_fs_table t = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("%s", bad[i]);
		assert_int_equal(procfs_fs_table_parse(bad[i], strlen(bad[i]), &t), -EPROTO);
	}
	procfs_fs_table_free(&t);
}

/* The device, not the name, makes a tmpfs or hugetlbfs file what it is. */
static void test_maps_with_fs_table(void **state)
{
	static const char text[] =
		"7f0000000000-7f0000200000 rw-s 00000000 00:17 5   /dev/shm/pool (deleted)\n"
		"7f0000200000-7f0000400000 rw-s 00000000 00:28 9   /mnt/huge pages/f\n"
		"7f0000400000-7f0000600000 rw-s 00000000 00:28 35  /SYSV00000000 (deleted)\n"
		"7f0000600000-7f0000800000 rw-s 00000000 00:29 45  /memfd:big (deleted)\n"
		"7f0000800000-7f0000a00000 rw-s 00000000 fe:00 7   /home/db/data\n";
	struct procfs_fs_table t = { 0 };
	struct procfs_maps m = { 0 };

	assert_int_equal(procfs_fs_table_parse(mountinfo_text, strlen(mountinfo_text), &t), 0);
	assert_int_equal(procfs_maps_parse(text, strlen(text), &t, &m), 0);
	assert_int_equal(m.n, 5);
	assert_int_equal(m.vmas[0].kind, MM_OBJ_SHMEM);
	assert_int_equal(m.vmas[1].kind, MM_OBJ_HUGETLB);
	assert_int_equal(m.vmas[1].huge_shift, 21);
	assert_string_equal(m.vmas[1].path, "/mnt/huge pages/f");
	assert_int_equal(m.vmas[2].kind, MM_OBJ_SYSV); /* SHM_HUGETLB segment */
	assert_int_equal(m.vmas[2].huge_shift, 21);
	assert_int_equal(m.vmas[3].kind, MM_OBJ_HUGETLB); /* MFD_HUGETLB */
	assert_int_equal(m.vmas[3].huge_shift, 30);
	assert_int_equal(m.vmas[4].kind, MM_OBJ_FILE);
	assert_int_equal(m.vmas[4].huge_shift, 0);

	/* Without the table only names speak: the memfd reads as shmem. */
	assert_int_equal(procfs_maps_parse(text, strlen(text), NULL, &m), 0);
	assert_int_equal(m.vmas[0].kind, MM_OBJ_FILE);
	assert_int_equal(m.vmas[1].kind, MM_OBJ_FILE);
	assert_int_equal(m.vmas[2].kind, MM_OBJ_SYSV);
	assert_int_equal(m.vmas[2].huge_shift, 0);
	assert_int_equal(m.vmas[3].kind, MM_OBJ_SHMEM);
	procfs_maps_free(&m);
	procfs_fs_table_free(&t);
}

static const char smaps_text[] =
	"300000c00000-300000e00000 rw-s 00000000 00:11 9445                       /memfd:hugefd (deleted)\n"
	"Size:               2048 kB\n"
	"KernelPageSize:     2048 kB\n"
	"MMUPageSize:        2048 kB\n"
	"Rss:                   0 kB\n"
	"Anonymous:             0 kB\n"
	"AnonHugePages:         0 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"THPeligible:           0\n"
	"VmFlags: rd wr sh mr mw me ms de nr ht \n"
	"7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n"
	"Size:               4096 kB\n"
	"KernelPageSize:        4 kB\n"
	"Rss:                2060 kB\n"
	"Anonymous:          2060 kB\n"
	"AnonHugePages:      2048 kB\n"
	"FilePmdMapped:         0 kB\n"
	"Swap:                 12 kB\n"
	"ProtectionKey:         0\n"
	"VmFlags: rd wr mr mw me lo dc wf ac hg nh uw \n"
	"7f0000400000-7f0000600000 r--p 00000000 fe:00 12 /usr/lib/big.so\n"
	"KernelPageSize:        4 kB\n"
	"FilePmdMapped:      2048 kB\n"
	"VmFlags: rd mr mw me\n"
	"7ffd00100000-7ffd00104000 r--p 00000000 00:00 0                          [vvar]\n"
	"KernelPageSize:        4 kB\n"
	"VmFlags: rd mr pf io de dd \n"
	"7ffd00106000-7ffd00108000 r--p 00000000 fe:00 13                         /dev/dri/card0\n"
	"VmFlags: rd mr mm \n";

static void test_smaps(void **state)
{
	struct procfs_maps m = { 0 };
	struct mm_mapping mm;

	assert_int_equal(procfs_maps_parse(smaps_text, strlen(smaps_text), NULL, &m), 0);
	assert_true(m.has_smaps);
	assert_int_equal(m.n, 5);

	/* A hugetlb memfd: smaps says so without a device table. */
	const struct procfs_vma *v = &m.vmas[0];
	assert_string_equal(v->path, "/memfd:hugefd");
	assert_int_equal(v->kind, MM_OBJ_HUGETLB);
	assert_int_equal(v->huge_shift, 21);
	assert_int_equal(v->smaps.kernel_page_size, 2 << 20);
	assert_int_equal(v->smaps.vmflags, PROCFS_VMF_SHARED | PROCFS_VMF_MAYSHARE |
			 PROCFS_VMF_MAYREAD | PROCFS_VMF_MAYWRITE | PROCFS_VMF_HUGETLB);

	v = &m.vmas[1];
	assert_int_equal(v->kind, MM_OBJ_ANON);
	assert_int_equal(v->smaps.rss, 2060 << 10);
	assert_int_equal(v->smaps.anonymous, 2060 << 10);
	assert_int_equal(v->smaps.anon_huge_pages, 2048 << 10);
	assert_int_equal(v->smaps.swap, 12 << 10);
	assert_int_equal(v->smaps.vmflags, PROCFS_VMF_MAYREAD | PROCFS_VMF_MAYWRITE |
			 PROCFS_VMF_LOCKED | PROCFS_VMF_DONTCOPY |
			 PROCFS_VMF_WIPEONFORK | PROCFS_VMF_HUGEPAGE |
			 PROCFS_VMF_NOHUGEPAGE | PROCFS_VMF_UFFD_WP);
	assert_int_equal(procfs_vma_mapping(v, &mm), 0);
	assert_int_equal(mm.flags, MM_VMA_LOCKED | MM_VMA_DONTFORK | MM_VMA_WIPEONFORK);

	assert_int_equal(m.vmas[2].smaps.file_pmd_mapped, 2048 << 10);
	assert_int_equal(m.vmas[2].kind, MM_OBJ_FILE);

	/* VM_PFNMAP and VM_MIXEDMAP are both copied at fork. */
	assert_int_equal(procfs_vma_mapping(&m.vmas[3], &mm), 0);
	assert_int_equal(mm.flags, MM_VMA_PFNMAP);
	assert_int_equal(procfs_vma_mapping(&m.vmas[4], &mm), 0);
	assert_int_equal(mm.flags, MM_VMA_PFNMAP);
	procfs_maps_free(&m);
}

static void test_vma_mapping(void **state)
{
	struct procfs_maps m = { 0 };
	struct mm_mapping mm;

	assert_int_equal(procfs_maps_parse(maps_text, strlen(maps_text), NULL, &m), 0);

	/* A private file mapping keeps its offset and identity. */
	assert_int_equal(procfs_vma_mapping(&m.vmas[2], &mm), 0);
	assert_int_equal(mm.addr, 0x7f0000100000);
	assert_int_equal(mm.len, 0x100000);
	assert_int_equal(mm.offset, 0x2000);
	assert_int_equal(mm.obj.kind, MM_OBJ_FILE);
	assert_int_equal(mm.obj.dev, 0xfe00);
	assert_int_equal(mm.obj.ino, 1234);
	assert_int_equal(mm.prot, RX);
	assert_int_equal(mm.flags, 0);
	assert_false(mm.fixed);

	/* SysV: shared, identified by the shmid. */
	assert_int_equal(procfs_vma_mapping(&m.vmas[5], &mm), 0);
	assert_int_equal(mm.obj.kind, MM_OBJ_SYSV);
	assert_int_equal(mm.obj.ino, 34);
	assert_int_equal(mm.flags, MM_VMA_SHARED);

	/* Private /dev/zero is anonymous memory: no object, no offset. */
	assert_int_equal(procfs_vma_mapping(&m.vmas[8], &mm), 0);
	assert_int_equal(mm.obj.kind, MM_OBJ_ANON);
	assert_int_equal(mm.obj.dev, 0);
	assert_int_equal(mm.obj.ino, 0);
	assert_int_equal(mm.offset, 0);

	/* [vvar] is PFN-mapped even when smaps was not read. */
	assert_int_equal(procfs_vma_mapping(&m.vmas[13], &mm), 0);
	assert_int_equal(mm.flags, MM_VMA_PFNMAP);
	assert_int_equal(procfs_vma_mapping(&m.vmas[15], &mm), 0);
	assert_int_equal(mm.flags, 0);

	/* [vsyscall] is no user mapping. */
	assert_int_equal(procfs_vma_mapping(&m.vmas[16], &mm), -EINVAL);
	procfs_maps_free(&m);
}

static const char status_text[] =
	"Name:\tpostgres: ckpt\n"
	"Umask:\t0077\n"
	"State:\tS (sleeping)\n"
	"Tgid:\t4242\n"
	"Ngid:\t0\n"
	"Pid:\t4243\n"
	"PPid:\t4000\n"
	"TracerPid:\t0\n"
	"Uid:\t106\t0\t0\t0\n"
	"Gid:\t112\t112\t112\t112\n"
	"VmPeak:\t 2260080 kB\n"
	"VmPTE:\t     1736 kB\n"
	"VmSwap:\t       0 kB\n"
	"Threads:\t1\n";

static void test_status(void **state)
{
	struct procfs_status st;

	assert_int_equal(procfs_status_parse(status_text, strlen(status_text), &st), 0);
	assert_string_equal(st.name, "postgres: ckpt");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.tgid, 4242);
	assert_int_equal(st.pid, 4243);
	assert_int_equal(st.ppid, 4000);
	assert_int_equal(st.uid, 106);
	assert_true(st.has_mm);
	assert_int_equal(st.vmpte_kb, 1736);
}

/* Kernel threads and zombies print no Vm* lines. */
static void test_status_no_mm(void **state)
{
	static const char zombie[] =
		"Name:\t  spaced\\nname\n"
		"State:\tZ (zombie)\n"
		"Tgid:\t77\nPid:\t77\nPPid:\t1\nUid:\t0\t0\t0\t0\n";
	struct procfs_status st;

	assert_int_equal(procfs_status_parse(zombie, strlen(zombie), &st), 0);
	assert_string_equal(st.name, "  spaced\\nname");
	assert_int_equal(st.state, 'Z');
	assert_false(st.has_mm);
	assert_int_equal(st.vmpte_kb, 0);
}

/* The mark at rest: a sleeping process with one thread has one, and it
 * follows its counters and sizes; a running one, or one with threads, has
 * none. */
static void test_status_rest(void **state)
{
	static const char *const head =
		"Name:\tsleeper\nState:\t%s\nTgid:\t9\nPid:\t9\nPPid:\t1\n"
		"Uid:\t0\t0\t0\t0\nVmSize:\t%s kB\nVmRSS:\t 100 kB\n"
		"VmPTE:\t 44 kB\nThreads:\t%s\nSigQ:\t%s/63\n"
		"voluntary_ctxt_switches:\t%s\nnonvoluntary_ctxt_switches:\t0\n";
	static const char *const cases[][5] = {
		/* state, VmSize, Threads, SigQ, voluntary switches */
		{ "S (sleeping)", "3060", "1", "0", "7" },
		{ "S (sleeping)", "3060", "1", "1", "7" }, /* SigQ: not in it */
		{ "S (sleeping)", "3060", "1", "0", "8" },
		{ "S (sleeping)", "3064", "1", "0", "7" },
		{ "R (running)", "3060", "1", "0", "7" },
		{ "D (disk sleep)", "3060", "1", "0", "7" },
		{ "S (sleeping)", "3060", "2", "0", "7" },
	};
	uint64_t mark[7];
	for (size_t i = 0; i < 7; i++) {
		char text[512];
		struct procfs_status st;
		snprintf(text, sizeof(text), head, cases[i][0], cases[i][1],
			 cases[i][2], cases[i][3], cases[i][4]);
		assert_int_equal(procfs_status_parse(text, strlen(text), &st), 0);
		mark[i] = st.rest;
	}
	assert_true(mark[0] != 0);
	assert_true(mark[1] == mark[0]);
	assert_true(mark[2] != 0 && mark[2] != mark[0]);
	assert_true(mark[3] != 0 && mark[3] != mark[0] && mark[3] != mark[2]);
	for (size_t i = 4; i < 7; i++)
		assert_true(mark[i] == 0);
}

/* stat's starttime, the 22nd field, counted from the last ')' of the
 * command, which may hold blanks and parentheses. */
static void test_start_time(void **state)
{
	static const char line[] =
		"42 (we ird) (x) S 1 42 42 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 "
		"1 0 987654 1234 56\n";
	uint64_t t = 0;
	assert_int_equal(procfs_start_parse(line, strlen(line), &t), 0);
	assert_int_equal(t, 987654);
	assert_int_equal(procfs_start_parse(line, 40, &t), -EPROTO);
	assert_int_equal(procfs_start_parse("42 no parenthesis", 17, &t), -EPROTO);
	assert_int_equal(procfs_start_time(getpid(), &t), 0);
	assert_true(t > 0);
}

static void test_status_long_name(void **state)
{
	char text[512];
	struct procfs_status st;
	char name[200];

	memset(name, 'k', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "Name:\t%s\nState:\tI (idle)\nTgid:\t9\nPid:\t9\nPPid:\t2\nUid:\t0\t0\t0\t0\n",
		 name);
	assert_int_equal(procfs_status_parse(text, strlen(text), &st), 0);
	assert_int_equal(strlen(st.name), PROCFS_NAME_MAX - 1);
	assert_int_equal(st.state, 'I');
}

static void test_status_malformed(void **state)
{
	static const char *const bad[] = {
		"Name:\tx\nState:\tR\nTgid:\t1\nPid:\t1\nUid:\t0\n",            /* PPid */
		"Name:\tx\nState:\tR\nTgid:\tx\nPid:\t1\nPPid:\t0\nUid:\t0\n",  /* Tgid */
		"Name:\tx\nState:\nTgid:\t1\nPid:\t1\nPPid:\t0\nUid:\t0\n",     /* State */
		"Name:\tx\nState:\tR\nTgid:\t1\nPid:\t1\nPPid:\t0\nUid:\t0\nVmPTE:\t kB\n",
		"",
	};
	struct procfs_status st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("%s\n", bad[i]);
		assert_int_equal(procfs_status_parse(bad[i], strlen(bad[i]), &st), -EPROTO);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_lines),
		cmocka_unit_test(test_maps_reuse),
		cmocka_unit_test(test_maps_long_line),
		cmocka_unit_test(test_maps_malformed),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_mountinfo_malformed),
		cmocka_unit_test(test_maps_with_fs_table),
		cmocka_unit_test(test_smaps),
		cmocka_unit_test(test_vma_mapping),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_status_rest),
		cmocka_unit_test(test_start_time),
		cmocka_unit_test(test_status_no_mm),
		cmocka_unit_test(test_status_long_name),
		cmocka_unit_test(test_status_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
