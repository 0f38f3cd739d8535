/* SPDX-License-Identifier: MIT */
/*
 * The userfaultfd of one traced process (docs/faults.md, Who holds it).
 * The shim sends it with PTS_HELLO and closes its own copy, so the daemon
 * holds the only reference: if the daemon dies, the kernel drops the
 * registrations and the program's faults proceed as without us.
 *
 * The daemon registers the process's shared memory that the kernel lets it
 * (shmem, memfd and shared anonymous memory: MISSING and MINOR; hugetlb:
 * MISSING only, since MINOR would switch the kernel's own PMD sharing off),
 * as the model sees it, and hands every fault to the model before it lets
 * the process go on.  A fault is always let go: resolved (then, in table
 * mode, its span unregistered), its span unregistered when resolving
 * failed (the kernel then serves it as without us), or at worst woken.
 */
#ifndef PTSHARED_UFFD_H
#define PTSHARED_UFFD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ingest/ingest.h"
#include "uffd_ranges.h"

struct uffd {
	int fd;              /* -1: none */
	uint32_t mode;       /* enum pts_faults, once started */
	bool started;        /* UFFDIO_API done: faults can come */
	bool due;            /* its poll fired: read at the end of the batch */
	/* The ranges registered, or tried: dealt with, never asked again (in
	 * table mode, spans released after their first fault stay in). */
	struct uffd_ranges done;
	size_t nr_whole;     /* done.nr after the last whole rebuild */
	/* The process's record ring (a memfd: device, inode), never
	 * registered: the shim writes it holding its lock, and a fault
	 * there would be ptshare's own, counted as the program's. */
	uint64_t ring_dev, ring_ino;
};

/* A process's fault as the model takes it (PTS_FAULT_* flags). */
typedef void uffd_seen_fn(void *arg, uint64_t addr, uint32_t flags);

void uffd_init(struct uffd *u);
/* Keeps (a copy of) the userfaultfd a packet brought, when the ingest
 * said it brings one (take_uffd: a PTS_HELLO with PTS_HELLO_UFFD) and fd
 * is a userfaultfd; the caller still closes the fds of the packet.
 * Whether one is kept now. */
bool uffd_take(struct uffd *u, int fd);
/* UFFDIO_API with the features mode needs (a PTS_FAULTS_* other than
 * off).  0, or -errno (then the fd is closed: the process runs on
 * without it). */
int uffd_start(struct uffd *u, uint32_t mode);
/* Registers the shared memory of pid that meets [start, end) and is not
 * dealt with yet, as the ingest's model of today's kernel maps it
 * (ingest_ranges_of), and forgets what the model no longer maps there.
 * After start and checkpoints, everything (0, UINT64_MAX); after a
 * record, what it mapped. */
void uffd_sync(struct uffd *u, const struct ingest *g, int32_t pid,
	       uint64_t start, uint64_t end);
/*
 * What the ingest said a record of pid asks (struct ingest_uffd_op): the
 * ranges an mmap, munmap or mremap took from the kernel's registrations
 * forgotten, to be registered again if they are still mapped (a shared
 * mmap, an mremap of a registered range); what is ours released where a
 * failed mremap met a VMA our registrations split (the pieces), or where
 * the program's own userfaultfd failed on ours (whole).
 */
void uffd_act(struct uffd *u, const struct ingest *g, int32_t pid,
	      const struct ingest_uffd_op *op);
/* Before the faults of one read are handed on: false when the process is
 * gone meanwhile, and its struct uffd with it. */
typedef bool uffd_ready_fn(void *arg);

enum uffd_served {
	UFFD_SERVED_ALL,  /* none left */
	UFFD_SERVED_MORE, /* stopped at the bound: call again before waiting
			   * (the poll may not fire again for those queued) */
	UFFD_SERVED_GONE, /* ready() said the process is gone */
};
/* Reads the faults queued; for each read, calls ready, then hands each
 * fault to seen and lets it go. */
enum uffd_served uffd_serve(struct uffd *u, uffd_ready_fn *ready,
			    uffd_seen_fn *seen, void *arg);
/* Says on stderr that processes of uid have no userfaultfd, and the fix. */
void uffd_say_unavailable(int err, uint32_t uid);
/* Closes the fd (every ring request on it must be over): the kernel drops
 * the registrations and wakes what waits. */
void uffd_close(struct uffd *u);

#endif
