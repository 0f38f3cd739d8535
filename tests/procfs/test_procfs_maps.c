/* SPDX-License-Identifier: MIT */
/*
 * maps and smaps of a live child: every kind of backing object, classified
 * and identified as the kernel shows it, and a process with tens of
 * thousands of mappings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "procfs/image.h"
#include "ptshare/procfs.h"
#include "skip.h"
#include "subject.h"

#define BASE 0x300000000000UL
#define SLOT (4UL << 20) /* one mapping per slot, 2 MiB aligned */
#define LEN (2UL << 20)

enum backing {
	B_ANON,
	B_SHARED_ANON,
	B_MEMFD,
	B_MEMFD_HUGE,
	B_SYSV,
	B_SYSV_HUGE,
	B_FILE_SHARED,
	B_FILE_PRIVATE,
	B_FILE_DELETED,
	B_DEVSHM,
	B_DEVZERO_PRIVATE,
	B_NR
};

/* What the test made, and what maps must say about it. */
struct object {
	int fd;          /* -1: none */
	int shmid;       /* -1: not SysV */
	bool shared;
	bool absent;     /* this kernel cannot make it (no hugetlb) */
	enum mm_obj_kind kind;
	uint32_t huge_shift;
	bool check_dev, check_ino; /* dev, ino are known beforehand */
	uint64_t dev, ino;
	char path[256];  /* as maps shows it, without " (deleted)" */
	bool deleted;
};

struct fixture {
	char dir[64];
	struct object obj[B_NR];
};

static uint64_t slot_addr(enum backing b)
{
	return BASE + (uint64_t)b * SLOT;
}

static void set_identity(struct object *o, enum mm_obj_kind kind)
{
	struct stat st;

	o->kind = kind;
	assert_int_equal(fstat(o->fd, &st), 0);
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->check_dev = o->check_ino = true;
}

static int file_with_data(const char *path, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	char buf[4096];

	assert_true(fd >= 0);
	memset(buf, 'd', sizeof(buf));
	for (size_t done = 0; done < len; done += sizeof(buf))
		assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	return fd;
}

static void make_memfds(struct fixture *f)
{
	struct object *o = &f->obj[B_MEMFD];

	o->fd = memfd_create("pool of 2", MFD_CLOEXEC);
	assert_true(o->fd >= 0);
	assert_int_equal(ftruncate(o->fd, LEN), 0);
	set_identity(o, MM_OBJ_SHMEM);
	strcpy(o->path, "/memfd:pool of 2");
	o->deleted = true;

	o = &f->obj[B_MEMFD_HUGE];
	o->fd = memfd_create("huge", MFD_CLOEXEC | MFD_HUGETLB);
	if (o->fd < 0 || ftruncate(o->fd, LEN)) {
		o->absent = true;
		return;
	}
	set_identity(o, MM_OBJ_HUGETLB);
	o->huge_shift = 21;
	strcpy(o->path, "/memfd:huge");
	o->deleted = true;
}

static void make_sysv(struct object *o, int flags, uint32_t huge_shift)
{
	o->shmid = shmget(IPC_PRIVATE, LEN, IPC_CREAT | 0600 | flags);
	if (o->shmid < 0) {
		o->absent = true;
		return;
	}
	/* The inode maps shows is the shmid (ipc/shm.c newseg). */
	o->kind = MM_OBJ_SYSV;
	o->ino = (uint64_t)o->shmid;
	o->check_ino = true;
	o->huge_shift = huge_shift;
	strcpy(o->path, "/SYSV00000000");
	o->deleted = true;
}

static void make_files(struct fixture *f)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/data file", f->dir);
	struct object *o = &f->obj[B_FILE_SHARED];
	o->fd = file_with_data(path, LEN);
	set_identity(o, MM_OBJ_FILE);
	strcpy(o->path, path);

	o = &f->obj[B_FILE_PRIVATE];
	o->fd = f->obj[B_FILE_SHARED].fd;
	set_identity(o, MM_OBJ_FILE);
	strcpy(o->path, path);

	snprintf(path, sizeof(path), "%s/gone", f->dir);
	o = &f->obj[B_FILE_DELETED];
	o->fd = file_with_data(path, LEN);
	set_identity(o, MM_OBJ_FILE);
	strcpy(o->path, path);
	o->deleted = true;

	snprintf(path, sizeof(path), "/dev/shm/ptshare-test-%d", getpid());
	o = &f->obj[B_DEVSHM];
	o->fd = file_with_data(path, LEN);
	assert_int_equal(unlink(path), 0);
	set_identity(o, MM_OBJ_SHMEM);
	strcpy(o->path, path);
	o->deleted = true;
}

