/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "hello.h"
#include "loop.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "recv.h"
#include "requests.h"
#include "log.h"

#define SQ_ENTRIES 512
#define CQ_ENTRIES 4096
/* Completions taken from the ring at once. */
#define BATCH 128
/* Packets read from one connection at once: after a completion, and when
 * all are read (the timer's checkpoints, the end of the run). */
#define READ_ON_MAX 64
#define DRAIN_MAX 4096
/* A turn's share of the rings: passes of RING_CHUNK records a ring, for
 * about TURN_RINGS_NS (drain_rings). */
#define RING_CHUNK 256
#define TURN_RINGS_NS 1000000
#define ACCEPT_RETRY_NS 100000000 /* after an accept failed (EMFILE...) */
#define REPORT_WAIT_S 10 /* for a report client's request, once connected */

/* The connection is over: the ingest learns it, and the fd closes once the
 * ring holds no request on it (a pending request would keep the socket
 * alive, and write into a freed buffer when it completed). */
static void conn_end(struct loop *l, struct conn *c)
{
	ingest_disconnect(l->g, c->id);
	conns_forget(&l->conns, c);
	if (!c->inflight) {
		conn_free(c);
		return;
	}
	c->closing = true;
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_cancel_fd(s, c->fd, IORING_ASYNC_CANCEL_ALL);
	own(l, s, REQ_CANCEL, NULL);
	/* A poll armed keeps the userfaultfd open, and the process's faults
	 * waiting, past its close; and it never ends by itself when the
	 * process does (docs/kernel-facts.md, userfaultfd, io_uring). */
	if (c->uf.started) {
		s = sqe_get(l);
		io_uring_prep_cancel_fd(s, c->uf.fd, IORING_ASYNC_CANCEL_ALL);
		own(l, s, REQ_CANCEL, NULL);
	}
}

static bool drain_ring(struct loop *l, struct conn *c, unsigned max);

/* A kick: the process waits for us, or wants its ring read now. */
static bool is_kick(const struct conn *c, const unsigned char *data, size_t len)
{
	struct pts_hdr h;
	if (!c->rr.hdr || len != sizeof(h))
		return false;
	memcpy(&h, data, sizeof(h));
	return h.type == PTS_RING_KICK && h.size == sizeof(h);
}

/* The readings of /proc the records applied owe, then their acks: a
 * process waiting for an ack (its EXIT, a HELLO without a ring or with a
 * userfaultfd) is read before it runs on; the other HELLOs' acks go first
 * (acks_send_hellos). */
static void settle(struct loop *l, struct ingest_action *acks)
{
	struct ingest_action *outer = l->settling;
	acks_send_hellos(l, acks);
	l->settling = acks; /* each process's sent once it is read */
	readings_make(l->cfg.readings, l->g);
	l->settling = outer;
	acks_send(l, acks);
	acks_send_owed(l);
	acks->nack = 0;
}

/* A record from c of len bytes (its real length: the ingest reads no
 * more than a record from data), received with m (NULL: out of its ring),
 * applied: its fds kept, the registrations it changed brought up to date
 * (the model has it: what it mapped is registered now), its acks added
 * to acks (settled first when acks is full; NULL: owed, sent after the
 * readings being made).  Every fd a packet brings is closed.  False when
 * the connection is dropped. */
static bool record_in(struct loop *l, struct conn *c, const unsigned char *data,
		      size_t len, const struct msghdr *m,
		      struct ingest_action *acks)
{
	struct ingest_action act = { 0 };
	ingest_packet(l->g, c->id, data, len, &act);
	bool fds_kept = hello_fds_take(l, c, &act, m);
	if (m)
		recv_close_fds(m);
	hello_uffd_missing(l, c, act.hello_uffd_errno);
	for (unsigned i = 0; i < act.nuffd; i++)
		uffd_act(&c->uf, l->g, c->pid, &act.uffd[i]);
	if (!acks)
		ingest_owe_acks(l->g, &act);
	for (unsigned i = 0; acks && i < act.nack; i++) {
		if (acks->nack == INGEST_MAX_ACKS)
			settle(l, acks);
		acks->ack[acks->nack++] = act.ack[i];
	}
	if (act.drop || !fds_kept)
		ingest_drop(l->g, c->id, REPORT_DROP_MALFORMED);
	return !act.drop && fds_kept;
}

