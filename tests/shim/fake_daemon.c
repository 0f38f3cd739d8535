/* SPDX-License-Identifier: MIT */
/* The shim tests' fake daemon (fake_daemon.h): a thread with a poll loop. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fake_daemon.h"
#include "ingest/rec_ring.h"
#include "lib/clock.h"

#define MAX_ERRORS 64
#define MAX_FDS_PASSED 4

struct fake_conn {
	int fd;              /* -1 once ended */
	uint32_t id;
	int32_t pid;
	uint32_t last_seq, acks;
	uint64_t last_ns;
	bool hello, exited;
	struct pts_ring *ring; /* the record ring its HELLO brought, or NULL */
	struct rec_ring_view view;
	uint64_t behind_until_ns; /* opts.behind_ms after its HELLO */
};

struct fake_daemon {
	struct fake_opts opts;
	char dir[64], path[80];
	int listener, wake[2];
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu */
	struct fake_conn *conns;
	size_t nconns, open;
	struct fake_rec *log;
	size_t nlog, caplog;
	char *errors[MAX_ERRORS];
	size_t nerrors;
	uint64_t gaps, lost;
	uint64_t idle_rounds; /* poll rounds with nothing pending nor open */
	uint64_t commands_done;
	bool paused, killed;
};

/* Under mu. */
static void fail(struct fake_daemon *d, const struct fake_conn *c,
		 const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int n = snprintf(msg, sizeof(msg), "conn %u pid %d: ", c->id, c->pid);

	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	if (d->nerrors < MAX_ERRORS)
		d->errors[d->nerrors] = strdup(msg);
	d->nerrors++;
}

static size_t body_size(uint16_t type)
{
	switch (type) {
	case PTS_HELLO:
		return sizeof(struct pts_hello);
	case PTS_MMAP:
		return sizeof(struct pts_mmap);
	case PTS_MUNMAP:
	case PTS_MPROTECT:
	case PTS_MADVISE:
	case PTS_SHMDT:
		return sizeof(struct pts_range);
	case PTS_MREMAP:
		return sizeof(struct pts_mremap);
	case PTS_SHMAT:
		return sizeof(struct pts_shmat);
	case PTS_FORK:
		return sizeof(struct pts_fork);
	case PTS_EXEC:
	case PTS_EXEC_FAILED:
		return sizeof(struct pts_exec);
	case PTS_EXIT:
		return sizeof(struct pts_exit);
	case PTS_LOST:
		return sizeof(struct pts_lost);
	default:
		return 0;
	}
}

const uint64_t *fake_frames(const struct fake_rec *r)
{
	return (const uint64_t *)(r->r.raw + body_size(r->r.h.type));
}

/* PTS_F_FAILED exactly when there is an errno. */
static const char *check_errno(bool failed, int32_t err)
{
	return failed == (err > 0) && err >= 0 ? NULL
		: "result_errno does not match PTS_F_FAILED";
}

/* The fds that came with a record: a userfaultfd, a record ring. */
struct passed {
	int n;
	bool uffd, ring;
};