static int fixture_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	for (int b = 0; b < B_NR; b++)
		f->obj[b] = (struct object){ .fd = -1, .shmid = -1 };
	strcpy(f->dir, "/tmp/ptshare-procfs-XXXXXX");
	assert_non_null(mkdtemp(f->dir));

	f->obj[B_ANON].kind = MM_OBJ_ANON;
	f->obj[B_ANON].check_dev = f->obj[B_ANON].check_ino = true;
	f->obj[B_SHARED_ANON].kind = MM_OBJ_SHMEM; /* identity checked below */
	strcpy(f->obj[B_SHARED_ANON].path, "/dev/zero");
	f->obj[B_SHARED_ANON].deleted = true;
	make_memfds(f);
	make_sysv(&f->obj[B_SYSV], 0, 0);
	assert_false(f->obj[B_SYSV].absent);
	make_sysv(&f->obj[B_SYSV_HUGE], SHM_HUGETLB | SHM_NORESERVE, 21);
	make_files(f);
	/* maps shows the device node, though the memory is anonymous. */
	struct object *zero = &f->obj[B_DEVZERO_PRIVATE];
	zero->fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	assert_true(zero->fd >= 0);
	set_identity(zero, MM_OBJ_ANON);
	strcpy(zero->path, "/dev/zero");

	for (int b = 0; b < B_NR; b++)
		f->obj[b].shared = b != B_ANON && b != B_FILE_PRIVATE &&
				   b != B_DEVZERO_PRIVATE;
	*state = f;
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *f = *state;
	char path[128];

	for (int b = 0; b < B_NR; b++) {
		if (f->obj[b].fd >= 0 && b != B_FILE_PRIVATE)
			close(f->obj[b].fd);
		if (f->obj[b].shmid >= 0)
			shmctl(f->obj[b].shmid, IPC_RMID, NULL);
	}
	snprintf(path, sizeof(path), "%s/data file", f->dir);
	unlink(path);
	rmdir(f->dir);
	free(f);
	return 0;
}

/*
 * In the subject: every object at its slot, then the deleted file unlinked.
 * arg holds a pointer to the fixture, which was made before the fork.
 */
static int map_all(void *arg)
{
	const struct fixture *f = *(struct fixture **)arg;

	for (int b = 0; b < B_NR; b++) {
		const struct object *o = &f->obj[b];
		void *want = (void *)slot_addr(b), *p;
		if (o->absent)
			continue;
		if (o->shmid >= 0) {
			p = shmat(o->shmid, want, 0);
		} else {
			int flags = (o->shared ? MAP_SHARED : MAP_PRIVATE) |
				    MAP_FIXED_NOREPLACE | MAP_NORESERVE |
				    (o->fd < 0 ? MAP_ANONYMOUS : 0);
			p = mmap(want, LEN, PROT_READ | PROT_WRITE, flags, o->fd, 0);
		}
		if (p != want)
			return p == (void *)-1 ? -errno : -EEXIST;
	}
	char path[128];
	snprintf(path, sizeof(path), "%s/gone", f->dir);
	return unlink(path) ? -errno : 0;
}

static const struct procfs_vma *find_vma(const struct procfs_maps *m,
					 uint64_t start)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->vmas[i].start == start)
			return &m->vmas[i];
	return NULL;
}

static void assert_objects(const struct fixture *f, const struct procfs_maps *m,
			   bool smaps)
{
	for (int b = 0; b < B_NR; b++) {
		const struct object *o = &f->obj[b];
		if (o->absent)
			continue;
		print_message("object %d\n", b);
		const struct procfs_vma *v = find_vma(m, slot_addr(b));
		assert_non_null(v);
		assert_int_equal(v->end, slot_addr(b) + LEN);
		assert_int_equal(v->prot, MM_PROT_READ | MM_PROT_WRITE);
		assert_int_equal(v->shared, o->shared);
		assert_int_equal(v->kind, o->kind);
		assert_int_equal(v->huge_shift, o->huge_shift);
		assert_string_equal(v->path, o->path);
		assert_int_equal(v->deleted, o->deleted);
		assert_int_equal(v->offset, 0);
		assert_int_equal(v->special, PROCFS_SPECIAL_NONE);
		if (o->check_dev)
			assert_int_equal(v->dev, o->dev);
		if (o->check_ino)
			assert_int_equal(v->ino, o->ino);
		if (smaps) {
			uint32_t vmf = v->smaps.vmflags;
			assert_int_equal(!!(vmf & PROCFS_VMF_MAYSHARE), o->shared);
			assert_int_equal(!!(vmf & PROCFS_VMF_HUGETLB), o->huge_shift != 0);
			assert_int_equal(v->smaps.kernel_page_size,
					 o->huge_shift ? 1UL << o->huge_shift : 4096);
		}
	}
	/* Shared anonymous memory is shmem on the memfds' internal mount. */
	const struct procfs_vma *anon = find_vma(m, slot_addr(B_SHARED_ANON));
	const struct procfs_vma *memfd = find_vma(m, slot_addr(B_MEMFD));
	const struct procfs_vma *sysv = find_vma(m, slot_addr(B_SYSV));
	assert_int_equal(anon->dev, memfd->dev);
	assert_int_equal(sysv->dev, memfd->dev);
	assert_int_not_equal(anon->ino, memfd->ino);
}