/* Up to max records of c's ring applied, their room given back. */
static bool ring_in(struct loop *l, struct conn *c, unsigned max,
		    struct ingest_action *acks)
{
	uint64_t head = rec_ring_head(&c->rr);
	bool open = true;
	for (unsigned done = 0; open && done < max; done++) {
		size_t len;
		enum rec_ring_next r = rec_ring_next(&c->rr.view, head, l->ring_rec,
						     &len);
		if (r == REC_RING_EMPTY)
			break;
		if (r == REC_RING_BAD) {
			ingest_drop(l->g, c->id, REPORT_DROP_MALFORMED);
			open = false;
			break;
		}
		open = record_in(l, c, l->ring_rec, len, NULL, acks);
	}
	rec_ring_release(&c->rr);
	return open;
}

/* A packet from c, received with m: applied, then the readings it owes
 * made and its acks sent.  A HELLO that brings a ring has what the ring
 * holds by now applied before its reading: a process that waits for its
 * ack no more (a late daemon's) may have written there, and its /proc
 * already shows what those records say.  A kick reads the ring.  False when the connection is over: its end (after
 * what its ring still holds), or dropped. */
static bool packet_in(struct loop *l, struct conn *c, const unsigned char *data,
		      size_t len, const struct msghdr *m)
{
	if ((!len && recv_peer_closed(c->fd)) || is_kick(c, data, len)) {
		recv_close_fds(m);
		if (len) /* a fork may wait for the image's first reading */
			ingest_reading_asked(l->g, c->pid);
		return drain_ring(l, c, len ? DRAIN_MAX : UINT_MAX) && len;
	}
	struct ingest_action acks = { 0 };
	bool had_ring = c->rr.hdr;
	bool open = record_in(l, c, data, len, m, &acks);
	if (open && !had_ring && c->rr.hdr)
		open = ring_in(l, c, DRAIN_MAX, &acks);
	settle(l, &acks);
	return open;
}

/* Up to max records of c's ring, applied, then their readings and acks.
 * False when the connection is over: dropped, or its ring broken (a head
 * or a size no shim writes). */
static bool drain_ring(struct loop *l, struct conn *c, unsigned max)
{
	if (!c->rr.hdr)
		return true;
	struct ingest_action acks = { 0 };
	bool open = ring_in(l, c, max, &acks);
	settle(l, &acks);
	return open;
}

/* Reads what c has sent so far, synchronously, a burst per system call, up
 * to max packets (a process that keeps sending cannot hold the loop).
 * False when the connection is over. */
static bool drain_conn(struct loop *l, struct conn *c, unsigned max)
{
	struct burst *b = l->burst;
	for (unsigned done = 0; done < max;) {
		unsigned want = max - done < RECV_BURST ? max - done : RECV_BURST;
		int n = recv_burst(b, c->fd, want);
		if (n == -EAGAIN)
			break; /* all read; the process lives on */
		/* The stream's end as a failed read (a reset): what its ring
		 * holds was written before it, and is read first. */
		if (n <= 0)
			drain_ring(l, c, UINT_MAX);
		bool open = n > 0;
		for (int i = 0; i < n; i++)
			if (open)
				open = packet_in(l, c, b->s[i].data, b->m[i].msg_len,
						 &b->m[i].msg_hdr);
			else /* after the end: only fds to close */
				recv_close_fds(&b->m[i].msg_hdr);
		if (!open) {
			conn_end(l, c);
			return false;
		}
		if ((unsigned)n < want)
			break; /* a short burst: the queue was empty */
		done += (unsigned)n;
	}
	/* What the socket said came before what the ring holds (HELLO). */
	if (!drain_ring(l, c, max)) {
		conn_end(l, c);
		return false;
	}
	return true;
}