static const char *check_body(const struct fake_rec *r,
			      const struct passed *fds)
{
	const struct pts_hdr *h = &r->r.h;
	bool failed = h->flags & PTS_F_FAILED;
	const uint32_t hello_flags = PTS_HELLO_FORKED | PTS_HELLO_EXECED |
				     PTS_HELLO_UFFD | PTS_HELLO_RING;

	if (h->flags & ~PTS_F_FAILED)
		return "unknown header flags";
	if (fds->n && h->type != PTS_HELLO)
		return "an fd came with a record other than HELLO";
	for (unsigned i = 0; i < h->nframes; i++)
		if (!fake_frames(r)[i])
			return "a null frame";
	switch (h->type) {
	case PTS_HELLO: {
		const struct pts_hello *m = &r->r.hello;
		if (m->version != PTS_WIRE_VERSION || failed)
			return "HELLO version or flags";
		if ((m->flags & PTS_HELLO_UFFD) && m->uffd_errno)
			return "HELLO with a userfaultfd and an errno for it";
		if ((m->flags & ~hello_flags) ||
		    !(m->flags & PTS_HELLO_FORKED) == !(m->flags & PTS_HELLO_EXECED))
			return "HELLO must be FORKED or EXECED";
		if (!(m->flags & PTS_HELLO_UFFD) != !fds->uffd ||
		    !(m->flags & PTS_HELLO_RING) != !fds->ring ||
		    fds->n != fds->uffd + fds->ring)
			return "HELLO's UFFD and RING flags and the fds passed disagree";
		return memchr(m->exe, 0, sizeof(m->exe)) ? NULL : "exe unterminated";
	}
	case PTS_MMAP:
		return check_errno(failed, r->r.mmap.result_errno);
	case PTS_MUNMAP:
	case PTS_SHMDT:
		if (r->r.range.arg)
			return "arg of munmap or shmdt";
		return check_errno(failed, r->r.range.result_errno);
	case PTS_MPROTECT:
	case PTS_MADVISE:
		return check_errno(failed, r->r.range.result_errno);
	case PTS_MREMAP:
		return check_errno(failed, r->r.mremap.result_errno);
	case PTS_SHMAT:
		if (r->r.shmat.reserved)
			return "SHMAT reserved";
		return check_errno(failed, r->r.shmat.result_errno);
	case PTS_FORK:
		return r->r.fork.child > 0 && !r->r.fork.reserved && !failed ? NULL
			: "FORK child, reserved or flags";
	case PTS_EXEC:
	case PTS_EXEC_FAILED:
		if (failed != (h->type == PTS_EXEC_FAILED) ||
		    (r->r.exec.flags & ~PTS_EXEC_NO_FD))
			return "EXEC flags";
		if (!memchr(r->r.exec.path, 0, sizeof(r->r.exec.path)))
			return "EXEC path unterminated";
		return check_errno(failed, r->r.exec.result_errno);
	case PTS_EXIT:
		return !failed && !r->r.exit.reserved ? NULL : "EXIT flags or reserved";
	case PTS_LOST:
		return !failed && r->r.lost.records ? NULL : "LOST of nothing";
	}
	return "unknown type";
}

/* Header and ordering; under mu. */
static void check_record(struct fake_daemon *d, struct fake_conn *c,
			 const struct fake_rec *r, size_t len,
			 const struct passed *fds)
{
	const struct pts_hdr *h = &r->r.h;
	size_t body = body_size(h->type);

	if (len < sizeof(*h) || len > PTS_REC_MAX || h->size != len) {
		fail(d, c, "packet of %zu bytes, header says %u", len,
		     len >= sizeof(*h) ? h->size : 0);
		return;
	}
	if (!body || h->nframes > PTS_MAX_FRAMES ||
	    len != body + 8u * h->nframes) {
		fail(d, c, "type %u: size %zu with %u frames", h->type, len,
		     h->nframes);
		return;
	}
	if (h->seq <= c->last_seq)
		fail(d, c, "seq %u after %u", h->seq, c->last_seq);
	else if (h->seq != c->last_seq + 1) {
		d->gaps += h->seq - c->last_seq - 1;
		if (!d->opts.allow_gaps)
			fail(d, c, "seq %u after %u", h->seq, c->last_seq);
	}
	if (!c->hello && (h->type != PTS_HELLO || h->seq != 1))
		fail(d, c, "first record: type %u seq %u", h->type, h->seq);
	if (c->hello && h->type == PTS_HELLO)
		fail(d, c, "a second HELLO");
	if (c->exited)
		fail(d, c, "type %u after EXIT", h->type);
	if (h->time_ns < c->last_ns || !h->tid)
		fail(d, c, "seq %u: time went back, or no tid", h->seq);
	const char *why = check_body(r, fds);
	if (why)
		fail(d, c, "seq %u type %u: %s", h->seq, h->type, why);
	c->last_seq = h->seq > c->last_seq ? h->seq : c->last_seq;
	c->last_ns = h->time_ns;
	c->hello |= h->type == PTS_HELLO;
	c->exited |= h->type == PTS_EXIT;
	if (h->type == PTS_LOST)
		d->lost += r->r.lost.records;
}

static bool is_userfaultfd(int fd)
{
	char link[64], target[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return !strcmp(target, "anon_inode:[userfaultfd]");
}

/* The third field of /proc/PID/stat. */
static char proc_state(int32_t pid)
{
	char path[64], buf[512];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')');
	return paren && paren[1] && paren[2] ? paren[2] : '?';
}

