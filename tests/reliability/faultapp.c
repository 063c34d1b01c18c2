/* SPDX-License-Identifier: MIT */
/*
 * A runtime for fault-injection tests, driven line by line on stdin by
 * faults.sh (answers on stdout, one line each, flushed):
 *
 *   stats               "stats live=L passes=P tracing=T pending=D"
 *   capture [MASK]      letw_capture_state(MASK, wait) -> "capture R"
 *   capture-async [MASK] same without waiting -> "capture-async R"
 *   check               publish + unpublish a fresh method -> "check ok|FAIL ..."
 *   fork                fork with the fork hooks; the child checks itself and
 *                       exits -> "fork child=PID status=S" (a child still
 *                       running after 60 s is killed: status=hung)
 *   exit-in-pass        start a capture and exit(0) once its pass has begun
 *   quit                stop churning, letw_shutdown -> "quit errors=E", exit
 *
 * The control callback prints "control CODE MASK PROVIDER" on the control
 * thread before each request's pass, so a script can act *during* a pass.
 * --records N pre-publishes N methods (a large N makes passes long);
 * --churn keeps a thread publishing/unpublishing until quit (or for
 * --churn-max operations), counting any API error. Exit status 0 only if no API call failed unexpectedly.
 * --fork-quiesce parks the churn thread around fork() (after a publish or
 * after an unpublish, whichever comes first), as a runtime quiesces its own
 * threads: for allocators that are not fork-safe (GCC 12's ASan takes no
 * allocator lock around fork(), so a child can inherit it held by the
 * churn thread and hang in calloc). Without it the fork lands anywhere in
 * the churn, which is what the plain build tests.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>
#include "ctlproto.h"

static atomic_int stop_churn, pass_begun;
static atomic_int park_req, parked, churn_done;
static int opt_fork_quiesce;
static atomic_uint_fast64_t errors;
static unsigned long opt_records = 1000;
static uint64_t opt_churn_max; /* 0: churn until quit */
static int opt_churn;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static void on_control(int code, int level, uint64_t mask, int provider, void *ctx)
{
	atomic_store(&pass_begun, 1);
	say("control %d %#llx %d", code, (unsigned long long)mask, provider);
}

static int publish_method(uint64_t start, const char *name)
{
	struct letw_method m = { .method_id = start, .code_start = start,
				 .code_size = 0x80, .version_id = 1,
				 .method_flags = LETW_METHOD_JITTED,
				 .method_namespace = "Fault", .name = name,
				 .signature = "()" };

	return letw_method_publish(&m);
}

/* Churn thread: stay here, outside any library or libc call, while a fork
 * is being made (--fork-quiesce). */
static void maybe_park(void)
{
	if (!atomic_load(&park_req))
		return;
	atomic_store(&parked, 1);
	while (atomic_load(&park_req))
		usleep(100);
	atomic_store(&parked, 0);
}

static void *churn_main(void *arg)
{
	uint64_t n = 0;

	while (!atomic_load(&stop_churn) && (!opt_churn_max || n < opt_churn_max)) {
		uint64_t start = 0x500000000000ull + 0x1000ull * (n++ % 512);

		if (publish_method(start, "churn"))
			atomic_fetch_add(&errors, 1);
		maybe_park();
		if (letw_method_unpublish(start))
			atomic_fetch_add(&errors, 1);
		maybe_park();
	}
	atomic_store(&churn_done, 1);
	return NULL;
}

static void park_churn(void)
{
	if (!opt_fork_quiesce || !opt_churn)
		return;
	atomic_store(&park_req, 1);
	while (!atomic_load(&parked) && !atomic_load(&churn_done))
		usleep(100);
}

static void unpark_churn(void)
{
	atomic_store(&park_req, 0);
}

/* Connect to a process's control socket and PING it: 0 or -errno. */
static int ping(pid_t pid)
{
	struct sockaddr_un sun;
	struct letw_ctl_request req = { .magic = LETW_CTL_MAGIC,
					.version = LETW_CTL_VERSION,
					.type = LETW_CTL_PING, .request_id = 7 };
	struct letw_ctl_reply rep;
	struct timeval tv = { 5, 0 };
	int64_t pidns = letw_ctl_pidns(0); /* pid shares our pid namespace */
	socklen_t len;
	int fd, n;

	if (pidns < 0)
		return (int)pidns;
	len = letw_ctl_sockaddr(&sun, (uint64_t)pidns, pid);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, len) ||
	    send(fd, &req, sizeof(req), MSG_NOSIGNAL) != sizeof(req)) {
		n = -errno;
		close(fd);
		return n;
	}
	n = (int)recv(fd, &rep, sizeof(rep), 0);
	close(fd);
	if (n != (int)sizeof(rep) || rep.status || rep.request_id != 7 ||
	    rep.pid != (uint32_t)pid)
		return -EBADMSG;
	return 0;
}

/* The child of `fork`: its inherited table, its own control thread and
 * socket, its own publishes and pass. Returns the exit status. */