/* A connection not served: closed at once (a shim sees the end of its
 * stream and runs on untraced), counted in the report, said once. */
static void refuse(struct loop *l, int fd, enum ingest_refusal why, uid_t uid)
{
	close(fd);
	ingest_refused(l->g, why);
	if (why == INGEST_REFUSED_USER)
		say_once("refused a process of uid %u: its user may not "
			 "connect (--allow-users; docs/daemon.md, Access)",
			 (unsigned)uid);
	else if (why == INGEST_REFUSED_FULL)
		say_once("--max-clients %zu connections open: new processes "
			 "are not traced", l->conns.nopen);
	else
		say_once("uid %u has --max-clients-per-user %zu connections "
			 "open: its new processes are not traced",
			 (unsigned)uid, l->cfg.max_per_user);
}

/*
 * Identity comes from the kernel (SO_PEERCRED), never from a record.  A new
 * image connects after its exec closed the old image's connection, whose
 * last records (PTS_EXEC among them) may not have been read yet: they are
 * read first, to the old connection's end (docs/shim.md).  Safe to do
 * synchronously where this is called: at the end of a batch, or with no
 * request in the ring.
 */
static void conn_open(struct loop *l, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid <= 0) {
		close(fd); /* a peer outside our pid namespace: no /proc to read */
		return;
	}
	if (!access_may_connect(cred.uid)) {
		refuse(l, fd, INGEST_REFUSED_USER, cred.uid);
		return;
	}
	struct conn *old = conns_of_pid(&l->conns, cred.pid);
	if (old)
		drain_conn(l, old, DRAIN_MAX);
	if (l->conns.nopen >= l->cfg.max_clients) {
		refuse(l, fd, INGEST_REFUSED_FULL, cred.uid);
		return;
	}
	if (conns_of_uid(&l->conns, cred.uid) >= l->cfg.max_per_user) {
		refuse(l, fd, INGEST_REFUSED_USER_FULL, cred.uid);
		return;
	}
	uint32_t id = ingest_connect(l->g, cred.pid, cred.uid);
	struct conn *c = id ? conns_add(&l->conns, fd, id, cred.pid, cred.uid)
			    : NULL;
	if (!c) {
		say("out of memory: process %d not traced", (int)cred.pid);
		if (id)
			ingest_disconnect(l->g, id);
		close(fd);
		return;
	}
	ingest_conn_own(l->g, id, c);
	if (!l->stopping)
		arm_readable(l, c);
}

static void readable(struct loop *l, struct conn *c, int res)
{
	if (c->closing) {
		if (!c->inflight)
			conn_free(c);
		return;
	}
	if (res == -ECANCELED) /* the end of the run: loop_drain reads on */
		return;
	if (res < 0 && res != -EINTR && res != -EAGAIN) {
		drain_ring(l, c, UINT_MAX); /* written before the failure */
		conn_end(l, c);
		return;
	}
	/* Read in bursts, up to READ_ON_MAX packets: a process that keeps
	 * sending cannot hold the loop, and what it left queued fires the
	 * next wait at once. */
	if (drain_conn(l, c, READ_ON_MAX) && !l->stopping)
		arm_readable(l, c);
}

/* Opened once the batch is done (see conn_open). */
static void queue_accepted(struct loop *l, int fd)
{
	if (grow_array((void **)&l->accepted, &l->cap_accepted, l->naccepted + 1,
		       sizeof(*l->accepted))) {
		say("out of memory: a process not traced");
		close(fd);
		return;
	}
	l->accepted[l->naccepted++] = fd;
}

/* Said once, until an accept succeeds again. */
#define ACCEPT_FAILING "accept: %s; retrying"

static void accepted(struct loop *l, int res, bool more)
{
	if (res >= 0) {
		say_again(ACCEPT_FAILING);
		queue_accepted(l, res);
	} else if (res != -ECANCELED) {
		say_once(ACCEPT_FAILING, strerror(-res));
	}
	if (more || l->stopping)
		return;
	/* A failure (EMFILE: the connection stays in the backlog) would come
	 * straight back: try again a little later. */
	if (res < 0) {
		l->accept_down = true;
		arm_accept_retry(l);
	} else {
		arm_accept(l);
	}
}

