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

#include "ptshare/procfs.h"
#include "ptshare/wire.h"
#include "uffd.h"
#include "log.h"

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

/* Any fd may come from a client; only a userfaultfd gets its ioctls. */
static bool is_userfaultfd(int fd)
{
	static const char want[] = "anon_inode:[userfaultfd]";
	char path[64], target[sizeof(want)];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, target, sizeof(target));
	return n == (ssize_t)sizeof(want) - 1 && !memcmp(target, want, (size_t)n);
}

bool uffd_take(struct uffd *u, int fd)
{
	if (u->fd >= 0)
		return false;
	if (fd < 0 || !is_userfaultfd(fd))
		return false;
	u->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return u->fd >= 0;
}

/* Non-blocking, as the ring's multishot poll needs (docs/kernel-facts.md),
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

/* MISSING, and MINOR where it leaves the kernel's own sharing alone.  A
 * range the kernel refuses (a shared mapping of a file opened read-only,
 * a range the program's own userfaultfd holds: EBUSY) is seen through
 * pagemap only.  Whether it is registered. */
static bool do_register(struct uffd *u, uint64_t start, uint64_t end,
			uint32_t huge_shift)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_REGISTER_MODE_MISSING |
			(huge_shift ? 0 : UFFDIO_REGISTER_MODE_MINOR),
	};
	return !ioctl(u->fd, UFFDIO_REGISTER, &reg);
}

/* The ranges of a window, rebuilt from the model and the old ones there. */
struct rebuild {
	struct uffd *u;                /* whose fd registers */
	const struct uffd_range *old;  /* the old ones in the window, sorted */
	size_t nold, next;             /* the first old one not behind us */
	struct uffd_ranges fresh;      /* the new ones */
};

/* What was dealt with already in a mapping is kept (in table mode, the
 * spans released after their first fault); the rest is registered.  Only
 * what sharing is about and the kernel lets a userfaultfd see: shared
 * shmem and hugetlb (SysV segments and files: EINVAL: docs/kernel-facts.md,
 * What can be registered). */
static int sync_vma(const struct ingest_range *v, void *arg)
{
	struct rebuild *b = arg;
	if (!v->shared_memory ||
	    (v->ino && v->dev == b->u->ring_dev && v->ino == b->u->ring_ino))
		return 0;
	uint32_t shift = v->huge_shift;
	while (b->next < b->nold && b->old[b->next].end <= v->start)
		b->next++;
	uint64_t at = v->start;
	for (size_t k = b->next; at < v->end; k++) {
		const struct uffd_range *o = k < b->nold && b->old[k].start < v->end
					     ? &b->old[k] : NULL;
		uint64_t to = o && o->start > at ? o->start : o ? at : v->end;
		if (to > at) {
			if (ranges_append(&b->fresh, at, to, shift,
					  do_register(b->u, at, to, shift)))
				return -ENOMEM;
			at = to;
		}
		if (!o)
			break;
		to = o->end < v->end ? o->end : v->end;
		if (ranges_append(&b->fresh, at, to, o->huge_shift, o->live))
			return -ENOMEM;
		at = to;
	}
	return 0;
}

/* The window grown to the whole of the mappings it meets: a mapping is
 * registered whole (a hugetlb one cannot be cut between huge pages). */
static int hull_vma(const struct ingest_range *v, void *arg)
{
	struct uffd_range *w = arg;
	w->start = v->start < w->start ? v->start : w->start;
	w->end = v->end > w->end ? v->end : w->end;
	return 0;
}

/* The list in [start, end) is rebuilt from the model: what the model no
 * longer maps there (claimed by records, then corrected by a reading of
 * /proc) is dropped.  A rebuild of the whole list comes when the list has
 * grown past twice what it was at the last one (and at every checkpoint):
 * the list never holds much more than the model's shared mappings, and a
 * record costs only the mappings it meets. */
