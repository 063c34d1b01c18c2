/* SPDX-License-Identifier: MIT */
/*
 * Hostile control-socket client (protocol: provider/ctlproto.h). Runs a set
 * of abuses against a live provider and checks each answer, and that the
 * provider still answers a well-formed PING afterwards.
 *
 * Usage: letw-ctlclient --pid PID [TEST...]   (no TEST: all of them)
 * Tests: garbage short oversized badversion unknown split empty idle flood
 *        concurrent reconnect stream nobody; and `refused`, alone, to run
 *        as another uid (setpriv): every request must be refused
 * `nobody` forks a child that drops to uid/gid 65534 (what setpriv
 * --reuid=nobody does) before connecting: it must be refused with -EACCES.
 * Exit 0 iff every test held.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>
#include "ctlproto.h"

static pid_t target;
static int failures;

#define EXPECT(cond, ...)                                                  \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "FAIL %s: ", cur_test);            \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			failures++;                                        \
		}                                                          \
	} while (0)

static const char *cur_test = "";

static int connect_to(int type)
{
	struct sockaddr_un sun;
	struct timeval tv = { 10, 0 };
	int64_t pidns = letw_ctl_pidns(0); /* target shares our pid namespace */
	socklen_t len;
	int fd;

	/* Our namespace, not read from the target's /proc: a test run as
	 * another user must reach the provider to be refused by it. */
	if (pidns < 0)
		return (int)pidns;
	len = letw_ctl_sockaddr(&sun, (uint64_t)pidns, target);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, len)) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

static struct letw_ctl_request req_of(uint16_t type, uint64_t id)
{
	return (struct letw_ctl_request){ .magic = LETW_CTL_MAGIC,
					  .version = LETW_CTL_VERSION,
					  .type = type, .request_id = id };
}

/* Reply status, or 1000 + -errno for "no valid reply". */
static int recv_status(int fd, struct letw_ctl_reply *out)
{
	struct letw_ctl_reply r;
	ssize_t n = recv(fd, &r, sizeof(r), 0);

	if (n < 0)
		return 1000 + errno;
	if (n != (ssize_t)sizeof(r) || r.magic != LETW_CTL_MAGIC)
		return 2000 + (int)n;
	if (out)
		*out = r;
	return r.status;
}

/* Send one raw datagram on a fresh connection and return the status. */
static int raw_exchange(const void *buf, size_t len, int *closed_after)
{
	int fd = connect_to(SOCK_SEQPACKET), st;
	char b;

	if (fd < 0)
		return 3000 - fd;
	if (send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return 4000 + errno;
	}
	st = recv_status(fd, NULL);
	if (closed_after)
		*closed_after = recv(fd, &b, 1, 0) == 0;
	close(fd);
	return st;
}

static int ping_ok(void)
{
	/* -EBUSY is an answer: right after a storm, the server may still
	 * hold MAX_CLIENTS dead connections it reaps on its next round. A
	 * well-behaved client retries; the server must answer within a
	 * minute (it serves one request at a time, and a CAPTURE queued by
	 * `concurrent` runs a whole pass: slow under TSan).
	 * The refusal itself can arrive as ECONNRESET: the server closes
	 * with our request unread, and the kernel then reports the reset
	 * before the queued -EBUSY reply (reported). */
	for (int attempt = 0; attempt < 600; attempt++) {
		struct letw_ctl_request q = req_of(LETW_CTL_PING, 99);
		struct letw_ctl_reply r;
		int fd = connect_to(SOCK_SEQPACKET), st;

		if (fd < 0) {
			fprintf(stderr, "ping: connect: %s\n", strerror(-fd));
			return 0;
		}
		send(fd, &q, sizeof(q), MSG_NOSIGNAL);
		st = recv_status(fd, &r);
		close(fd);
		if (st != -EBUSY && st != 1000 + ECONNRESET) {
			if (st == 0 && r.request_id == 99 && r.pid == (uint32_t)target)
				return 1;
			fprintf(stderr, "ping: status %d (>= 1000: no reply, errno %d)\n",
				st, st >= 1000 ? st - 1000 : 0);
			return 0;
		}
		usleep(100 * 1000);
	}
	return 0;
}

static void t_garbage(void)
{
	unsigned char buf[sizeof(struct letw_ctl_request)];
	int closed;

	for (int i = 0; i < 50; i++) {
		for (size_t j = 0; j < sizeof(buf); j++)
			buf[j] = (unsigned char)rand();
		buf[0] ^= 0x5a; /* never the magic */
		EXPECT(raw_exchange(buf, sizeof(buf), &closed) == -EBADMSG && closed,
		       "random datagram not refused with -EBADMSG + close");
	}
}