/* The accepts that ended on a failure, a little later. */
static void accept_again(struct loop *l)
{
	if (l->stopping)
		return;
	if (l->accept_down)
		arm_accept(l);
	if (l->report_accept_down)
		arm_report_accept(l);
	l->accept_down = l->report_accept_down = false;
}

/* A connection to the report socket (cl NULL, res its fd) or a client's
 * request.  Served after the batch, as the timer's checkpoints are (see
 * tick): a request that wants every process read first makes the tick due,
 * whose reading is the timer's own. */
static void report_completed(struct loop *l, struct control_client *cl,
			     int res, bool more)
{
	if (cl) {
		if (res < 0 || !control_request(cl, (size_t)res)) {
			control_free(cl); /* timed out, cancelled, refused */
		} else if (l->stopping) {
			control_refuse(cl, ESHUTDOWN);
			control_free(cl);
		} else {
			l->tick_due |= control_wants_read(cl);
			cl->next = l->reports;
			l->reports = cl;
		}
		return;
	}
	if (res >= 0 && (cl = control_accept(res))) {
		if (!l->stopping) {
			arm_report_recv(l, cl);
		} else {
			control_refuse(cl, ESHUTDOWN);
			control_free(cl);
		}
	}
	if (more || l->stopping)
		return;
	/* A failure (EMFILE) is retried in silence: the client waits in the
	 * backlog, and our stderr may be the program's. */
	if (res < 0) {
		l->report_accept_down = true;
		arm_accept_retry(l);
	} else {
		arm_report_accept(l);
	}
}

/* The userfaultfd's poll: faults are read at the end of the batch (see
 * serve_faults).  A failed poll gives the process up: the close wakes its
 * faults and the kernel serves them as without us. */
static void uffd_polled(struct loop *l, struct conn *c, int res, bool more)
{
	if (c->closing) {
		if (!c->inflight)
			conn_free(c);
		return;
	}
	if (res > 0)
		c->uf.due = true;
	if (more || res == -ECANCELED || l->stopping)
		return;
	if (res < 0)
		uffd_close(&c->uf);
	else
		arm_uffd(l, c); /* a multishot poll may end (CQ overflow) */
}

static void ticked(struct loop *l, int res)
{
	if (res == -ECANCELED || l->stopping)
		return;
	l->tick_due = true; /* once the batch is done: see turn() */
	arm_timer(l);
}

static void signalled(struct loop *l, int res)
{
	if (res == (int)sizeof(l->sig))
		l->stopping = true;
	else if (res != -ECANCELED && !l->stopping)
		arm_signal(l);
}

static void complete(struct loop *l, const struct io_uring_cqe *cqe)
{
	enum req kind = (enum req)(cqe->user_data & REQ_MASK);
	void *p = (void *)(uintptr_t)(cqe->user_data & ~(uint64_t)REQ_MASK);
	bool more = cqe->flags & IORING_CQE_F_MORE;
	if (kind == REQ_REPORT) {
		l->inflight -= !more;
		report_completed(l, p, cqe->res, more);
		return;
	}
	struct conn *c = p;
	if (!more) {
		l->inflight--;
		if (c)
			c->inflight--;
	}
	switch (kind) {
	case REQ_ACCEPT:
		accepted(l, cqe->res, more);
		break;
	case REQ_ACCEPT_RETRY:
		accept_again(l);
		break;
	case REQ_READABLE:
		readable(l, c, cqe->res);
		break;
	case REQ_TIMER:
		ticked(l, cqe->res);
		break;
	case REQ_SIGNAL:
		signalled(l, cqe->res);
		break;
	case REQ_UFFD:
		uffd_polled(l, c, cqe->res, more);
		break;
	case REQ_CANCEL:
	case REQ_REPORT:
		break;
	}
}

/* Every connection read up to now.  Backwards: when a connection ends,
 * the ones after it move down, and they were read already. */
