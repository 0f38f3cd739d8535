/* SPDX-License-Identifier: MIT */
/*
 * ioctl: of its requests, only UFFDIO_REGISTER and UFFDIO_UNREGISTER are
 * traced, the program's own userfaultfd taking or giving up a range
 * (docs/faults.md, The program's own userfaultfd); any other goes straight
 * to the real call, for the cost of a comparison.  The kernel gives a VMA
 * to one userfaultfd at a time: a range the daemon's holds is refused
 * (EBUSY; EINVAL to UFFDIO_UNREGISTER).  Then the failed call is sent, the
 * daemon releases its own there and acks, and the call is made once more,
 * so that the program gets what it would have without us.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/userfaultfd.h>
#include <stdarg.h>
#include <sys/ioctl.h>

#include "shim.h"

/* The real call and its record; *again: it met the daemon's registrations,
 * which are released now, and is to be made once more.  arg is read only
 * once the kernel has (not after EFAULT: the record names no range then). */
static int range_call(struct shim_call *c, int fd, unsigned long request,
		      void *arg, bool *again)
{
	bool reg = (unsigned int)request == UFFDIO_REGISTER;
	ring_call_begin(); /* again, for a second try */
	int r = shim_real.ioctl(fd, request, arg);
	shim_returned(c, r != 0);
	struct pts_own_uffd m = {
		.request = reg ? PTS_OWN_UFFD_REGISTER
			       : PTS_OWN_UFFD_UNREGISTER,
		.result_errno = shim_errno(c),
	};
	if (!c->failed || c->err != EFAULT) {
		const struct uffdio_range *range =
			reg ? &((struct uffdio_register *)arg)->range : arg;
		m.start = range->start;
		m.len = range->len;
		m.mode = reg ? ((struct uffdio_register *)arg)->mode : 0;
	}
	rec_send(c, PTS_OWN_UFFD, &m.h, sizeof(m), NULL);
	if (again)
		*again = c->failed && c->err == (reg ? EBUSY : EINVAL) &&
			 shim_cfg.uffd && atomic_load(&shim_proc.active) &&
			 /* a vfork child's wait would take its parent's ACK */
			 shim_is_state_process() && conn_wait_ack(m.h.seq);
	return r;
}

SHIM_EXPORT int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	struct shim_call c;
	bool again;

	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	/* The kernel takes the request as an unsigned int: so do we. */
	if (((unsigned int)request != UFFDIO_REGISTER &&
	     (unsigned int)request != UFFDIO_UNREGISTER) || !shim_enter(&c))
		return shim_real.ioctl(fd, request, arg);
	int r = range_call(&c, fd, request, arg, &again);
	if (again)
		r = range_call(&c, fd, request, arg, NULL);
	shim_leave(&c);
	return r;
}
