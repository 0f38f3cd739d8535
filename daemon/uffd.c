/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptshare/grow.h"
#include "ptshare/wire.h"
#include "uffd.h"

#define TABLE_SPAN MM_SPAN(PT_PTE)  /* what one PTE table maps: 2 MiB */
#define READ_MAX 64                 /* messages per read */
/* Faults served at once: a process that faults without pause must not
 * hold the loop (the others' forks wait for their ACK). */
#define SERVE_MAX (4 * READ_MAX)
#define SYNC_SLACK 64 /* ranges beyond twice the last whole rebuild's */

void uffd_init(struct uffd *u)
{
	*u = (struct uffd){ .fd = -1 };
}

/* The one fd of a packet, or -1 when it brought none or several. */
static int only_fd(const struct msghdr *m)
{
	int fd = -1, n = 0;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h;
	     h = CMSG_NXTHDR((struct msghdr *)m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		n += (int)((h->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		memcpy(&fd, CMSG_DATA(h), sizeof(fd));
	}
	return n == 1 ? fd : -1;
}

/* Any fd may come from a client; only a userfaultfd gets its ioctls. */
static bool is_userfaultfd(int fd)
{
	static const char want[] = "anon_inode:[userfaultfd]";
	char path[64], target[sizeof(want)];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, target, sizeof(target));
	return n == (ssize_t)sizeof(want) - 1 && !memcmp(target, want, (size_t)n);
}

bool uffd_take(struct uffd *u, const void *pkt, size_t len,
	       const struct msghdr *m)
{
	struct pts_hello h;
	if (u->fd >= 0 || len < sizeof(h))
		return false;
	memcpy(&h, pkt, sizeof(h));
	if (h.h.type != PTS_HELLO || h.h.seq != 1 || !(h.flags & PTS_HELLO_UFFD))
		return false;
	int fd = only_fd(m);
	if (fd < 0 || !is_userfaultfd(fd))
		return false;
	u->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return u->fd >= 0;
}

/* Non-blocking, as the ring's multishot poll needs (DESIGN.md section 5),
 * and the features the registrations need; no non-cooperative events
 * (EVENT_FORK needs CAP_SYS_PTRACE, and would stall every fork on us). */
int uffd_start(struct uffd *u, uint32_t mode)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM |
			    UFFD_FEATURE_MISSING_HUGETLBFS,
	};
	int fl = fcntl(u->fd, F_GETFL);
	if (fl < 0 || fcntl(u->fd, F_SETFL, fl | O_NONBLOCK) ||
	    ioctl(u->fd, UFFDIO_API, &api)) {
		int err = -errno;
		uffd_close(u);
		return err;
	}
	u->mode = mode;
	u->started = true;
	return 0;
}

/* Room for one more range at index i. */
static int make_room(struct uffd *u, size_t i)
{
	if (grow_array((void **)&u->r, &u->cap, u->nr + 1, sizeof(*u->r)))
		return -ENOMEM;
	memmove(&u->r[i + 1], &u->r[i], (u->nr - i) * sizeof(*u->r));
	u->nr++;
	return 0;
}

/* MISSING, and MINOR where it leaves the kernel's own sharing alone.  A
 * range the kernel refuses (a shared mapping of a file opened read-only)
 * is seen through pagemap only. */
static void do_register(struct uffd *u, uint64_t start, uint64_t end,
			uint32_t huge_shift)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_REGISTER_MODE_MISSING |
			(huge_shift ? 0 : UFFDIO_REGISTER_MODE_MINOR),
	};
	ioctl(u->fd, UFFDIO_REGISTER, &reg);
}