static void drain_all(struct loop *l)
{
	for (size_t i = l->conns.nopen; i-- > 0;)
		drain_conn(l, l->conns.open[i], DRAIN_MAX);
}

/* Every connection read up to now, then every process's /proc: so the
 * reading is not ahead of records already sent, which the model would
 * then refuse (a mapping it has from /proc, told again).  Safe beside the
 * requests the ring holds: they wait for packets and never read one
 * (arm_readable); a poll that fired meanwhile finds what is left.  What /proc
 * showed that no record did (shared memory glibc mapped) is registered. */
static void tick(struct loop *l)
{
	l->tick_due = false;
	drain_all(l);
	ingest_checkpoint_all(l->g, PTS_CK_TIMER);
	readings_make(l->cfg.readings, l->g);
	acks_send_owed(l);
	for (size_t i = 0; i < l->conns.nopen; i++)
		uffd_sync(&l->conns.open[i]->uf, l->g, l->conns.open[i]->pid, 0,
			  UINT64_MAX);
}

struct fault_of {
	struct loop *l;
	struct conn *c;
};

/* The faults just read come after every record the process has sent so
 * far (a faulting thread sent its own before it faulted): those are read
 * first, so the model takes them in the process's order. */
static bool fault_ready(void *arg)
{
	const struct fault_of *f = arg;
	return drain_conn(f->l, f->c, DRAIN_MAX);
}

static void fault_seen(void *arg, uint64_t addr, uint32_t flags)
{
	const struct fault_of *f = arg;
	ingest_fault(f->l->g, f->c->pid, addr, flags);
}

/* The faults of every process whose userfaultfd's poll fired.  At the end
 * of a batch, for the reason tick() gives.  Backwards: when a connection
 * ends, the ones after it, already done, move down; its faults are let go
 * by the close of its userfaultfd. */
static void serve_faults(struct loop *l)
{
	l->faults_due = false;
	for (size_t i = l->conns.nopen; i-- > 0;) {
		struct conn *c = l->conns.open[i];
		if (!c->uf.due)
			continue;
		c->uf.due = false;
		struct fault_of f = { l, c };
		if (uffd_serve(&c->uf, fault_ready, fault_seen, &f) ==
		    UFFD_SERVED_MORE)
			l->faults_due = c->uf.due = true;
	}
}

/* What the rings hold: records come with no wake-up, and are taken at
 * every turn, which comes at least every PTS_HEARTBEAT_IDLE_MS while a
 * process is connected (wait_some).  In passes of RING_CHUNK records a
 * ring, for TURN_RINGS_NS and a pass at most: a HELLO, a fault and a
 * report wait for the turn to end, and eight busy rings drained whole
 * made it 60 ms and more.  Rings left with records make the next wait
 * return at once (rings_due).  Backwards, as drain_all. */
static void drain_rings(struct loop *l)
{
	uint64_t end = now_ns() + TURN_RINGS_NS;
	do {
		l->rings_due = false;
		for (size_t i = l->conns.nopen; i-- > 0;) {
			struct conn *c = l->conns.open[i];
			if (c->broken || (rec_ring_pending(&c->rr) &&
					  !drain_ring(l, c, RING_CHUNK)))
				conn_end(l, c);
			else if (rec_ring_pending(&c->rr))
				l->rings_due = true;
		}
	} while (l->rings_due && now_ns() < end);
}

/*
 * A reading of pid's /proc between its traced calls (readings.h): its
 * calls held, then what its ring holds applied (every call before the
 * reading has its record there by then), its acks owed until the readings
 * are made.  A process without a ring is read as it comes.
 */
static bool gate_hold(void *arg, int32_t pid, uint32_t *mark)
{
	struct loop *l = arg;
	struct conn *c = conns_of_pid(&l->conns, pid);
	if (!c || !c->rr.hdr || c->broken)
		return false;
	rec_ring_hold(&c->rr, mark);
	if (!ring_in(l, c, UINT_MAX, NULL))
		c->broken = true;
	return true;
}

/* A batch of readings keeps the loop from everything else (behind.h). */
static void gate_busy(void *arg)
{
	struct loop *l = arg;
	behind_check(&l->behind, &l->conns, false, now_ns());
}

