/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "hello.h"
#include "log.h"
#include "recv.h"
#include "requests.h"

/* The process's userfaultfd, once the model has it (its HELLO is about to
 * be acked): its shared memory registered before the process goes on, a
 * forked child's before its fork() returns (docs/faults.md). */
static void faults_start(struct loop *l, struct conn *c)
{
	int err = uffd_start(&c->uf, l->cfg.faults);
	ingest_fault_mode(l->g, c->pid, err ? PTS_FAULTS_OFF : l->cfg.faults, -err);
	if (err)
		return;
	uffd_sync(&c->uf, l->g, c->pid, 0, UINT64_MAX);
	arm_uffd(l, c);
}

/* A 32-byte send on a unix socket completes or fails at once; through the
 * ring it would need a buffer kept until completion.  A peer that is gone
 * shows as the end of its stream.  A peer whose socket is full has not
 * read hundreds of acks (a shim reads each it waits for, and waits for a
 * few): it is dropped, its connection shut down, so that the reads of it
 * end as at its end of file (the connection may be another than the one
 * being read: a forked child's). */
static void ack_send(struct loop *l, struct conn *c, const struct pts_ack *a)
{
	if (c->uf.fd >= 0 && !c->uf.started && !l->stopping)
		faults_start(l, c);
	c->acked = true;
	if (send(c->fd, a, sizeof(*a), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			ingest_drop(l->g, c->id, REPORT_DROP_DEAF);
			shutdown(c->fd, SHUT_RDWR);
		}
		return;
	}
	if (ingest_conn_exit_acked(l->g, c->id, a->acked_seq))
		l->exits_acked = c->exit_acked = true;
}

void acks_send(struct loop *l, const struct ingest_action *act)
{
	for (unsigned i = 0; i < act->nack; i++) {
		struct conn *c = ingest_conn_owner(l->g, act->ack[i].conn);
		if (c)
			ack_send(l, c, &act->ack[i].rec);
	}
}

/* A HELLO's ack need not wait for the process's reading when it has a
 * ring: the reading is made between its calls (readings.h), so what it
 * does meanwhile is in the records the reading drains first.  A forked
 * child, which waits for that ack, then runs on a reading sooner.  Not
 * with a userfaultfd: its registrations, made before the ack, follow the
 * model, which a new image's first reading fills.  Nor when act acks
 * another record of the same connection (a short-lived image's EXIT came
 * with its HELLO): the process waits for that one, which must wait for
 * the reading, and the HELLO's goes with it, the process woken once, not
 * twice.  Those acks, sent, leave act (their conn 0); the others wait for
 * the readings. */
static bool acks_another(const struct ingest_action *act, unsigned i)
{
	for (unsigned j = 0; j < act->nack; j++)
		if (j != i && act->ack[j].conn == act->ack[i].conn)
			return true;
	return false;
}

void acks_send_hellos(struct loop *l, struct ingest_action *act)
{
	for (unsigned i = 0; i < act->nack; i++) {
		struct conn *c = ingest_conn_owner(l->g, act->ack[i].conn);
		if (!c || c->acked || !c->rr.hdr || c->uf.fd >= 0 ||
		    acks_another(act, i))
			continue;
		ack_send(l, c, &act->ack[i].rec);
		act->ack[i].conn = 0;
	}
}

/* The acks to c, sent as soon as c's /proc is read, before the models
 * take the reading: those of act (a packet's: an EXIT sent on the
 * socket), and those owed for the records the reading drained from c's
 * ring (an EXIT there, which a kick told us of).  A process at its EXIT,
 * which waits for the ack before it ends, ends that much sooner: the
 * reading is all the daemon needs of it alive.  Not a HELLO's that
 * brought a userfaultfd: its registrations, made before the ack, follow
 * the model the reading fills.  (Nor, the loop sees to it, in a reading
 * of every process: those acks wait for the round's last reading.) */
void acks_send_read(struct loop *l, struct conn *c, struct ingest_action *act)
{
	if (c->uf.fd >= 0 && !c->uf.started)
		return;
	for (unsigned i = 0; act && i < act->nack; i++) {
		if (act->ack[i].conn != c->id)
			continue;
		ack_send(l, c, &act->ack[i].rec);
		act->ack[i].conn = 0;
	}
	struct ingest_action owed = { 0 };
	ingest_owed_acks_of(l->g, c->id, &owed);
	acks_send(l, &owed);
}

/* The acks a reading owes (ingest_owed_acks), all of them. */
void acks_send_owed(struct loop *l)
{
	bool more;
	do {
		struct ingest_action act = { 0 };
		more = ingest_owed_acks(l->g, &act);
		acks_send(l, &act);
	} while (more);
}

/* A process that could not make a userfaultfd (a user without access to
 * /dev/userfaultfd): said once, with the fix.  Not a process out of fds or
 * memory just then: that is no setting to fix, the report has its errno,
 * and the stderr of `ptshare run` is the program's. */
void hello_uffd_missing(struct loop *l, const struct conn *c, int err)
{
	bool setting = err != EMFILE && err != ENFILE && err != ENOMEM;
	if (err && setting && l->cfg.faults != PTS_FAULTS_OFF)
		uffd_say_unavailable(err, c->uid);
}

/* The fds a HELLO brought, as it says: its userfaultfd (kept, a copy,
 * when faults are wanted: docs/faults.md, Who holds the userfaultfd), then
 * its record ring's memfd, mapped.  False when the ring it says it brings
 * cannot be read: the process is dropped, as for a malformed record (its
 * records would go where we cannot see them). */
bool hello_fds_take(struct loop *l, struct conn *c,
		      const struct ingest_action *act, const struct msghdr *m)
{
	int fds[RECV_FDS_MAX];
	size_t n = m ? recv_fds(m, fds, RECV_FDS_MAX) : 0, i = 0;
	if (act->take_uffd && i < n && l->cfg.faults != PTS_FAULTS_OFF)
		uffd_take(&c->uf, fds[i]);
	i += act->take_uffd;
	if (!act->take_ring || c->rr.hdr)
		return !act->take_ring;
	int err = i < n ? rec_ring_map(&c->rr, fds[i]) : -EBADF;
	c->uf.ring_dev = c->rr.dev;
	c->uf.ring_ino = c->rr.ino;
	if (err)
		say_once("process %d: its record ring cannot be read (%s): "
			 "dropped", (int)c->pid, strerror(-err));
	else
		behind_ring_new(&l->behind, c);
	return !err;
}