static int fork_child(pid_t parent)
{
	struct letw_stats st;
	uint64_t live_at_fork;
	int bad = 0, ret;

	/* If the parent dies (killed by the test on a failure), so do we. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		return 1;
	letw_fork_child();
	/* The parent's churn thread did not survive the fork; whatever it had
	 * published is in our table, whole (never half a record). */
	if (letw_get_stats(&st))
		return 1;
	live_at_fork = st.live_methods + st.live_stubs;
	for (int i = 0; i < 10; i++)
		bad += publish_method(0x600000000000ull + 0x1000ull * (uint64_t)i,
				      "child") != 0;
	if (letw_get_stats(&st) || st.live_methods + st.live_stubs != live_at_fork + 10) {
		fprintf(stderr, "faultapp child: live %llu, want %llu\n",
			(unsigned long long)(st.live_methods + st.live_stubs),
			(unsigned long long)live_at_fork + 10);
		bad++;
	}
	ret = letw_capture_state(LETW_KW_RUNDOWN_START | LETW_KW_JIT_RUNDOWN, 1);
	if (ret < 0) {
		fprintf(stderr, "faultapp child: capture %d\n", ret);
		bad++;
	}
	ret = ping(getpid());
	if (ret) {
		fprintf(stderr, "faultapp child: own control socket: %s\n", strerror(-ret));
		bad++;
	}
	for (int i = 0; i < 10; i++)
		bad += letw_method_unpublish(0x600000000000ull + 0x1000ull * (uint64_t)i) != 0;
	/* Every inherited record is there and removable in the child. */
	for (unsigned long i = 0; i < opt_records; i++)
		bad += letw_method_unpublish(0x400000000000ull + 0x1000ull * i) != 0;
	bad += letw_shutdown() != 0;
	return bad ? 1 : 0;
}

#define FORK_CHILD_TIMEOUT_MS 60000

static void do_fork(void)
{
	pid_t pid, self = getpid();
	int status = -1, waited = 0;

	park_churn();
	letw_fork_prepare();
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(fork_child(self));
	letw_fork_parent();
	unpark_churn();
	if (pid < 0) {
		say("fork FAIL %s", strerror(errno));
		return;
	}
	/* A hung child is a failure to report, not a reason to hang. */
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited >= FORK_CHILD_TIMEOUT_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			atomic_fetch_add(&errors, 1);
			say("fork child=%d status=hung", (int)pid);
			return;
		}
		usleep(10000);
		waited += 10;
	}
	/* The parent's socket still answers after the fork. */
	if (ping(getpid()))
		atomic_fetch_add(&errors, 1);
	say("fork child=%d status=%d", (int)pid, status);
}

static void command(char *line, pthread_t *churner)
{
	char *arg = strchr(line, ' ');
	uint64_t mask = 0;

	if (arg) {
		*arg++ = '\0';
		mask = strtoull(arg, NULL, 0);
	}
	if (!strcmp(line, "stats")) {
		struct letw_stats st;
		int r = letw_get_stats(&st);

		say("stats live=%llu passes=%llu tracing=%d pending=%llu ret=%d",
		    (unsigned long long)(st.live_methods + st.live_stubs),
		    (unsigned long long)st.passes, letw_tracing_available(),
		    (unsigned long long)st.deferred_frees_pending, r);
	} else if (!strcmp(line, "capture")) {
		say("capture %d", letw_capture_state(mask, 1));
	} else if (!strcmp(line, "capture-async")) {
		say("capture-async %d", letw_capture_state(mask, 0));
	} else if (!strcmp(line, "check")) {
		int a = publish_method(0x700000000000ull, "check");
		int b = letw_method_unpublish(0x700000000000ull);

		if (a || b)
			atomic_fetch_add(&errors, 1);
		say(a || b ? "check FAIL %d %d" : "check ok", a, b);
	} else if (!strcmp(line, "fork")) {
		do_fork();
	} else if (!strcmp(line, "exit-in-pass")) {
		atomic_store(&pass_begun, 0);
		letw_capture_state(mask, 0);
		while (!atomic_load(&pass_begun))
			usleep(1000);
		usleep(1000); /* into the walk */
		say("exiting");
		exit(0); /* no letw_shutdown: the process just ends */
	} else if (!strcmp(line, "quit")) {
		int r;

		atomic_store(&stop_churn, 1);
		if (opt_churn)
			pthread_join(*churner, NULL);
		for (unsigned long i = 0; i < opt_records; i++)
			if (letw_method_unpublish(0x400000000000ull + 0x1000ull * i))
				atomic_fetch_add(&errors, 1);
		r = letw_shutdown();
		say("quit errors=%llu shutdown=%d", (unsigned long long)atomic_load(&errors), r);
		exit(atomic_load(&errors) || r ? 1 : 0);
	} else {
		say("unknown command '%s'", line);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, 'r' },
		{ "churn", no_argument, NULL, 'c' },
		{ "churn-max", required_argument, NULL, 'C' },
		{ "fork-quiesce", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	pthread_t churner;
	char line[256];
	int c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': opt_records = strtoul(optarg, NULL, 0); break;
		case 'c': opt_churn = 1; break;
		case 'C': opt_churn_max = strtoull(optarg, NULL, 0); break;
		case 'q': opt_fork_quiesce = 1; break;
		case 'h':
			printf("usage: letw-faultapp [--records N] [--churn [--churn-max OPS]] "
			       "[--fork-quiesce] < commands\n");
			return 0;
		default: return 2;
		}
	}
	ret = letw_init(NULL);
	if (ret) {
		fprintf(stderr, "faultapp: letw_init: %s\n", strerror(-ret));
		return 1;
	}
	letw_set_control_fn(on_control, NULL);
	for (unsigned long i = 0; i < opt_records; i++)
		if (publish_method(0x400000000000ull + 0x1000ull * i, "prefilled"))
			atomic_fetch_add(&errors, 1);
	if (opt_churn && pthread_create(&churner, NULL, churn_main, NULL))
		return 1;
	say("ready %d", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		command(line, &churner);
	}
	/* stdin closed without quit: behave like quit. */
	strcpy(line, "quit");
	command(line, &churner);
	return 0;
}
