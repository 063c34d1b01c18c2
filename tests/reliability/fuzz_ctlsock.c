/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the control-socket request path: each input is
 * sent as one datagram to the real server code (provider/ctlsock.c, from
 * libletw_internal) over a real SOCK_SEQPACKET connection, and the server
 * is driven exactly as the control thread drives it (pollfds, poll,
 * service). So the parser is fuzzed together with its framing (MSG_TRUNC,
 * size checks) and client bookkeeping, with no change to the core.
 *
 * Oracle (besides ASan/UBSan): the reply must be what ctlproto.h promises
 * for that datagram — -EBADMSG for anything but exactly one well-formed
 * request, the echoed request_id otherwise, -EOPNOTSUPP for unknown types,
 * -ENOTCONN for a capture (tracing is off here) — and the server must
 * keep no client after the peer hung up.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctlproto.h"
#include "internal.h"

static struct sockaddr_un addr;
static socklen_t addr_len;

static void service_once(int timeout_ms)
{
	struct pollfd fds[40];
	int n = letw_ctlsock_pollfds(fds, 40);

	if (poll(fds, (nfds_t)n, timeout_ms) < 0)
		abort();
	letw_ctlsock_service(fds, n);
}

static int live_clients(void)
{
	struct pollfd fds[40];

	return letw_ctlsock_pollfds(fds, 40) - 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* No table, no control thread, no probe: a CAPTURE is decided and
	 * answered (-ENOTCONN) without a pass. */
	letw_g.tracing = 0;
	letw_g.instance_id = 3;
	if (letw_ctlsock_open())
		abort();
	addr_len = letw_ctl_sockaddr(&addr, (uint64_t)letw_ctl_pidns(0), getpid());
	return 0;
}

static int32_t expected_status(const uint8_t *data, size_t size)
{
	struct letw_ctl_request q;

	if (size != sizeof(q))
		return -EBADMSG;
	memcpy(&q, data, sizeof(q));
	if (q.magic != LETW_CTL_MAGIC || q.version != LETW_CTL_VERSION)
		return -EBADMSG;
	switch (q.type) {
	case LETW_CTL_PING:
	case LETW_CTL_STATUS:
		return 0;
	case LETW_CTL_CAPTURE_STATE:
		return -ENOTCONN;
	default:
		return -EOPNOTSUPP;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct letw_ctl_reply r;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ssize_t n;

	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, addr_len))
		abort();
	service_once(100); /* accept */
	if (size == 0) {
		/* A zero-length datagram reads as end of stream: no reply. */
		send(fd, "", 0, MSG_NOSIGNAL);
	} else if (send(fd, data, size, MSG_NOSIGNAL) != (ssize_t)size) {
		close(fd);
		service_once(0);
		return 0; /* larger than the socket allows: nothing to test */
	}
	service_once(100); /* handle */
	n = recv(fd, &r, sizeof(r), MSG_DONTWAIT);
	if (size > 0) {
		struct letw_ctl_request q;

		if (n != (ssize_t)sizeof(r) || r.magic != LETW_CTL_MAGIC ||
		    r.status != expected_status(data, size))
			abort();
		memcpy(&q, data, size < sizeof(q) ? size : sizeof(q));
		if (r.status != -EBADMSG && r.request_id != q.request_id)
			abort();
	}
	close(fd);
	/* The server notices the hang-up and forgets the client. */
	for (int i = 0; i < 10 && live_clients() > 0; i++)
		service_once(10);
	if (live_clients() != 0)
		abort();
	return 0;
}