static bool gate_let_go(void *arg, int32_t pid, uint32_t mark)
{
	struct loop *l = arg;
	struct conn *c = conns_of_pid(&l->conns, pid);
	if (!c || !c->rr.hdr)
		return true;
	bool still = rec_ring_let_go(&c->rr, mark);
	if (!ingest_reading_all(l->g))
		acks_send_read(l, c, l->settling);
	return still;
}

/* The connections whose EXIT is acked, ended: nothing follows an EXIT,
 * and the process's own close woke us as it and its parent (a shell
 * looping over /bin/true) wanted the CPU.  A unix socket closed with
 * packets unread fails its peer's next read (ECONNRESET) before the ACK
 * queued for it: ours takes no more (a later kick fails at the sender),
 * and what it took is read first.  Backwards, as drain_all. */
static void end_exited(struct loop *l)
{
	if (!l->exits_acked)
		return;
	l->exits_acked = false;
	for (size_t i = l->conns.nopen; i-- > 0;) {
		struct conn *c = l->conns.open[i];
		if (!c->exit_acked)
			continue;
		shutdown(c->fd, SHUT_RD);
		if (drain_conn(l, c, DRAIN_MAX))
			conn_end(l, c);
	}
}

/* The first readings of new images whose time came (ingest.h,
 * ingest_readings_waiting), and when the next is due. */
static void first_readings(struct loop *l)
{
	struct ingest_action acks = { 0 };
	if (ingest_readings_waiting(l->g, now_ns(), &l->first_read_ns))
		settle(l, &acks);
}

/* Submits what is queued, waits for a completion (faults or records left
 * to read: no waiting, they would not wake us; a watched loop, or one with
 * rings to read: at most PTS_HEARTBEAT_IDLE_MS), handles all there are. */
static int wait_some(struct loop *l)
{
	struct io_uring_cqe *cqe;
	if (l->faults_due || l->rings_due)
		return io_uring_submit_and_get_events(&l->ring);
	struct __kernel_timespec ts = l->idle;
	if (l->first_read_ns) { /* a first reading waits: not past its time */
		uint64_t now = now_ns(), idle = (uint64_t)l->idle.tv_nsec;
		uint64_t wait = l->first_read_ns > now ? l->first_read_ns - now : 0;
		ts.tv_nsec = (long long)(wait < idle ? wait : idle);
	}
	if (l->first_read_ns || l->cfg.heartbeat || l->conns.nopen)
		return io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, &ts, NULL);
	return io_uring_submit_and_wait(&l->ring, 1);
}

/* The watch's sign of life: at every turn, and after every completion, for
 * a turn can be long (each process that exits may read a thousand others'
 * /proc) and still move. */
static void beat(struct loop *l)
{
	if (l->cfg.heartbeat)
		__atomic_fetch_add(&l->cfg.heartbeat->beats, 1, __ATOMIC_RELAXED);
}

/* ...and how far the run is, once a turn. */
static void progress(struct loop *l)
{
	if (l->cfg.heartbeat)
		ingest_progress(l->g, l->cfg.heartbeat);
}