static void ack(struct fake_conn *c, struct fake_rec *r)
{
	struct pts_ack a = {
		.h = { .type = PTS_ACK, .size = sizeof(a), .seq = ++c->acks,
		       .time_ns = now_ns(), .tid = (uint32_t)gettid() },
		.acked_seq = r->r.h.seq,
	};

	r->ack_ns = a.h.time_ns;
	send(c->fd, &a, sizeof(a), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Under mu. */
static void end_conn(struct fake_daemon *d, struct fake_conn *c)
{
	close(c->fd);
	c->fd = -1;
	d->open--;
	if (c->ring)
		munmap(c->ring, PTS_RING_DATA + (size_t)c->view.size);
	c->ring = NULL;
}

/* A sealed memfd of a ring's size, with its magic: mapped, under mu. */
static bool ring_take(struct fake_conn *c, int fd)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	if (c->ring || fstat(fd, &st) || seals < 0 || !(seals & F_SEAL_SHRINK) ||
	    st.st_size <= PTS_RING_DATA)
		return false;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return false;
	c->ring = p;
	c->view = (struct rec_ring_view){
		(unsigned char *)p + PTS_RING_DATA,
		(uint32_t)(st.st_size - PTS_RING_DATA), 0 };
	return c->ring->magic == PTS_RING_MAGIC &&
	       c->ring->data_size == c->view.size;
}

/* The fds of m, in the order HELLO sends them (its userfaultfd, its
 * ring), checked and closed; under mu. */
static struct passed take_fds(struct fake_daemon *d, struct fake_conn *c,
			      struct msghdr *m)
{
	struct passed f = { 0 };
	bool bad = m->msg_flags & MSG_CTRUNC;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
		int *fds = (int *)CMSG_DATA(h);
		size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++, f.n++) {
			if (!f.n && is_userfaultfd(fds[i]))
				f.uffd = true;
			else if (!f.ring && ring_take(c, fds[i]))
				f.ring = true;
			else
				bad = true;
			close(fds[i]);
		}
	}
	if (bad)
		fail(d, c, "passed fds: not a userfaultfd then a record ring");
	return f;
}

/* One record, received (len: its real length), checked, acked if it is
 * waited for, and logged; under mu. */
static void take_record(struct fake_daemon *d, struct fake_conn *c,
			struct fake_rec *r, size_t len,
			const struct passed *fds)
{
	if (len > sizeof(r->r.raw) && len <= PTS_REC_MAX)
		fail(d, c, "a valid record cannot be %zu bytes", len);
	else
		check_record(d, c, r, len, fds);
	bool held = d->opts.hold_forked && r->r.h.type == PTS_HELLO &&
		    (r->r.hello.flags & PTS_HELLO_FORKED);
	/* Before the ACK: a HELLO that waits for it then sees it behind. */
	if (r->r.h.type == PTS_HELLO && c->ring && d->opts.behind_ms &&
	    !(r->r.hello.flags & PTS_HELLO_FORKED)) {
		__atomic_store_n(&c->ring->behind, 1, __ATOMIC_SEQ_CST);
		c->behind_until_ns = now_ns() + d->opts.behind_ms * 1000000ull;
	}
	if (r->r.h.type == PTS_HELLO && c->ring && d->opts.hold_calls &&
	    !(r->r.hello.flags & PTS_HELLO_FORKED))
		__atomic_store_n(&c->ring->hold, 1, __ATOMIC_SEQ_CST);
	if (r->r.h.type == PTS_HELLO || r->r.h.type == PTS_EXIT) {
		r->state = proc_state(c->pid);
		if (!d->opts.no_ack && !held)
			ack(c, r);
	}
	/* Its /proc "read", as ptshared says once it has: a fork waits
	 * for that (docs/wire-protocol.md, Readings between calls). */
	if (r->r.h.type == PTS_HELLO && c->ring && !d->opts.no_ack && !held) {
		__atomic_store_n(&c->ring->read, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &c->ring->read, FUTEX_WAKE, INT_MAX, NULL,
			NULL, 0);
	}
	if (d->nlog == d->caplog) {
		d->caplog = d->caplog ? 2 * d->caplog : 1024;
		d->log = realloc(d->log, d->caplog * sizeof(*d->log));
	}
	d->log[d->nlog++] = *r;
}

/* What c's ring holds, as ptshared takes it (then tail given back, and
 * the shim woken if it waits for room); under mu. */
static void drain_ring(struct fake_daemon *d, struct fake_conn *c)
{
	static const struct passed none;
	if (!c->ring)
		return;
	uint64_t head = __atomic_load_n(&c->ring->head, __ATOMIC_ACQUIRE);
	for (;;) {
		struct fake_rec r = { .pid = c->pid, .conn = c->id };
		size_t len;
		enum rec_ring_next n = rec_ring_next(&c->view, head, r.r.raw, &len);
		if (n == REC_RING_BAD)
			fail(d, c, "a ring past its rules at tail %llu, head %llu",
			     (unsigned long long)c->view.tail,
			     (unsigned long long)head);
		if (n != REC_RING_RECORD)
			break;
		take_record(d, c, &r, len, &none);
	}
	rec_ring_give_back(c->ring, c->view.tail);
}

/* Caught up with c once its time came, as ptshared with nothing left to
 * do; under mu. */