/*
 * maps of pid through PROCMAP_QUERY, twice (the second time every file's
 * path known), each the same as text, field by field, but [vsyscall],
 * which is no VMA of the process.  False before Linux 6.11.
 */
static bool query_same_as_text(int pid, const struct procfs_fs_table *fs,
			       const struct procfs_maps *text)
{
	struct procfs_names *names = procfs_names_new();
	struct procfs_maps q = { 0 };
	assert_non_null(names);
	for (int round = 0; round < 2; round++) {
		int err = procfs_maps_query(pid, fs, names, &q);
		if (err == -ENOTTY) {
			procfs_names_free(names);
			return false;
		}
		assert_int_equal(err, 0);
		size_t n = text->n;
		if (n && text->vmas[n - 1].special == PROCFS_SPECIAL_VSYSCALL)
			n--;
		assert_int_equal(q.n, n);
		for (size_t i = 0; i < n; i++) {
			const struct procfs_vma *a = &text->vmas[i], *b = &q.vmas[i];
			print_message("round %d, mapping %zu: %s\n", round, i, a->path);
			assert_int_equal(a->start, b->start);
			assert_int_equal(a->end, b->end);
			assert_int_equal(a->offset, b->offset);
			assert_int_equal(a->dev, b->dev);
			assert_int_equal(a->ino, b->ino);
			assert_int_equal(a->prot, b->prot);
			assert_int_equal(a->shared, b->shared);
			assert_int_equal(a->deleted, b->deleted);
			assert_int_equal(a->kind, b->kind);
			assert_int_equal(a->huge_shift, b->huge_shift);
			assert_int_equal(a->special, b->special);
			assert_string_equal(a->path, b->path);
		}
	}
	procfs_maps_free(&q);
	procfs_names_free(names);
	return true;
}

static void test_classify_child(void **state)
{
	struct fixture *f = *state;
	struct procfs_fs_table fs = { 0 };
	struct procfs_maps m = { 0 };
	struct subject s;

	assert_int_equal(subject_start(&s), 0);
	assert_int_equal(subject_run(&s, map_all, &f, sizeof(f)), 0);
	/* The segments live on while attached; their name keeps the key. */
	for (int b = 0; b < B_NR; b++)
		if (f->obj[b].shmid >= 0)
			assert_int_equal(shmctl(f->obj[b].shmid, IPC_RMID, NULL), 0);

	assert_int_equal(procfs_fs_table_read(s.pid, &fs), 0);
	assert_int_equal(procfs_maps_read(s.pid, &fs, 0, &m), 0);
	assert_false(m.has_smaps);
	assert_objects(f, &m, false);
	if (!query_same_as_text(s.pid, &fs, &m))
		print_message("no PROCMAP_QUERY (before Linux 6.11)\n");
	assert_int_equal(procfs_maps_read(s.pid, &fs, PROCFS_MAPS_SMAPS, &m), 0);
	assert_true(m.has_smaps);
	assert_objects(f, &m, true);

	/* smaps alone finds hugetlb; tmpfs files need the table. */
	assert_int_equal(procfs_maps_read(s.pid, NULL, PROCFS_MAPS_SMAPS, &m), 0);
	if (!f->obj[B_MEMFD_HUGE].absent)
		assert_int_equal(find_vma(&m, slot_addr(B_MEMFD_HUGE))->kind, MM_OBJ_HUGETLB);
	assert_int_equal(find_vma(&m, slot_addr(B_DEVSHM))->kind, MM_OBJ_FILE);
	procfs_maps_free(&m);
	procfs_fs_table_free(&fs);
	subject_stop(&s);
}

/* This process's own maps: the specials, and the test binary as a file. */
static void test_classify_self(void **state)
{
	struct procfs_maps m = { 0 };
	struct stat exe;
	bool vdso = false, stack = false, self_file = false;

	assert_int_equal(stat("/proc/self/exe", &exe), 0);
	assert_int_equal(procfs_maps_read(getpid(), NULL, 0, &m), 0);
	for (size_t i = 0; i < m.n; i++) {
		const struct procfs_vma *v = &m.vmas[i];
		struct mm_mapping mm;
		if (i)
			assert_true(m.vmas[i - 1].end <= v->start);
		int err = procfs_vma_mapping(v, &mm);
		if (v->special == PROCFS_SPECIAL_VSYSCALL) {
			assert_int_equal(err, -EINVAL);
			continue;
		}
		assert_int_equal(err, 0);
		vdso |= v->special == PROCFS_SPECIAL_VDSO;
		uint64_t frame = (uint64_t)__builtin_frame_address(0);
		stack |= v->special == PROCFS_SPECIAL_STACK &&
			 v->start <= frame && frame < v->end;
		if (v->ino == exe.st_ino && v->dev == exe.st_dev) {
			assert_int_equal(v->kind, MM_OBJ_FILE);
			self_file = true;
		}
	}
	assert_true(vdso);
	assert_true(stack);
	assert_true(self_file);
	procfs_maps_free(&m);
}