static int turn(struct loop *l)
{
	/* The trace is whole whenever the daemon waits: what a reader of the
	 * file sees, and what survives a crash. */
	if (l->cfg.trace)
		fflush(l->cfg.trace);
	beat(l);
	progress(l);
	/* Nothing known left to do: caught up. */
	behind_check(&l->behind, &l->conns, !l->faults_due && !l->rings_due &&
			     !io_uring_cq_ready(&l->ring), now_ns());
	int r = wait_some(l);
	if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY && r != -ETIME)
		return r;
	/* The completions there when the turn began, no more: a poll on a
	 * connection with more to read completes as it is submitted (when the
	 * queue fills), and a storm of busy clients would otherwise keep this
	 * loop from ending (no fault served, no tick, no heartbeat) for as
	 * long as it lasted.  What the completions queued is submitted by the
	 * next turn's wait, which later ones then end at once. */
	struct io_uring_cqe *cqes[BATCH];
	unsigned left = io_uring_cq_ready(&l->ring), n;
	while (left && (n = io_uring_peek_batch_cqe(&l->ring, cqes,
						      left < BATCH ? left : BATCH))) {
		for (unsigned i = 0; i < n; i++) {
			complete(l, cqes[i]);
			beat(l);
		}
		io_uring_cq_advance(&l->ring, n);
		left -= n;
	}
	/* Between two turns' completions: the connections can be read
	 * synchronously (see tick). */
	for (size_t i = 0; i < l->naccepted; i++)
		conn_open(l, l->accepted[i]);
	l->naccepted = 0;
	drain_rings(l);
	serve_faults(l);
	if (l->tick_due)
		tick(l);
	first_readings(l); /* after the tick, which may read HELLOs too */
	end_exited(l);
	control_answer_all(&l->reports, l->g); /* after the batch's readings */
	return 0;
}

int loop_init(struct loop *l, struct ingest *g, const struct loop_config *cfg)
{
	*l = (struct loop){
		.g = g, .cfg = *cfg, .signal_fd = -1,
		.interval = { .tv_sec = cfg->interval_s },
		.accept_retry = { .tv_nsec = ACCEPT_RETRY_NS },
		.report_wait = { .tv_sec = REPORT_WAIT_S },
		.idle = { .tv_nsec = PTS_HEARTBEAT_IDLE_MS * 1000000L },
	};
	/* DEFER_TASKRUN: completions are made only while the loop waits,
	 * which tick() relies on (and which saves interrupting the work). */
	struct io_uring_params p = {
		.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER |
			 IORING_SETUP_DEFER_TASKRUN,
		.cq_entries = CQ_ENTRIES,
	};
	int r = io_uring_queue_init_params(SQ_ENTRIES, &l->ring, &p);
	if (r)
		return r;
	l->burst = malloc(sizeof(*l->burst));
	l->ring_rec = malloc(PTS_REC_MAX);
	l->signal_fd = signalfd(-1, cfg->stop, SFD_CLOEXEC);
	if (!l->burst || !l->ring_rec || l->signal_fd < 0) {
		r = l->burst && l->ring_rec ? -errno : -ENOMEM;
		loop_free(l);
		return r;
	}
	cfg->readings->gate = (struct readings_gate){ gate_hold, gate_let_go,
						      gate_busy, l };
	arm_accept(l);
	if (cfg->report_fd >= 0)
		arm_report_accept(l);
	arm_signal(l);
	if (cfg->interval_s)
		arm_timer(l);
	r = io_uring_submit(&l->ring);
	if (r < 0)
		loop_free(l);
	return r < 0 ? r : 0;
}

int loop_run(struct loop *l)
{
	while (!l->stopping) {
		int r = turn(l);
		if (r)
			return r;
	}
	return 0;
}

void loop_drain(struct loop *l)
{
	l->stopping = true;
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_cancel64(s, 0, IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL);
	own(l, s, REQ_CANCEL, NULL);
	while (l->inflight)
		if (turn(l))
			return;
	/* From here on no fault is served: the processes still running get
	 * theirs from the kernel, as without us. */
	for (size_t i = 0; i < l->conns.nopen; i++)
		uffd_close(&l->conns.open[i]->uf);
	struct pollfd p = { .fd = l->cfg.listen_fd, .events = POLLIN };
	while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
		int fd = accept4(l->cfg.listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			break;
		conn_open(l, fd);
	}
	drain_all(l);
}

void loop_free(struct loop *l)
{
	l->cfg.readings->gate = (struct readings_gate){ 0 };
	io_uring_queue_exit(&l->ring);
	for (size_t i = 0; i < l->conns.nopen; i++)
		conn_free(l->conns.open[i]);
	for (size_t i = 0; i < l->naccepted; i++)
		close(l->accepted[i]);
	free(l->accepted);
	conns_free(&l->conns);
	free(l->burst);
	free(l->ring_rec);
	if (l->signal_fd >= 0)
		close(l->signal_fd);
}