static void catch_up(struct fake_conn *c)
{
	if (!c->ring || !c->behind_until_ns || now_ns() < c->behind_until_ns)
		return;
	c->behind_until_ns = 0;
	if (__atomic_exchange_n(&c->ring->behind, 0, __ATOMIC_SEQ_CST) == 2)
		syscall(SYS_futex, &c->ring->behind, FUTEX_WAKE, INT_MAX, NULL,
			NULL, 0);
}

/* A kick: a header of its type alone. */
static bool is_kick(const struct fake_rec *r, ssize_t n)
{
	return n == sizeof(struct pts_hdr) && r->r.h.type == PTS_RING_KICK;
}

/* One packet; false when there was none (or the connection ended, after
 * what its ring held). */
static bool receive_one(struct fake_daemon *d, struct fake_conn *c)
{
	struct fake_rec r = { .pid = c->pid, .conn = c->id };
	char ctl[CMSG_SPACE(sizeof(int) * MAX_FDS_PASSED)];
	struct iovec iov = { r.r.raw, sizeof(r.r.raw) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);

	if (n < 0 && errno == EAGAIN)
		return false;
	pthread_mutex_lock(&d->mu);
	if (n <= 0 || is_kick(&r, n)) {
		if (n > 0 && !c->ring)
			fail(d, c, "a kick without a ring");
		drain_ring(d, c);
		if (n <= 0)
			end_conn(d, c);
		pthread_mutex_unlock(&d->mu);
		return n > 0;
	}
	struct passed fds = take_fds(d, c, &m);
	r.uffd = fds.uffd;
	take_record(d, c, &r, (size_t)n, &fds);
	pthread_mutex_unlock(&d->mu);
	return true;
}

static void accept_one(struct fake_daemon *d)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = accept4(d->listener, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	pthread_mutex_lock(&d->mu);
	d->conns = realloc(d->conns, (d->nconns + 1) * sizeof(*d->conns));
	struct fake_conn *c = &d->conns[d->nconns];
	*c = (struct fake_conn){ .fd = fd, .id = (uint32_t)++d->nconns };
	d->open++;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    cred.uid != getuid() || cred.pid <= 0)
		fail(d, c, "SO_PEERCRED: no credentials, or another user's");
	else
		c->pid = cred.pid;
	pthread_mutex_unlock(&d->mu);
}

/* Under mu. */
static void kill_all(struct fake_daemon *d)
{
	for (size_t i = 0; i < d->nconns; i++)
		if (d->conns[i].fd >= 0)
			end_conn(d, &d->conns[i]);
	close(d->listener);
	d->listener = -1;
	unlink(d->path);
	d->killed = true;
}

/* A command from the test: q(uit), k(ill), p(ause), r(esume). */
static bool command(struct fake_daemon *d)
{
	char cmd;

	if (read(d->wake[0], &cmd, 1) != 1)
		return true;
	pthread_mutex_lock(&d->mu);
	if (cmd == 'k')
		kill_all(d);
	d->paused = cmd == 'p' ? true : cmd == 'r' ? false : d->paused;
	d->commands_done++;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return cmd != 'q';
}

static void *serve(void *arg)
{
	struct fake_daemon *d = arg;

	for (;;) {
		pthread_mutex_lock(&d->mu);
		size_t n = 0, cap = 2 + d->nconns;
		struct pollfd *p = calloc(cap, sizeof(*p));
		struct fake_conn **who = calloc(cap, sizeof(*who));
		p[n++] = (struct pollfd){ .fd = d->wake[0], .events = POLLIN };
		if (d->listener >= 0)
			p[n++] = (struct pollfd){ .fd = d->listener, .events = POLLIN };
		for (size_t i = 0; i < d->nconns && !d->paused; i++)
			if (d->conns[i].fd >= 0) {
				who[n] = &d->conns[i];
				p[n++] = (struct pollfd){ .fd = d->conns[i].fd,
							  .events = POLLIN };
			}
		bool paused = d->paused;
		pthread_mutex_unlock(&d->mu);

		int r = poll(p, n, 10);
		bool go_on = true;
		if (r == 0) {
			pthread_mutex_lock(&d->mu);
			d->idle_rounds += !d->open && !paused;
			pthread_cond_broadcast(&d->cv);
			pthread_mutex_unlock(&d->mu);
		}
		/* Connections oldest first, each drained, then new ones, then
		 * commands: a pid's records come in the order it sent them
		 * even across connections (EXEC, then the new image's HELLO,
		 * which may be queued on a connection not yet accepted). */
		for (size_t i = 0; r > 0 && i < n; i++)
			if (who[i] && p[i].revents)
				while (receive_one(d, who[i]))
					;
		/* Every ring at every round, as ptshared at every turn. */
		pthread_mutex_lock(&d->mu);
		for (size_t i = 0; i < d->nconns && !d->paused; i++)
			if (d->conns[i].fd >= 0) {
				drain_ring(d, &d->conns[i]);
				catch_up(&d->conns[i]);
			}
		pthread_mutex_unlock(&d->mu);
		if (r > 0 && d->listener >= 0 && p[1].fd == d->listener &&
		    p[1].revents)
			accept_one(d);
		if (r > 0 && p[0].revents)
			go_on = command(d);
		free(p);
		free(who);
		if (!go_on)
			return NULL;
	}
}

