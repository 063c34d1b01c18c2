/* SPDX-License-Identifier: MIT */
/*
 * A rundown pass whose walk cannot begin for want of memory: the walker's
 * copy buffer (rundown/walker.c, buf_get: one 8 MiB mmap at the first
 * pass, kept) is refused. The pass must then run nothing and say so: the
 * requester gets -ENOMEM, the runtime's log callback an error, and
 * letw_store_stats.passes_failed counts it, while `passes` and the last
 * pass ids (which `lttng-etw stop` waits on) stay as they were, and the
 * next pass, memory back, runs. It used to emit the pass's Complete
 * events without their Init (the report called the pass truncated and
 * blamed the trace), count it as a pass, move the last pass ids (so
 * `lttng-etw stop` took a DCEnd that never ran for done) and return the
 * pass bits as if it had run (the control socket's reply too, status 0).
 *
 * The failure is injected by this executable's own mmap, which the
 * library's calls reach (the executable comes first in symbol lookup):
 * it refuses the armed number of mappings of at least 8 MiB made by the
 * thread named letw-control; every other call passes through. Tracing is
 * on (the probe object next to the library); no session is needed: a
 * capture-state walks the table whatever the sessions record.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>
#include "ctlproto.h"

static int refuse_left;  /* armed by the test, consumed on the control thread */
static int refused;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	char name[16] = "";

	if (len >= (8u << 20) && __atomic_load_n(&refuse_left, __ATOMIC_ACQUIRE) > 0 &&
	    !prctl(PR_GET_NAME, name, 0, 0, 0) && !strcmp(name, "letw-control")) {
		__atomic_sub_fetch(&refuse_left, 1, __ATOMIC_ACQ_REL);
		__atomic_add_fetch(&refused, 1, __ATOMIC_RELEASE);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static char logged[4096];
static int errors_logged;

/* On the control thread; read by the test after the pass it waited for. */
static void keep_log(enum letw_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == LETW_LOG_ERROR) {
		errors_logged++;
		strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
		strcat(logged, "\n");
	}
}

static void setup(void)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.log_fn = keep_log,
	};

	unsetenv("LETW_DISABLE");
	unsetenv("LETW_PROBE_PATH");
	/* Armed before the control thread exists: whichever walk comes
	 * first maps the buffer, and a mapped buffer is never mapped again. */
	refuse_left = 2;
	cr_assert_eq(letw_init(&cfg), 0);
	cr_assert_eq(letw_tracing_available(), 1, "the probe object did not load");
}

static void teardown(void)
{
	letw_shutdown();
}

TestSuite(passfail, .init = setup, .fini = teardown, .timeout = 60);

/* One request on our own control socket (provider/ctlproto.h). */
static struct letw_ctl_reply ctl(uint16_t type, uint64_t mask)
{
	struct letw_ctl_request req = {
		.magic = LETW_CTL_MAGIC, .version = LETW_CTL_VERSION,
		.type = type, .match_any_keyword = mask, .request_id = 7,
	};
	struct letw_ctl_reply r = { 0 };
	struct sockaddr_un sun;
	socklen_t len = letw_ctl_sockaddr(&sun, (uint64_t)letw_ctl_pidns(0), getpid());
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sun, len), 0, "connect: %s",
		     strerror(errno));
	cr_assert_eq(send(fd, &req, sizeof(req), 0), (ssize_t)sizeof(req));
	cr_assert_eq(recv(fd, &r, sizeof(r), 0), (ssize_t)sizeof(r));
	close(fd);
	cr_assert_eq(r.request_id, 7);
	return r;
}

static void stats(struct letw_stats *s, struct letw_store_stats *ss)
{
	cr_assert_eq(letw_get_stats(s), 0);
	ss->size = sizeof(*ss);
	cr_assert_eq(letw_get_store_stats(ss), 0);
}

Test(passfail, a_walk_that_cannot_map_its_buffer_runs_nothing_and_says_so)
{
	const uint64_t kw = LETW_KW_RUNDOWN_START | LETW_KW_JIT_RUNDOWN;
	struct letw_method m = {
		.method_id = 1, .code_start = 0x10000, .code_size = 0x40,
		.name = "f", .method_namespace = "ns", .signature = "()",
	};
	struct letw_ctl_reply r;
	struct letw_stats s;
	struct letw_store_stats ss;

	cr_assert_eq(letw_method_publish(&m), 0);
	/* Twice refused: asked in-process, then through the socket. */
	cr_expect_eq(letw_capture_state(kw, 1), -ENOMEM,
		     "a pass that could not begin is no pass run");
	r = ctl(LETW_CTL_CAPTURE_STATE, kw);
	cr_expect_eq(r.status, -ENOMEM, "socket reply status %d", r.status);
	cr_expect_eq(r.passes, 0);
	cr_expect_eq(r.last_dcstart_pass_id, 0,
		     "`lttng-etw stop` would take the failed pass for done");
	cr_assert_eq(__atomic_load_n(&refused, __ATOMIC_ACQUIRE), 2,
		     "the walker's buffer was not the mapping refused");
	stats(&s, &ss);
	cr_expect_eq(s.passes, 0, "counted as a pass walked");
	cr_expect_eq(s.rundown_emitted, 0);
	cr_expect_eq(ss.passes_failed, 2);
	cr_expect_eq(ss.last_pass_sections, 0, "the failed walk left figures of a pass");
	cr_expect_eq(errors_logged, 2, "logged: '%s'", logged);
	cr_expect(strstr(logged, "not run") && strstr(logged, strerror(ENOMEM)),
		  "logged: '%s'", logged);

	/* Memory back: the next pass maps the buffer and runs. */
	cr_assert_eq(letw_capture_state(kw, 1), LETW_PASS_DCSTART);
	stats(&s, &ss);
	cr_expect_eq(s.passes, 1);
	cr_expect_eq(ss.passes_failed, 2);
	cr_expect_geq(ss.last_pass_sections, 1, "the table was not walked");
	r = ctl(LETW_CTL_STATUS, 0);
	cr_expect_eq(r.status, 0);
	cr_expect_gt(r.last_dcstart_pass_id, 0);
	cr_expect_eq(errors_logged, 2, "logged: '%s'", logged);
}
