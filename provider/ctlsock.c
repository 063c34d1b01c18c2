/* SPDX-License-Identifier: MIT */
/*
 * The per-process control socket (protocol: ctlproto.h). Served only by the
 * control thread, from its poll loop, so requests are handled one at a time
 * and a CAPTURE_STATE reply is sent after the pass's Complete events.
 *
 * Hostile peers: credentials are checked at accept; a request must be
 * exactly one well-formed datagram; a client that sends nothing is dropped
 * after CLIENT_IDLE_MS; at most MAX_CLIENTS are served at once (others are
 * refused with -EBUSY). Nothing a peer sends can make the thread block:
 * every socket is non-blocking.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include "ctlproto.h"
#include "emit.h"
#include "internal.h"
#include "log.h"
#include "statedump.h"

#define MAX_CLIENTS 16
#define CLIENT_IDLE_MS 2000

struct client {
	int fd;
	uint64_t deadline_ms;
};

static struct client clients[MAX_CLIENTS];
static int nclients;

/*
 * accept4() failing for want of descriptors or memory (EMFILE, ENFILE,
 * ENOBUFS, ENOMEM) leaves the connection queued, so the listening socket
 * stays readable: polled as before, the control thread spun at full CPU
 * until a descriptor freed up. It is left out of the poll set for
 * ACCEPT_PAUSE_MS instead (the thread still wakes every poll_ms for its
 * other work) and tried again then; the client waits in the backlog, or
 * gives up at its own timeout. Said once per run of failures. Control
 * thread only, like clients[].
 */
#define ACCEPT_PAUSE_MS 100
static uint64_t accept_paused_until_ms;
static int accept_failing;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int letw_ctlsock_open(void)
{
	struct sockaddr_un sun;
	int64_t pidns = letw_ctl_pidns(0);
	socklen_t len;
	int fd;

	/* Without /proc the name cannot carry the namespace, and a name
	 * without it is what collided: serve no socket (the caller warns). */
	if (pidns < 0)
		return (int)pidns;
	len = letw_ctl_sockaddr(&sun, (uint64_t)pidns, getpid());
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sun, len) || listen(fd, MAX_CLIENTS)) {
		int err = errno;

		close(fd);
		return -err;
	}
	letw_g.listen_fd = fd;
	return 0;
}

void letw_ctlsock_close(void)
{
	for (int i = 0; i < nclients; i++)
		close(clients[i].fd);
	nclients = 0;
	if (letw_g.listen_fd >= 0)
		close(letw_g.listen_fd);
	letw_g.listen_fd = -1;
}

int letw_ctlsock_pollfds(struct pollfd *fds, int max)
{
	int n = 0;

	if (letw_g.listen_fd < 0 || max < 1)
		return 0;
	/* A negative fd keeps the slot (letw_ctlsock_service reads fds[0]
	 * as the listening socket) and poll() ignores it: revents 0. */
	fds[n++] = (struct pollfd){
		.fd = now_ms() < accept_paused_until_ms ? -1 : letw_g.listen_fd,
		.events = POLLIN };
	for (int i = 0; i < nclients && n < max; i++)
		fds[n++] = (struct pollfd){ .fd = clients[i].fd, .events = POLLIN };
	return n;
}