static void t_short(void)
{
	struct letw_ctl_request q = req_of(LETW_CTL_PING, 1);

	for (size_t len = 1; len < sizeof(q); len += 5)
		EXPECT(raw_exchange(&q, len, NULL) == -EBADMSG,
		       "%zu-byte request not refused", len);
}

static void t_oversized(void)
{
	static char big[65536];
	struct letw_ctl_request q = req_of(LETW_CTL_PING, 1);

	memcpy(big, &q, sizeof(q)); /* a valid prefix must not pass */
	EXPECT(raw_exchange(big, sizeof(q) + 1, NULL) == -EBADMSG, "25 bytes accepted");
	EXPECT(raw_exchange(big, sizeof(big), NULL) == -EBADMSG, "64 KiB accepted");
}

static void t_badversion(void)
{
	struct letw_ctl_request q = req_of(LETW_CTL_PING, 1);

	q.version = 2;
	EXPECT(raw_exchange(&q, sizeof(q), NULL) == -EBADMSG, "version 2 accepted");
}

static void t_unknown(void)
{
	struct letw_ctl_request q = req_of(77, 5), p = req_of(LETW_CTL_PING, 6);
	struct letw_ctl_reply r;
	int fd = connect_to(SOCK_SEQPACKET);

	EXPECT(fd >= 0, "connect: %d", fd);
	if (fd < 0)
		return;
	send(fd, &q, sizeof(q), MSG_NOSIGNAL);
	EXPECT(recv_status(fd, &r) == -EOPNOTSUPP && r.request_id == 5,
	       "unknown type not answered -EOPNOTSUPP");
	/* A well-formed unknown request keeps the connection usable. */
	send(fd, &p, sizeof(p), MSG_NOSIGNAL);
	EXPECT(recv_status(fd, &r) == 0 && r.request_id == 6, "ping after unknown type");
	close(fd);
}

static void t_split(void)
{
	struct letw_ctl_request q = req_of(LETW_CTL_PING, 1);
	int fd = connect_to(SOCK_SEQPACKET), st;

	if (fd < 0)
		return;
	/* A partial write: each send is its own datagram on SEQPACKET. */
	send(fd, &q, 12, MSG_NOSIGNAL);
	send(fd, (char *)&q + 12, sizeof(q) - 12, MSG_NOSIGNAL);
	st = recv_status(fd, NULL);
	/* The server refuses the first half and closes; if it closed with
	 * our second half unread, the kernel resets the connection and the
	 * refusal may be lost in transit: both are a refusal. */
	EXPECT(st == -EBADMSG || st == 1000 + ECONNRESET, "first half answered %d", st);
	close(fd);
}

static void t_empty(void)
{
	int fd = connect_to(SOCK_SEQPACKET);
	char b;

	if (fd < 0)
		return;
	send(fd, "", 0, MSG_NOSIGNAL);
	EXPECT(recv(fd, &b, 1, 0) <= 0, "zero-length datagram got an answer");
	close(fd);
}

static void t_idle(void)
{
	int idle = connect_to(SOCK_SEQPACKET);
	char b;

	EXPECT(idle >= 0, "connect");
	if (idle < 0)
		return;
	/* Others are served while a client sits silent... */
	EXPECT(ping_ok(), "ping while another client idles");
	/* ...and the silent one is dropped (after CLIENT_IDLE_MS). */
	EXPECT(recv(idle, &b, 1, 0) == 0, "idle client not dropped within 10 s");
	close(idle);
}

static void t_flood(void)
{
	enum { N = 64 };
	int fds[N], ok = 0, busy = 0, other = 0;
	struct letw_ctl_request q = req_of(LETW_CTL_PING, 1);

	for (int i = 0; i < N; i++)
		fds[i] = connect_to(SOCK_SEQPACKET);
	for (int i = 0; i < N; i++)
		if (fds[i] >= 0)
			send(fds[i], &q, sizeof(q), MSG_NOSIGNAL);
	for (int i = 0; i < N; i++) {
		int st = fds[i] >= 0 ? recv_status(fds[i], NULL) : -1;

		ok += st == 0;
		busy += st == -EBUSY;
		other += st != 0 && st != -EBUSY;
		if (fds[i] >= 0)
			close(fds[i]);
	}
	printf("flood: %d answered, %d refused busy, %d other\n", ok, busy, other);
	EXPECT(ok > 0, "no client of the flood served");
	/* Connections the listen backlog could not take fail to connect:
	 * that is the kernel refusing, not the provider breaking. */
}

