/* SPDX-License-Identifier: MIT */
/*
 * A process's connection from HELLO to EXIT.  The constructor of every new
 * image and the child of every traced fork connect and say HELLO (waiting
 * for its ACK only as hello() says); EXIT waits (bounded) for its ACK, so
 * that the final checkpoint sees the process still alive.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

struct shim_proc shim_proc = { .fd = -1 };

bool proc_tracing_wanted(void)
{
	return shim_cfg.configured && !shim_proc.daemon_gone;
}

/*
 * The userfaultfd the daemon may register this process's shareable ranges
 * with (docs/faults.md), or -1.  Never UFFD_USER_MODE_ONLY: kernel
 * accesses to registered pages would then fail (docs/kernel-facts.md).
 */
static int uffd_make(int32_t *err)
{
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 && errno == EPERM) {
		/* vm.unprivileged_userfaultfd=0: the device may still be ours. */
		long dev = syscall(SYS_openat, AT_FDCWD, "/dev/userfaultfd",
				   O_RDWR | O_CLOEXEC);
		if (dev >= 0) {
			fd = syscall(SYS_ioctl, dev, USERFAULTFD_IOC_NEW,
				     O_CLOEXEC | O_NONBLOCK);
			syscall(SYS_close, dev);
		}
	}
	*err = fd < 0 ? errno : 0; /* the daemon reports why faults are unseen */
	return (int)fd;
}

static void exe_name(char *exe, size_t cap)
{
	if (shim_cfg.argv0) {
		str_copy(exe, cap, shim_cfg.argv0); /* as renamed since, if it was */
		return;
	}
	long n = syscall(SYS_readlink, "/proc/self/exe", exe, cap - 1);
	exe[n > 0 ? n : 0] = '\0';
}

/* The daemon holds the only reference to the userfaultfd once it is sent:
 * if it dies, the kernel drops the registrations.  The ring goes with it
 * too, and every record after HELLO into the ring; without the daemon's
 * connection it is of no use, and unmapped.
 *
 * With a ring, a new image and a forked child run on at once: the daemon
 * reads /proc between our calls (the ring's hold), a forked child's model
 * being its parent's copy until then.  It waits for the ACK when the
 * daemon must register its userfaultfd before it touches shared memory,
 * and when records go by the socket (then the reading needs it at rest).
 * A forked child that waited for its model's copy cost each PostgreSQL
 * connection (pgbench -C) a round trip behind the daemon's readings of
 * the backends before it: 3.4 ms a connection instead of 2.9 (plain:
 * 2.3; docs/performance.md). */
static void hello(uint32_t flags, uint32_t parent_seq)
{
	struct pts_hello m = {
		.version = PTS_WIRE_VERSION,
		.flags = flags,
		.ppid = (int32_t)syscall(SYS_getppid),
		.parent_seq = parent_seq,
	};
	struct fd_pass pass = { .n = 0 };
	int uffd = shim_cfg.uffd ? uffd_make(&m.uffd_errno) : -1;
	int ring = ring_make();

	exe_name(m.exe, sizeof(m.exe));
	if (uffd >= 0) {
		m.flags |= PTS_HELLO_UFFD;
		pass.fd[pass.n++] = uffd;
	}
	/* A forked child's model is a copy of its parent's, whole already:
	 * its own forks need not wait for a reading (its exec does). */
	shim_proc.model_copied = (flags & PTS_HELLO_FORKED) != 0;
	if (ring >= 0) {
		m.flags |= PTS_HELLO_RING;
		pass.fd[pass.n++] = ring;
		shim_proc.ring->read = 0; /* the daemon's first reading sets it */
	}
	bool sent = rec_send(NULL, PTS_HELLO, &m.h, sizeof(m), &pass);
	for (int i = 0; i < pass.n; i++)
		syscall(SYS_close, pass.fd[i]);
	shim_proc.uffd_sent = sent && uffd >= 0;
	if (!sent)
		ring_drop();
	bool waits = shim_proc.uffd_sent || !shim_proc.ring;
	if (sent && waits && !conn_wait_ack(m.h.seq))
		shim_say("no ACK of HELLO within wait_ms", NULL, shim_cfg.wait_ms);
}

void proc_start(uint32_t hello_flags, uint32_t parent_seq)
{
	struct shim_call c;
	struct stat st;
	int err = errno;

	section_begin(&c);
	shim_proc.pid = shim_getpid();
	shim_proc.seq = 0;
	shim_proc.lost = 0;
	shim_proc.fd = conn_open();
	if (shim_proc.fd < 0) {
		int why = -shim_proc.fd;
		shim_proc.daemon_gone = why == ECONNREFUSED || why == ENOENT;
		shim_proc.fd = -1;
		shim_say("no daemon at", shim_cfg.socket_path, why);
	} else {
		fstat(shim_proc.fd, &st); /* a socket just made: cannot fail */
		shim_proc.fd_dev = st.st_dev;
		shim_proc.fd_ino = st.st_ino;
		owner_mark(); /* before a thread's call may find it active */
		atomic_store(&shim_proc.active, true);
		shim_say("connected on fd", NULL, shim_proc.fd);
		hello(hello_flags, parent_seq);
	}
	section_end(&c);
	errno = err;
}

/*
 * The daemon forks the child's model from its parent's once it has
 * applied the parent's records up to the fork (the number we copied), or
 * at the parent's PTS_FORK, and acks the FORKED HELLO then.  A parent
 * that has gone quiet (the program took its fd, say) sends none:
 * its child says a plain HELLO, is read from /proc as it is, and does not
 * wait out wait_ms for an ACK that would come only with a later checkpoint.
 */
void proc_forked(void)
{
	bool parent_traced = atomic_load(&shim_proc.active) && conn_is_ours();
	uint32_t parent_seq = shim_proc.seq;

	section_reset_in_child();
	atomic_store(&shim_proc.active, false);
	/* The parent's ring is not mapped here (MADV_DONTFORK). */
	shim_proc.ring = NULL;
	/* The inherited connection is the parent's: the daemon must not see
	 * the child on it.  This copy is closed only if it is still ours. */
	if (conn_is_ours())
		syscall(SYS_close, shim_proc.fd);
	shim_proc.fd = -1;
	proc_start(parent_traced ? PTS_HELLO_FORKED : 0, parent_seq);
}

void proc_exit(int status)
{
	struct shim_call c;

	if (!shim_enter_exit(&c))
		return;
	struct pts_exit m = { .status = status };
	if (rec_send(&c, PTS_EXIT, &m.h, sizeof(m), NULL) && !conn_wait_ack(m.h.seq))
		shim_say("no ACK of EXIT within wait_ms", NULL, shim_cfg.wait_ms);
	/* EXIT is the connection's last record. */
	atomic_store(&shim_proc.active, false);
	shim_leave(&c);
}