void uffd_sync(struct uffd *u, const struct ingest *g, int32_t pid,
	       uint64_t start, uint64_t end)
{
	if (!u->started)
		return;
	struct uffd_range hull = { start, end, 0, false };
	ingest_ranges_of(g, pid, start, end, hull_vma, &hull);
	struct uffd_ranges *l = &u->done;
	size_t i = ranges_first_after(l, hull.start), j;
	for (j = i; j < l->nr && l->r[j].start < hull.end; j++)
		;
	struct rebuild b = { .u = u, .old = l->r + i, .nold = j - i };
	if (i < j && l->r[i].start < hull.start)
		ranges_append(&b.fresh, l->r[i].start, hull.start,
			      l->r[i].huge_shift, l->r[i].live);
	ingest_ranges_of(g, pid, hull.start, hull.end, sync_vma, &b);
	if (i < j && l->r[j - 1].end > hull.end)
		ranges_append(&b.fresh, hull.end, l->r[j - 1].end,
			      l->r[j - 1].huge_shift, l->r[j - 1].live);
	ranges_splice(l, i, j, b.fresh.r, b.fresh.nr);
	ranges_free(&b.fresh);
	if (!start && end == UINT64_MAX)
		u->nr_whole = l->nr;
	else if (l->nr > 2 * u->nr_whole + SYNC_SLACK)
		uffd_sync(u, g, pid, 0, UINT64_MAX);
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

/* What is live of [start, end) unregistered (whole: the whole of each
 * live range it meets, so that no VMA of ours is split) and released: the
 * program's own registrations there, or the pieces of a mapping our
 * registrations split, are left alone.  Another userfaultfd's VMA in an
 * UFFDIO_UNREGISTER's range makes it fail whole (6.18), or loses its
 * registration (earlier kernels): docs/faults.md, Kernel facts. */
static void release_live(struct uffd *u, uint64_t start, uint64_t end,
			 bool whole)
{
	struct uffd_ranges *l = &u->done;
	for (uint64_t at = start; u->started && at < end;) {
		size_t i = ranges_first_after(l, at);
		while (i < l->nr && l->r[i].start < end && !l->r[i].live)
			i++;
		if (i == l->nr || l->r[i].start >= end)
			return;
		struct uffd_range r = l->r[i];
		if (!whole) {
			r.start = r.start > start ? r.start : start;
			r.end = r.end < end ? r.end : end;
		}
		if (!unregister(u, r.start, r.end))
			ranges_release(l, r.start, r.end);
		at = r.end;
	}
}

/* The program's own userfaultfd registers or unregisters [start, end): what
 * we hold in the kernel's VMAs it meets is released, whole, so that the
 * program's call succeeds, and splits them only as it would without us
 * (when the kernel cannot say where its VMAs are: our whole ranges that
 * meet it).  Another userfaultfd's VMA makes UFFDIO_REGISTER fail with
 * EBUSY and, on 6.18, UFFDIO_UNREGISTER with EINVAL. */
static void give_up(struct uffd *u, int32_t pid, uint64_t start, uint64_t end)
{
	uint64_t lo, hi;
	if (end <= start)
		return;
	if (procfs_vma_hull(pid, start, end, &lo, &hi))
		release_live(u, start, end, true);
	else
		release_live(u, lo, hi, false);
}

void uffd_act(struct uffd *u, const struct ingest *g, int32_t pid,
	      const struct ingest_uffd_op *op)
{
	struct uffd_ranges *l = &u->done;
	switch (op->kind) {
	case INGEST_UFFD_FORGET:
		ranges_forget(l, op->start, op->end);
		return;
	case INGEST_UFFD_SYNC:
		uffd_sync(u, g, pid, op->start, op->end);
		return;
	case INGEST_UFFD_MOVE: {
		bool moved = ranges_forget(l, op->start, op->end);
		ranges_forget(l, op->to, op->to_end);
		if (moved)
			uffd_sync(u, g, pid, op->to, op->to_end);
		return;
	}
	case INGEST_UFFD_RELEASE:
		/* The pieces merge again, and are registered anew from the
		 * model later. */
		release_live(u, op->start, op->end, false);
		ranges_forget(l, op->start, op->end);
		return;
	case INGEST_UFFD_GIVE_UP:
		give_up(u, pid, op->start, op->end);
		return;
	}
}

/* The range dealt with that holds addr; a page of its own (shmem) when
 * none does, so that the fault is still let go. */
static struct uffd_range range_of(const struct uffd *u, uint64_t addr)
{
	const struct uffd_ranges *l = &u->done;
	size_t i = ranges_first_after(l, addr);
	if (i < l->nr && l->r[i].start <= addr)
		return l->r[i];
	return (struct uffd_range){ addr, addr + MM_PAGE_SIZE, 0, true };
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
	int err = unregister(u, start, end);
	if (!err)
		ranges_release(&u->done, start, end);
	return err;
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

void uffd_say_unavailable(int err, uint32_t uid)
{
	char name[64];
	struct passwd *pw = getpwuid(uid);
	if (pw)
		snprintf(name, sizeof(name), "%s", pw->pw_name);
	else
		snprintf(name, sizeof(name), "%u", uid);
	char fix[192];
	if (err == EACCES)
		snprintf(fix, sizeof(fix), "to allow it: setfacl -m u:%s:rw "
			 "/dev/userfaultfd (docs/run.md: allowing a user "
			 "/dev/userfaultfd)", name);
	else
		snprintf(fix, sizeof(fix), "see docs/run.md: allowing a user "
			 "/dev/userfaultfd");
	/* Once, for whichever user first: a run has one or a few. */
	say_once("user %s cannot make a userfaultfd (%s): its page faults are "
		 "seen through pagemap only\n%s", name, strerror(err), fix);
}

void uffd_close(struct uffd *u)
{
	if (u->fd >= 0)
		close(u->fd);
	ranges_free(&u->done);
	uffd_init(u);
}