static void *capture_worker(void *arg)
{
	int *ok = arg;

	for (int i = 0; i < 25; i++) {
		struct letw_ctl_request q = req_of(LETW_CTL_CAPTURE_STATE, (uint64_t)i);
		struct letw_ctl_reply r;
		int fd, st;

		q.match_any_keyword = LETW_KW_RUNDOWN_START;
		fd = connect_to(SOCK_SEQPACKET);
		if (fd < 0)
			continue;
		send(fd, &q, sizeof(q), MSG_NOSIGNAL);
		st = recv_status(fd, &r);
		if ((st == 0 || st == -ENOTCONN) && r.request_id == (uint64_t)i)
			(*ok)++;
		close(fd);
	}
	return NULL;
}

static void t_concurrent(void)
{
	enum { T = 8 };
	pthread_t th[T];
	int ok[T] = { 0 }, total = 0;

	for (int i = 0; i < T; i++)
		pthread_create(&th[i], NULL, capture_worker, &ok[i]);
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		total += ok[i];
	}
	printf("concurrent: %d of %d capture requests answered\n", total, T * 25);
	EXPECT(total > 0, "no concurrent capture answered");
}

static void t_reconnect(void)
{
	for (int i = 0; i < 2000; i++) {
		int fd = connect_to(SOCK_SEQPACKET);

		if (fd >= 0) {
			if (i % 2)
				shutdown(fd, SHUT_WR);
			close(fd);
		}
	}
}

static void t_stream(void)
{
	int fd = connect_to(SOCK_STREAM);

	EXPECT(fd < 0, "a SOCK_STREAM client connected");
	if (fd >= 0)
		close(fd);
}

static void t_nobody(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct letw_ctl_request q = req_of(LETW_CTL_CAPTURE_STATE, 1);
		int fd, st;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) || getuid() != 65534)
			_exit(3);
		fd = connect_to(SOCK_SEQPACKET);
		if (fd < 0)
			_exit(fd == -ECONNREFUSED ? 0 : 4);
		send(fd, &q, sizeof(q), MSG_NOSIGNAL);
		st = recv_status(fd, NULL);
		_exit(st == -EACCES || st >= 1000 ? 0 : 5);
	}
	waitpid(pid, &status, 0);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "uid 65534 was not refused (child status %#x)", status);
}

/* Run as another uid (faults.sh: setpriv --reuid=65534): every request
 * must be refused. */
static void t_refused(void)
{
	struct letw_ctl_request q = req_of(LETW_CTL_CAPTURE_STATE, 1);
	int fd = connect_to(SOCK_SEQPACKET), st;

	if (fd < 0)
		return; /* refused at connect: fine */
	send(fd, &q, sizeof(q), MSG_NOSIGNAL);
	st = recv_status(fd, NULL);
	close(fd);
	EXPECT(st == -EACCES || st == 1000 + ECONNRESET,
	       "uid %d got status %d", (int)getuid(), st);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "garbage", t_garbage }, { "short", t_short },
	{ "oversized", t_oversized }, { "badversion", t_badversion },
	{ "unknown", t_unknown }, { "split", t_split }, { "empty", t_empty },
	{ "idle", t_idle }, { "flood", t_flood }, { "concurrent", t_concurrent },
	{ "reconnect", t_reconnect }, { "stream", t_stream },
	{ "nobody", t_nobody },
	{ "refused", t_refused }, /* only as another uid: not in the default set */
};
#define NTESTS_DEFAULT (sizeof(tests) / sizeof(tests[0]) - 1)

static int as_other_uid;

static void run(int i)
{
	cur_test = tests[i].name;
	tests[i].fn();
	if (!as_other_uid)
		EXPECT(ping_ok(), "provider does not answer a PING afterwards");
	printf("%s: done\n", cur_test);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': target = (pid_t)strtol(optarg, NULL, 10); break;
		case 'h':
			printf("usage: letw-ctlclient --pid PID [TEST...]\n");
			return 0;
		default: return 2;
		}
	}
	if (target <= 0) {
		fprintf(stderr, "letw-ctlclient: --pid PID is required\n");
		return 2;
	}
	srand(1);
	as_other_uid = optind + 1 == argc && !strcmp(argv[optind], "refused");
	cur_test = "initial ping";
	if (!as_other_uid)
		EXPECT(ping_ok(), "provider %d does not answer", (int)target);
	if (optind == argc) {
		for (size_t i = 0; i < NTESTS_DEFAULT; i++)
			run((int)i);
	}
	for (int a = optind; a < argc; a++) {
		size_t i;

		for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
			if (!strcmp(argv[a], tests[i].name))
				break;
		if (i == sizeof(tests) / sizeof(tests[0])) {
			fprintf(stderr, "letw-ctlclient: no test '%s'\n", argv[a]);
			return 2;
		}
		run((int)i);
	}
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