/* Index of the first range ending above addr (nr if none). */
static size_t first_after(const struct uffd *u, uint64_t addr)
{
	size_t lo = 0, hi = u->nr;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (u->r[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int append(struct uffd *u, uint64_t start, uint64_t end,
		  uint32_t huge_shift)
{
	if (make_room(u, u->nr))
		return -ENOMEM;
	u->r[u->nr - 1] = (struct uffd_range){ start, end, huge_shift };
	return 0;
}

/* Whether a mapping is what sharing is about and the kernel lets a
 * userfaultfd see: shared shmem and hugetlb (SysV segments and files:
 * EINVAL, DESIGN.md section 5). */
static bool registrable(const struct mm_vma_info *v)
{
	return (v->flags & MM_VMA_SHARED) &&
	       (v->obj.kind == MM_OBJ_SHMEM || v->obj.kind == MM_OBJ_HUGETLB);
}

/* The ranges of a window, rebuilt from the model and the old ones there. */
struct rebuild {
	struct uffd *u;                /* whose fd registers */
	const struct uffd_range *old;  /* the old ones in the window, sorted */
	size_t nold, next;             /* the first old one not behind us */
	struct uffd fresh;             /* the new ones */
};

/* What was dealt with already in a mapping is kept (in table mode, the
 * spans released after their first fault); the rest is registered. */
static int sync_vma(const struct mm_vma_info *v, void *arg)
{
	struct rebuild *b = arg;
	if (!registrable(v))
		return 0;
	uint32_t shift = v->obj.kind == MM_OBJ_HUGETLB ? v->huge_shift : 0;
	while (b->next < b->nold && b->old[b->next].end <= v->start)
		b->next++;
	uint64_t at = v->start;
	for (size_t k = b->next; at < v->end; k++) {
		const struct uffd_range *o = k < b->nold && b->old[k].start < v->end
					     ? &b->old[k] : NULL;
		uint64_t to = o && o->start > at ? o->start : o ? at : v->end;
		if (to > at) {
			if (append(&b->fresh, at, to, shift))
				return -ENOMEM;
			do_register(b->u, at, to, shift);
			at = to;
		}
		if (!o)
			break;
		to = o->end < v->end ? o->end : v->end;
		if (append(&b->fresh, at, to, o->huge_shift))
			return -ENOMEM;
		at = to;
	}
	return 0;
}

/* The window grown to the whole of the mappings it meets: a mapping is
 * registered whole (a hugetlb one cannot be cut between huge pages). */
static int hull_vma(const struct mm_vma_info *v, void *arg)
{
	struct uffd_range *w = arg;
	w->start = v->start < w->start ? v->start : w->start;
	w->end = v->end > w->end ? v->end : w->end;
	return 0;
}

/* Ranges [i, j) of the list replaced by n others. */
static int splice_ranges(struct uffd *u, size_t i, size_t j,
		  const struct uffd_range *with, size_t n)
{
	size_t nr = u->nr - (j - i) + n;
	if (grow_array((void **)&u->r, &u->cap, nr, sizeof(*u->r)))
		return -ENOMEM;
	if (u->nr > j)
		memmove(&u->r[i + n], &u->r[j], (u->nr - j) * sizeof(*u->r));
	if (n)
		memcpy(&u->r[i], with, n * sizeof(*with));
	u->nr = nr;
	return 0;
}

/* The list in [start, end) is rebuilt from the model: what the model no
 * longer maps there (claimed by records, then corrected by a reading of
 * /proc) is dropped.  A rebuild of the whole list comes when the list has
 * grown past twice what it was at the last one (and at every checkpoint):
 * the list never holds much more than the model's shared mappings, and a
 * record costs only the mappings it meets. */
void uffd_sync(struct uffd *u, const struct mm_world *w, int32_t pid,
	       uint64_t start, uint64_t end)
{
	if (!u->started)
		return;
	struct uffd_range hull = { start, end, 0 };
	mm_proc_vmas_in(w, (uint32_t)pid, start, end, hull_vma, &hull);
	size_t i = first_after(u, hull.start), j;
	for (j = i; j < u->nr && u->r[j].start < hull.end; j++)
		;
	struct rebuild b = { .u = u, .old = u->r + i, .nold = j - i };
	uffd_init(&b.fresh);
	if (i < j && u->r[i].start < hull.start)
		append(&b.fresh, u->r[i].start, hull.start, u->r[i].huge_shift);
	mm_proc_vmas_in(w, (uint32_t)pid, hull.start, hull.end, sync_vma, &b);
	if (i < j && u->r[j - 1].end > hull.end)
		append(&b.fresh, hull.end, u->r[j - 1].end, u->r[j - 1].huge_shift);
	splice_ranges(u, i, j, b.fresh.r, b.fresh.nr);
	free(b.fresh.r);
	if (!start && end == UINT64_MAX)
		u->nr_whole = u->nr;
	else if (u->nr > 2 * u->nr_whole + SYNC_SLACK)
		uffd_sync(u, w, pid, 0, UINT64_MAX);
}

/*
 * UFFDIO_UNREGISTER, then a wake-up of the range.  The kernel wakes the
 * faults waiting there before it clears the VMA's flags; a fault taken
 * under the VMA's own lock meanwhile still sees it registered and waits,
 * and nothing would wake it (seen on 6.18: a worker waiting for ever).
 * Once UNREGISTER has returned, such a fault is queued, and no new one can
 * come.
 */
static int unregister(struct uffd *u, uint64_t start, uint64_t end)
{
	struct uffdio_range range = { .start = start, .len = end - start };
	if (ioctl(u->fd, UFFDIO_UNREGISTER, &range))
		return -errno;
	ioctl(u->fd, UFFDIO_WAKE, &range);
	return 0;
}

/* [start, end) left the kernel's registrations (unmapped, moved or mapped
 * over): forgotten, cutting the ranges it meets.  Whether it met any. */
static bool forget(struct uffd *u, uint64_t start, uint64_t end)
{
	bool met = false;
	for (size_t i = first_after(u, start); i < u->nr && u->r[i].start < end;) {
		struct uffd_range *r = &u->r[i];
		met = true;
		if (r->start < start && r->end > end) {
			if (make_room(u, i + 1))
				return met; /* the tail is dealt with again */
			u->r[i + 1] = u->r[i];
			u->r[i].end = start;
			u->r[i + 1].start = end;
			return met;
		} else if (r->start < start) {
			r->end = start;
			i++;
		} else if (r->end > end) {
			r->start = end;
			i++;
		} else {
			memmove(r, r + 1, (u->nr - i - 1) * sizeof(*r));
			u->nr--;
		}
	}
	return met;
}

/* A failed mremap (EFAULT) over ranges of ours: the kernel's VMAs there
 * may be split by our registrations, which mremap does not cross.  The
 * range is released (the pieces merge again) and registered anew from the
 * model later; a range that is not ours to release stays as it is. */
static void release_range(struct uffd *u, uint64_t start, uint64_t end)
{
	if (u->started && !unregister(u, start, end))
		forget(u, start, end);
}

unsigned uffd_record(struct uffd *u, const void *pkt, size_t len,
		     struct uffd_range *sync)
{
	struct pts_hdr h;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, pkt, sizeof(h));
	if (h.type == PTS_MREMAP && len >= sizeof(struct pts_mremap)) {
		struct pts_mremap m;
		memcpy(&m, pkt, sizeof(m));
		if (h.flags & PTS_F_FAILED) {
			if (m.result_errno != EFAULT)
				return 0;
			release_range(u, m.old_addr, m.old_addr + m.old_len);
			return UFFD_RECORD_ACK;
		}
		/* Without UFFD_FEATURE_EVENT_REMAP the kernel drops the
		 * registration of what moves: registered again, if it was. */
		bool moved = forget(u, m.old_addr, m.old_addr + m.old_len);
		forget(u, m.new_addr, m.new_addr + m.new_len);
		*sync = (struct uffd_range){ m.new_addr, m.new_addr + m.new_len, 0 };
		return moved ? UFFD_RECORD_SYNC : 0;
	}
	if (h.flags & PTS_F_FAILED)
		return 0;
	if (h.type == PTS_MMAP && len >= sizeof(struct pts_mmap)) {
		struct pts_mmap m;
		memcpy(&m, pkt, sizeof(m));
		forget(u, m.addr, m.addr + m.len); /* MAP_FIXED over a range */
		/* Only shared memory is registered: a private mapping (most
		 * of them: malloc's) costs no walk of the process's mappings. */
		*sync = (struct uffd_range){ m.addr, m.addr + m.len, 0 };
		return (m.flags & MAP_TYPE) != MAP_PRIVATE ? UFFD_RECORD_SYNC : 0;
	}
	if (h.type == PTS_MUNMAP && len >= sizeof(struct pts_range)) {
		struct pts_range m;
		memcpy(&m, pkt, sizeof(m));
		forget(u, m.addr, m.addr + m.len);
	}
	return 0;
}

/* The range dealt with that holds addr; a page of its own (shmem) when
 * none does, so that the fault is still let go. */
static struct uffd_range range_of(const struct uffd *u, uint64_t addr)
{
	size_t i = first_after(u, addr);
	if (i < u->nr && u->r[i].start <= addr)
		return u->r[i];
	return (struct uffd_range){ addr, addr + MM_PAGE_SIZE, 0 };
}

/* The span of one table (2 MiB, or the huge page when larger) around
 * addr, within r, unregistered: a fault waiting there completes as without
 * us, and so does every later one. */
static int release(struct uffd *u, const struct uffd_range *r, uint64_t addr)
{
	uint64_t size = TABLE_SPAN;
	if (r->huge_shift && (1ULL << r->huge_shift) > size)
		size = 1ULL << r->huge_shift;
	uint64_t start = addr & ~(size - 1), end = start + size;
	start = start > r->start ? start : r->start;
	end = end < r->end ? end : r->end;
	return unregister(u, start, end);
}

/* A huge page of zeros to copy from (read-only, never touched: the zero
 * page backs it), made once per size. */
static void *zeros(uint32_t shift)
{
	static void *made[64];
	if (!made[shift]) {
		void *p = mmap(NULL, 1ULL << shift, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		made[shift] = p == MAP_FAILED ? NULL : p;
	}
	return made[shift];
}

/* What the kernel would have given: the page cache's page (MINOR), a new
 * zeroed page (shmem: ZEROPAGE fills the cache), a zeroed huge page
 * (hugetlb takes only COPY). */
static int fill(struct uffd *u, const struct uffd_range *r, uint64_t addr,
		uint64_t flags)
{
	int err;
	if (flags & UFFD_PAGEFAULT_FLAG_MINOR) {
		struct uffdio_continue c = { .range = { addr, MM_PAGE_SIZE } };
		err = ioctl(u->fd, UFFDIO_CONTINUE, &c);
	} else if (!r->huge_shift) {
		struct uffdio_zeropage z = { .range = { addr, MM_PAGE_SIZE } };
		err = ioctl(u->fd, UFFDIO_ZEROPAGE, &z);
	} else {
		uint64_t size = 1ULL << r->huge_shift;
		void *src = r->huge_shift < 64 ? zeros(r->huge_shift) : NULL;
		if (!src)
			return -ENOMEM;
		struct uffdio_copy c = {
			.dst = addr & ~(size - 1), .src = (uint64_t)(uintptr_t)src,
			.len = size,
		};
		err = ioctl(u->fd, UFFDIO_COPY, &c);
	}
	return err ? -errno : 0;
}

/*
 * The page filled, as the kernel would have: the table and the entry exist
 * when the ioctl returns, so a reading of /proc after it agrees with the
 * model, which has the fault already (a fault left to the kernel completes
 * whenever its thread runs again).  table: then the span released.  When
 * filling fails because the page came meanwhile (EEXIST, another process
 * filled it), left (ENOENT: a hole punched) or the mm was busy (EAGAIN), a
 * wake-up has the fault tried again; any other failure releases the span,
 * so that the kernel serves the fault itself (a tmpfs out of space gives
 * the program its SIGBUS, not an endless retry); a wake-up is the last
 * resort.
 */
static void let_go(struct uffd *u, uint64_t addr, uint64_t flags)
{
	struct uffd_range r = range_of(u, addr);
	int err = fill(u, &r, addr, flags);
	if (u->mode == PTS_FAULTS_TABLE && !release(u, &r, addr))
		return;
	if (!err || err == -ESRCH) /* ESRCH: the process is gone */
		return;
	if (err != -EEXIST && err != -ENOENT && err != -EAGAIN &&
	    !release(u, &r, addr))
		return;
	struct uffdio_range page = { .start = addr, .len = MM_PAGE_SIZE };
	ioctl(u->fd, UFFDIO_WAKE, &page);
}

enum uffd_served uffd_serve(struct uffd *u, uffd_ready_fn *ready,
			    uffd_seen_fn *seen, void *arg)
{
	struct uffd_msg msg[READ_MAX];
	for (size_t served = 0; served < SERVE_MAX;) {
		ssize_t n = read(u->fd, msg, sizeof(msg));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) /* EAGAIN: every fault is read */
			return UFFD_SERVED_ALL;
		if (!ready(arg))
			return UFFD_SERVED_GONE;
		served += (size_t)n / sizeof(*msg);
		for (size_t i = 0; i < (size_t)n / sizeof(*msg); i++) {
			if (msg[i].event != UFFD_EVENT_PAGEFAULT)
				continue;
			uint64_t f = msg[i].arg.pagefault.flags;
			uint64_t addr = msg[i].arg.pagefault.address &
					~(MM_PAGE_SIZE - 1);
			seen(arg, addr,
			     (f & UFFD_PAGEFAULT_FLAG_WRITE ? PTS_FAULT_WRITE : 0) |
			     (f & UFFD_PAGEFAULT_FLAG_MINOR ? PTS_FAULT_MINOR : 0));
			let_go(u, addr, f);
		}
	}
	return UFFD_SERVED_MORE;
}

int uffd_hello_errno(const void *pkt, size_t len)
{
	struct pts_hello h;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, pkt, sizeof(h));
	return h.h.type == PTS_HELLO && !(h.flags & PTS_HELLO_UFFD) ? h.uffd_errno : 0;
}

void uffd_say_unavailable(int err, uint32_t uid)
{
	char name[64];
	struct passwd *pw = getpwuid(uid);
	if (pw)
		snprintf(name, sizeof(name), "%s", pw->pw_name);
	else
		snprintf(name, sizeof(name), "%u", uid);
	fprintf(stderr, "ptshared: user %s cannot make a userfaultfd (%s): its "
		"page faults are seen through pagemap only\n", name, strerror(err));
	if (err == EACCES)
		fprintf(stderr, "ptshared: to allow it: setfacl -m u:%s:rw "
			"/dev/userfaultfd (docs/run.md: allowing a user "
			"/dev/userfaultfd)\n", name);
	else
		fputs("ptshared: see docs/run.md: allowing a user "
		      "/dev/userfaultfd\n", stderr);
}

void uffd_close(struct uffd *u)
{
	if (u->fd >= 0)
		close(u->fd);
	free(u->r);
	uffd_init(u);
}