static void send_reply(int fd, const struct letw_ctl_reply *r)
{
	/* MSG_NOSIGNAL: a peer that hung up must not SIGPIPE the runtime. */
	(void)!send(fd, r, sizeof(*r), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * Close a connection we answered. A request still unread at close() makes
 * the kernel reset the connection, and the peer may then lose our reply
 * (it sees ECONNRESET instead of -EACCES/-EBUSY/-EBADMSG): drain first.
 */
static void close_answered(int fd)
{
	char sink[256];

	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
	close(fd);
}

static struct letw_ctl_reply reply_for(uint16_t type, int32_t status,
				       uint64_t request_id)
{
	return (struct letw_ctl_reply){
		.magic = LETW_CTL_MAGIC,
		.version = LETW_CTL_VERSION,
		.type = type,
		.status = status,
		.request_id = request_id,
		.pid = (uint32_t)getpid(),
		.instance_id = letw_g.instance_id,
		.last_dcstart_pass_id = uatomic_read(&letw_g.last_pass_id[0]),
		.last_dcend_pass_id = uatomic_read(&letw_g.last_pass_id[1]),
	};
}

static int peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return 0;
	return cred.uid == 0 || cred.uid == geteuid();
}

static void accept_clients(void)
{
	for (;;) {
		int fd = accept4(letw_g.listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct letw_ctl_reply r;

		if (fd < 0) {
			int err = errno;

			/* Gone before it was taken: the next one may wait. */
			if (err == ECONNABORTED || err == EINTR)
				continue;
			if (err == EAGAIN || err == EWOULDBLOCK)
				return;
			accept_paused_until_ms = now_ms() + ACCEPT_PAUSE_MS;
			if (!accept_failing)
				letw_warn("control socket: cannot accept a connection: %s; retrying every %d ms",
					  strerror(err), ACCEPT_PAUSE_MS);
			accept_failing = 1;
			return;
		}
		accept_failing = 0;
		if (!peer_allowed(fd)) {
			r = reply_for(0, -EACCES, 0);
			send_reply(fd, &r);
			close_answered(fd);
			letw_warn("control socket: refused a peer with another uid");
			continue;
		}
		if (nclients == MAX_CLIENTS) {
			r = reply_for(0, -EBUSY, 0);
			send_reply(fd, &r);
			close_answered(fd);
			continue;
		}
		clients[nclients++] = (struct client){
			.fd = fd, .deadline_ms = now_ms() + CLIENT_IDLE_MS };
	}
}

/* Returns 1 to keep the connection, 0 to close it. */
static int handle_request(int fd)
{
	struct letw_ctl_request req;
	struct letw_ctl_reply r;
	struct letw_pass_result res;
	ssize_t n;

	/* MSG_TRUNC reports the datagram's real size, so an oversized one
	 * is detected rather than silently cut to a valid-looking prefix. */
	n = recv(fd, &req, sizeof(req), MSG_DONTWAIT | MSG_TRUNC);
	if (n == 0)
		return 0;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if ((size_t)n != sizeof(req) || req.magic != LETW_CTL_MAGIC ||
	    req.version != LETW_CTL_VERSION) {
		r = reply_for(0, -EBADMSG, 0);
		send_reply(fd, &r);
		return 0;
	}
	switch (req.type) {
	case LETW_CTL_PING:
		r = reply_for(req.type, 0, req.request_id);
		break;
	case LETW_CTL_STATUS: {
		uint32_t pending;
		uint64_t coalesced, overflowed;

		/* hook_lock only under pass_lock on this thread (serve.c,
		 * letw_serve_statedumps); read once: it moves. The sessions
		 * whose pass could not begin are pending too: their pass is
		 * run again (serve.c, letw_serve_retry), and a command waiting
		 * for 0 would take the failed pass for the end. */
		pthread_mutex_lock(&letw_g.pass_lock);
		pending = letw_hook_pending() + letw_control_owed();
		pthread_mutex_unlock(&letw_g.pass_lock);

		r = reply_for(req.type, 0, req.request_id);
		r.rundown_mask = letw_live_mask(LETW_PROVIDER_RUNDOWN);
		letw_hook_counts(&coalesced, &overflowed);
		r.passes = (letw_hook_active() ? LETW_CTL_STATUS_HOOK : 0) |
			   (overflowed ? LETW_CTL_STATUS_OVERFLOW : 0) | LETW_CTL_STATUS_EMITTED |
			   (__atomic_load_n(&letw_g.tracing, __ATOMIC_RELAXED) ? 0 :
			    LETW_CTL_STATUS_UNTRACED);
		r.emitted = uatomic_read(&letw_g.last_pass_emitted);
		r.skipped_raced = uatomic_read(&letw_g.last_pass_bytes);
		r.pending_statedumps = (uint16_t)(pending > 0xffff ? 0xffff : pending);
		break;
	}
	case LETW_CTL_CAPTURE_STATE: {
		uint64_t mask = req.match_any_keyword ?
			req.match_any_keyword :
			letw_live_mask(LETW_PROVIDER_RUNDOWN);

		pthread_mutex_lock(&letw_g.pass_lock);
		letw_control_dispatch(LETW_CONTROL_CAPTURE_STATE, mask,
				      LETW_PROVIDER_RUNDOWN, NULL, &res);
		pthread_mutex_unlock(&letw_g.pass_lock);
		/* A walk that could not begin (res.passes < 0) ran nothing:
		 * its errno is the reply's status, and said (each request's:
		 * nothing retries it). */
		if (res.passes < 0)
			letw_control_say_not_run(&res);
		r = reply_for(req.type, !letw_g.tracing ? -ENOTCONN :
					res.passes < 0 ? res.passes : 0,
			      req.request_id);
		r.passes = res.passes < 0 ? 0 : (uint32_t)res.passes;
		r.pass_id = res.pass_id;
		r.emitted = res.emitted;
		r.skipped_raced = res.skipped_raced;
		r.rundown_mask = mask;
		break;
	}
	default:
		r = reply_for(req.type, -EOPNOTSUPP, req.request_id);
		break;
	}
	send_reply(fd, &r);
	return 1;
}

void letw_ctlsock_service(const struct pollfd *fds, int nfds)
{
	uint64_t now = now_ms();
	int i;

	if (nfds <= 0 || letw_g.listen_fd < 0)
		return;
	/* fds[1..] mirror clients[0..] as of letw_ctlsock_pollfds. */
	for (i = nclients - 1; i >= 0; i--) {
		int keep = 1;

		if (i + 1 < nfds && fds[i + 1].revents) {
			keep = (fds[i + 1].revents & POLLIN) &&
			       handle_request(clients[i].fd);
			clients[i].deadline_ms = now + CLIENT_IDLE_MS;
		} else if (now > clients[i].deadline_ms) {
			keep = 0;
		}
		if (!keep) {
			close_answered(clients[i].fd);
			clients[i] = clients[--nclients];
		}
	}
	if (fds[0].revents & POLLIN)
		accept_clients();
}