/*
 * A hugetlbfs mount the test process cannot see: only the child's own
 * mountinfo makes its file hugetlb.
 */
static int map_on_private_hugetlbfs(void *arg)
{
	const char *dir = arg;
	char path[128];

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("none", dir, "hugetlbfs", 0, "pagesize=2M"))
		return -errno;
	snprintf(path, sizeof(path), "%s/f", dir);
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, LEN))
		return -errno;
	void *p = mmap((void *)BASE, LEN, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_NORESERVE | MAP_FIXED_NOREPLACE, fd, 0);
	return p == (void *)BASE ? 0 : -errno;
}

static void test_hugetlbfs_in_child_namespace(void **state)
{
	char dir[] = "/tmp/ptshare-procfs-XXXXXX";
	struct procfs_fs_table fs = { 0 };
	struct procfs_maps m = { 0 };
	struct subject s;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(subject_start(&s), 0);
	int err = subject_run(&s, map_on_private_hugetlbfs, dir, sizeof(dir));
	if (err) {
		subject_stop(&s);
		rmdir(dir);
		test_skip("no hugetlbfs mount here: %s", strerror(-err));
	}
	assert_int_equal(procfs_fs_table_read(s.pid, &fs), 0);
	assert_int_equal(procfs_maps_read(s.pid, &fs, 0, &m), 0);
	const struct procfs_vma *v = find_vma(&m, BASE);
	assert_non_null(v);
	assert_int_equal(v->kind, MM_OBJ_HUGETLB);
	assert_int_equal(v->huge_shift, 21);

	assert_int_equal(procfs_fs_table_read(getpid(), &fs), 0);
	assert_int_equal(procfs_maps_read(s.pid, &fs, 0, &m), 0);
	assert_int_equal(find_vma(&m, BASE)->kind, MM_OBJ_FILE);
	procfs_maps_free(&m);
	procfs_fs_table_free(&fs);
	subject_stop(&s);
	/* The mount and its file went with the child's namespace. */
	assert_int_equal(rmdir(dir), 0);
}

/* As many mappings as vm.max_map_count leaves room for, one per page. */
struct many {
	unsigned long pages;
};

static int map_many(void *arg)
{
	const struct many *mn = arg;
	char *p = mmap((void *)BASE, mn->pages * 4096, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			       MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	for (unsigned long i = 1; i < mn->pages; i += 2)
		if (mprotect(p + i * 4096, 4096, PROT_NONE))
			return -errno;
	return 0;
}

static unsigned long max_map_count(void)
{
	unsigned long n = 0;
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu", &n), 1);
	fclose(f);
	return n;
}

static void test_many_mappings(void **state)
{
	struct procfs_maps m = { 0 };
	struct subject s;

	assert_int_equal(subject_start(&s), 0);
	assert_int_equal(procfs_maps_read(s.pid, NULL, 0, &m), 0);
	size_t before = m.n;
	struct many mn = { max_map_count() - before - 64 };
	if (mn.pages > 100000)
		mn.pages = 100000;
	assert_int_equal(subject_run(&s, map_many, &mn, sizeof(mn)), 0);

	assert_int_equal(procfs_maps_read(s.pid, NULL, 0, &m), 0);
	print_message("%zu mappings, %zu bytes of maps\n", m.n, m.text.len);
	assert_int_equal(m.n, before + mn.pages);
	const struct procfs_vma *v = find_vma(&m, BASE);
	assert_non_null(v);
	for (unsigned long i = 0; i < mn.pages; i++, v++) {
		assert_int_equal(v->start, BASE + i * 4096);
		assert_int_equal(v->end, BASE + (i + 1) * 4096);
		assert_int_equal(v->prot, i % 2 ? 0 : MM_PROT_READ);
		assert_int_equal(v->kind, MM_OBJ_ANON);
	}
	procfs_maps_free(&m);
	subject_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_classify_child, fixture_setup,
						fixture_teardown),
		cmocka_unit_test(test_classify_self),
		cmocka_unit_test(test_hugetlbfs_in_child_namespace),
		cmocka_unit_test(test_many_mappings),
	};

	return test_group_status(cmocka_run_group_tests(tests, NULL, NULL));
}