static void send_command(struct fake_daemon *d, char cmd)
{
	pthread_mutex_lock(&d->mu);
	uint64_t want = d->commands_done + 1;
	if (write(d->wake[1], &cmd, 1) != 1)
		abort();
	while (d->commands_done < want)
		pthread_cond_wait(&d->cv, &d->mu);
	pthread_mutex_unlock(&d->mu);
}

struct fake_daemon *fake_start(const struct fake_opts *opts)
{
	struct fake_daemon *d = calloc(1, sizeof(*d));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (opts)
		d->opts = *opts;
	d->paused = d->opts.paused;
	snprintf(d->dir, sizeof(d->dir), "/tmp/ptshare-fake-XXXXXX");
	if (!mkdtemp(d->dir))
		abort();
	snprintf(d->path, sizeof(d->path), "%s/sock", d->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->path);
	d->listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (d->listener < 0 || bind(d->listener, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(d->listener, 64) || pipe2(d->wake, O_CLOEXEC))
		abort();
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	if (pthread_create(&d->thread, NULL, serve, d))
		abort();
	return d;
}

void fake_stop(struct fake_daemon *d)
{
	send_command(d, 'q');
	pthread_join(d->thread, NULL);
	for (size_t i = 0; i < d->nconns; i++)
		if (d->conns[i].fd >= 0)
			close(d->conns[i].fd);
	if (d->listener >= 0)
		close(d->listener);
	unlink(d->path);
	rmdir(d->dir);
	close(d->wake[0]);
	close(d->wake[1]);
	for (size_t i = 0; i < d->nerrors && i < MAX_ERRORS; i++)
		free(d->errors[i]);
	free(d->conns);
	free(d->log);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->cv);
	free(d);
}

const char *fake_socket(const struct fake_daemon *d)
{
	return d->path;
}

void fake_kill(struct fake_daemon *d)
{
	send_command(d, 'k');
}

void fake_pause(struct fake_daemon *d, bool paused)
{
	send_command(d, paused ? 'p' : 'r');
}

bool fake_settle(struct fake_daemon *d, int timeout_ms)
{
	struct timespec until;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&d->mu);
	/* Two whole idle rounds after this call: all that was pending is in. */
	uint64_t want = d->idle_rounds + 2;
	while (ok && d->idle_rounds < want)
		ok = pthread_cond_timedwait(&d->cv, &d->mu, &until) == 0;
	pthread_mutex_unlock(&d->mu);
	return ok;
}

size_t fake_count(struct fake_daemon *d)
{
	pthread_mutex_lock(&d->mu);
	size_t n = d->nlog;
	pthread_mutex_unlock(&d->mu);
	return n;
}

const struct fake_rec *fake_rec(struct fake_daemon *d, size_t i)
{
	pthread_mutex_lock(&d->mu);
	const struct fake_rec *r = i < d->nlog ? &d->log[i] : NULL;
	pthread_mutex_unlock(&d->mu);
	return r;
}

size_t fake_errors(struct fake_daemon *d)
{
	pthread_mutex_lock(&d->mu);
	size_t n = d->nerrors;
	pthread_mutex_unlock(&d->mu);
	return n;
}

const char *fake_error(struct fake_daemon *d, size_t i)
{
	pthread_mutex_lock(&d->mu);
	const char *e = i < d->nerrors && i < MAX_ERRORS ? d->errors[i] : "";
	pthread_mutex_unlock(&d->mu);
	return e;
}

uint64_t fake_gaps(struct fake_daemon *d)
{
	pthread_mutex_lock(&d->mu);
	uint64_t n = d->gaps;
	pthread_mutex_unlock(&d->mu);
	return n;
}

uint64_t fake_lost(struct fake_daemon *d)
{
	pthread_mutex_lock(&d->mu);
	uint64_t n = d->lost;
	pthread_mutex_unlock(&d->mu);
	return n;
}
