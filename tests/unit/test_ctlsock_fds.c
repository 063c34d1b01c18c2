/* SPDX-License-Identifier: MIT */
/*
 * The control socket when the process is out of file descriptors: a
 * client connecting then (the connection queued, accept4() failing with
 * EMFILE) used to leave the listening socket readable and the control
 * thread in a busy loop, poll() and accept4() at full CPU, until a
 * descriptor freed up. Now the thread leaves the listening socket out of
 * its poll for a while and tries again, says so once, and answers the
 * queued client once descriptors are back.
 *
 * What "busy" means here is CPU time, read from the kernel's account of
 * the control thread (/proc/self/task/TID/stat), not wall time: over a
 * one-second window the old loop took 99 clock ticks (all of one CPU),
 * the thread now 0; the bound is 20.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>
#include "ctlproto.h"
#include "task_names.h"

static char logged[4096];
static int warnings;

/* On the control thread; read by the test once it answered. */
static void keep_log(enum letw_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == LETW_LOG_WARN && strstr(msg, "cannot accept")) {
		__atomic_add_fetch(&warnings, 1, __ATOMIC_RELEASE);
		strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
		strcat(logged, "\n");
	}
}

static void setup(void)
{
	struct letw_config cfg = { .size = sizeof(cfg), .log_fn = keep_log };

	unsetenv("LETW_DISABLE");
	cr_assert_eq(letw_init(&cfg), 0);
}

static void teardown(void)
{
	letw_shutdown();
}

TestSuite(ctlsock_fds, .init = setup, .fini = teardown, .timeout = 60);

/* An fd open on the control thread's /proc/self/task/TID/stat (the
 * thread names itself once it runs: letw_init does not wait). */
static int control_thread_stat(void)
{
	char path[64];
	long tid = 0;
	int fd;

	for (int i = 0; i < 500 && !tasks_named("letw-control", &tid); i++)
		usleep(10000);
	cr_assert_gt(tid, 0, "no thread named letw-control within 5 s");
	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	return fd;
}

/* utime + stime of the thread, in clock ticks (proc(5): fields 14, 15,
 * counted after the command name's closing parenthesis). */
static long cpu_ticks(int fd)
{
	char buf[1024], *p;
	unsigned long ut, st;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	cr_assert_gt(n, 0);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	cr_assert_not_null(p);
	cr_assert_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			    &ut, &st), 2);
	return (long)(ut + st);
}

Test(ctlsock_fds, out_of_descriptors_no_busy_loop_and_the_client_answered_after)
{
	struct letw_ctl_request req = {
		.magic = LETW_CTL_MAGIC, .version = LETW_CTL_VERSION,
		.type = LETW_CTL_STATUS, .request_id = 11,
	};
	struct letw_ctl_reply r = { 0 };
	struct sockaddr_un sun;
	socklen_t len = letw_ctl_sockaddr(&sun, (uint64_t)letw_ctl_pidns(0), getpid());
	struct timeval tv = { .tv_sec = 10 };
	struct rlimit rl;
	int stat_fd = control_thread_stat();
	int c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int filler[64], nfill = 0;
	long t0, busy;

	cr_assert_geq(c, 0);
	cr_assert_eq(setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	/* Every descriptor the process may have, taken: the control
	 * thread's accept4() now fails with EMFILE. The client's socket and
	 * the stat file were opened before. */
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = 64;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0, "setrlimit: %s", strerror(errno));
	while (nfill < 64 && (filler[nfill] = dup(0)) >= 0)
		nfill++;
	cr_assert_eq(errno, EMFILE, "dup: %s", strerror(errno));
	cr_assert_eq(connect(c, (struct sockaddr *)&sun, len), 0, "connect: %s",
		     strerror(errno));
	cr_assert_eq(send(c, &req, sizeof(req), 0), (ssize_t)sizeof(req));

	/* The window opens once the thread met the failing accept4 (its
	 * warning): counted from the send, it asked the thread to get there
	 * within the second (a loaded machine may run it later), and a
	 * thread that got there late had less of the window to loop in. */
	for (int i = 0; i < 3000 && !__atomic_load_n(&warnings, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	cr_assert_geq(__atomic_load_n(&warnings, __ATOMIC_ACQUIRE), 1,
		      "accept4's failure was not said within 30 s");
	t0 = cpu_ticks(stat_fd);
	sleep(1);
	busy = cpu_ticks(stat_fd) - t0;
	cr_expect_lt(busy, 20, "the control thread took %ld clock ticks of CPU in 1 s "
		     "with a connection it cannot accept (a busy loop)", busy);

	/* Descriptors back: the queued client is answered. */
	while (nfill > 0)
		close(filler[--nfill]);
	cr_assert_eq(recv(c, &r, sizeof(r), 0), (ssize_t)sizeof(r),
		     "no reply once descriptors were back: %s", strerror(errno));
	cr_expect_eq(r.request_id, 11);
	cr_expect_eq(__atomic_load_n(&warnings, __ATOMIC_ACQUIRE), 1,
		     "said more than once: '%s'", logged);
	close(c);
	close(stat_fd);
}
