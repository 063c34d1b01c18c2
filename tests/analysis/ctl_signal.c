/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD shim for session_signal_e2e: a signal arrives while the CLI
 * is inside the last liblttng-ctl call of start/stop/snapshot, which
 * liblttng-ctl does not cut short. LETW_CTL_SIGNAL=CALL:HOW, CALL one of
 * start, stop, snapshot (lttng_start_tracing, lttng_stop_tracing,
 * lttng_snapshot_record):
 *  - HOW=during: SIGINT is raised, then the real call made (a Ctrl-C while
 *    sessiond stops the session: the work is done);
 *  - HOW=hang: SIGINT is raised, the file LETW_CTL_SIGNAL_READY created,
 *    and the call never returns (a hung sessiond: the user's second
 *    signal is the way out); the real call is not made.
 * Unset, or another CALL: the real call.
 *
 * For watch_reconnect_e2e, lttng-sessiond restarted under a running
 * `lttng-etw watch`, at the moments that test needs:
 *  - lttng_session_daemon_alive() waits while the file LETW_CTL_ALIVE_GATE
 *    exists, then asks (watch then finds the new sessiond answering, or
 *    another watch already started there, however slow a restart is);
 *  - lttng_notification_channel_create() fails (NULL) while the file
 *    LETW_CTL_NOCHAN exists, appending a line to it at each call (a
 *    sessiond that answers but refuses the channel; the lines count the
 *    attempts).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Only passed on: no lttng-ctl header needed. */
struct lttng_snapshot_output;
struct lttng_endpoint;
struct lttng_notification_channel;

/* Before the real call, as HOW says; returns only for `during` or when
 * CALL is not this one. */
static void before(const char *call)
{
	const char *how = getenv("LETW_CTL_SIGNAL"), *ready;
	size_t n = strlen(call);

	if (!how || strncmp(how, call, n) != 0 || how[n] != ':')
		return;
	how += n + 1;
	if (strcmp(how, "during") && strcmp(how, "hang"))
		return;
	raise(SIGINT); /* handled before raise() returns: single-threaded */
	if (!strcmp(how, "during"))
		return;
	ready = getenv("LETW_CTL_SIGNAL_READY");
	if (ready)
		close(open(ready, O_WRONLY | O_CREAT, 0600));
	for (;;)
		pause();
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))

int lttng_start_tracing(const char *session)
{
	before("start");
	return REAL("lttng_start_tracing", int (*)(const char *))(session);
}

int lttng_stop_tracing(const char *session)
{
	before("stop");
	return REAL("lttng_stop_tracing", int (*)(const char *))(session);
}

int lttng_snapshot_record(const char *session, struct lttng_snapshot_output *out, int wait)
{
	before("snapshot");
	return REAL("lttng_snapshot_record",
		    int (*)(const char *, struct lttng_snapshot_output *, int))(session, out, wait);
}

int lttng_session_daemon_alive(void)
{
	const char *gate = getenv("LETW_CTL_ALIVE_GATE");
	const struct timespec tick = { 0, 20 * 1000 * 1000 };

	while (gate && access(gate, F_OK) == 0)
		nanosleep(&tick, NULL);
	return REAL("lttng_session_daemon_alive", int (*)(void))();
}

struct lttng_notification_channel *lttng_notification_channel_create(struct lttng_endpoint *e)
{
	const char *refuse = getenv("LETW_CTL_NOCHAN");
	int fd = refuse ? open(refuse, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;

	if (fd >= 0) {
		if (write(fd, "refused\n", 8) != 8) {
			/* counted or not, refused */
		}
		close(fd);
		return NULL;
	}
	return REAL("lttng_notification_channel_create",
		    struct lttng_notification_channel *(*)(struct lttng_endpoint *))(e);
}
