/* SPDX-License-Identifier: MIT */
/*
 * letw-test-launch: runs one test (or a whole ctest run) so that nothing it
 * starts outlives it. tests/CMakeLists.txt puts it in front of every
 * add_test command; scripts/test.sh puts it (--run) in front of ctest.
 *
 *   letw-test-launch --name NAME [--timeout S] -- COMMAND [ARG...]
 *   letw-test-launch --run [--timeout S] -- COMMAND [ARG...]
 *
 * How:
 *  - It is a child subreaper (PR_SET_CHILD_SUBREAPER): whatever the test
 *    starts — children, grandchildren, double-forked daemons, a forked
 *    child whose parent died — stays a descendant of this process, so it
 *    can be found by walking /proc's parent links from here. It also
 *    exports a marker unique to this launch (LETW_TEST_ID, or LETW_TEST_RUN
 *    with --run) and the test's name (LETW_TEST_NAME) into the test's
 *    environment: a process that inherits the marker is also ours, and the
 *    name tells whose it is in a report.
 *  - When COMMAND exits (success or failure), any descendant still alive
 *    after a short grace is a leftover: printed as
 *      LEFTOVER: pid P (test NAME): COMMAND LINE
 *    then sent SIGTERM, then SIGKILL, and the launcher exits non-zero even
 *    if COMMAND passed.
 *  - Timeout (S seconds, default $LETW_TEST_TIMEOUT, which the CMake hook
 *    sets from the test's TIMEOUT property): a little before ctest would
 *    act, every descendant gets SIGTERM (so bash traps run and destroy
 *    their LTTng sessions), then after a grace SIGKILL; exit status 124.
 *    ctest itself, on TIMEOUT, only SIGSTOPs and SIGKILLs the tree it finds
 *    under the test's pid (kwsys's kwsysProcessKill): no trap runs, and a
 *    process already re-parented away from that tree survives. With this
 *    launcher the tree is whole (subreaper) and ours acts first.
 *  - SIGTERM/SIGINT/SIGHUP to the launcher: the same teardown, exit 128+sig.
 *
 * Never ours: the root lttng-sessiond named by /var/run/lttng's pid file and
 * its own children (consumerd, run-as). That daemon is shared
 * infrastructure: scripts/deps.sh starts one if none runs, and the
 * sessiond-kill fault test and analysis.watch_sessiond_e2e, which stop
 * it, restart it from inside a test (the restarted
 * daemon is then our descendant and carries our marker). It is left alone
 * on purpose. A sessiond or relayd a test starts for itself (its own
 * LTTNG_HOME / rundir) is not exempt and must be killed by that test.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch_state.h"

#define ROOT_SESSIOND_PIDFILE "/var/run/lttng/lttng-sessiond.pid"
#define MAX_PROCS 65536
/* After COMMAND exits, how long descendants get to go away by themselves
 * (a process the test just signalled may need a moment). */
#define LEFTOVER_GRACE_MS 5000
/* After SIGTERM, how long before SIGKILL: long enough for a test's
 * cleanup to destroy its sessions (~0.5 s each); what it has not done by
 * then, launch_state.c does. */
#define TERM_GRACE_MS 10000

static const char *prog = "letw-test-launch";
static const char *opt_name;
static int opt_run;
static char marker_var[32], marker_val[64];
static char state_dir[4096];

struct proc {
	pid_t pid, ppid;
	char state;
};

static struct proc procs[MAX_PROCS];
static int nprocs;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while ((size_t)total < len - 1 &&
	       (n = read(fd, buf + total, len - 1 - (size_t)total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return total;
}

/* Every process of the machine with its parent (thread-group leaders
 * only: /proc lists no threads at top level). */
static void scan_procs(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	nprocs = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && nprocs < MAX_PROCS) {
		char path[64], buf[512], *p;
		struct proc pr;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pr.pid = (pid_t)atoi(e->d_name);
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pr.pid);
		if (read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		/* "pid (comm) S ppid ...": comm may hold spaces and ')'. */
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 1, " %c %d", &pr.state, &pr.ppid) != 2)
			continue;
		procs[nprocs++] = pr;
	}
	closedir(d);
}

static int find(pid_t pid)
{
	for (int i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return i;
	return -1;
}

/* The shared root lttng-sessiond, or 0. Checked to be what the pid file
 * says, so a stale file never exempts an unrelated process. */
static pid_t root_sessiond(void)
{
	char buf[64], path[64];
	struct stat st;
	pid_t pid;

	if (read_file(ROOT_SESSIOND_PIDFILE, buf, sizeof(buf)) <= 0)
		return 0;
	pid = (pid_t)atoi(buf);
	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_file(path, buf, sizeof(buf)) <= 0 || strcmp(buf, "lttng-sessiond\n"))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) || st.st_uid != 0)
		return 0;
	return pid;
}

static int descends_from(int i, pid_t ancestor)
{
	for (int hops = 0; i >= 0 && hops < MAX_PROCS; hops++) {
		if (procs[i].pid == ancestor)
			return 1;
		if (procs[i].ppid <= 1)
			return 0;
		i = find(procs[i].ppid);
	}
	return 0;
}

/* Does the process's environment hold our marker? */
static int has_marker(pid_t pid)
{
	static char env[1 << 17];
	char path[64], want[128];
	ssize_t n;
	size_t wlen;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	n = read_file(path, env, sizeof(env));
	if (n <= 0)
		return 0;
	wlen = (size_t)snprintf(want, sizeof(want), "%s=%s", marker_var, marker_val);
	for (ssize_t off = 0; off < n; off += (ssize_t)strlen(env + off) + 1)
		if (!strncmp(env + off, want, wlen) && env[off + (ssize_t)wlen] == '\0')
			return 1;
	return 0;
}

/* A 'Z' thread-group leader whose other threads still run (its main
 * called pthread_exit) is alive: /proc/PID/task lists them. */
static int live_zombie_leader(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int others = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while (!others && (e = readdir(d)))
		others = isdigit((unsigned char)e->d_name[0]) && atoi(e->d_name) != pid;
	closedir(d);
	return others;
}

/*
 * The live processes that are ours: our descendants plus anything carrying
 * our marker, minus zombies (already dead; not a leader whose threads live
 * on) and minus the root sessiond's tree. A zombie that is our own child
 * counts until reap() took it: it may have died between the caller's reap
 * and this scan, and a launcher that returned then left it unreaped, to
 * its next subreaper or init (launcher_backstop's `pgrep` found the killed
 * zombie-leader as a zombie after the launcher exited, until the outer
 * launcher reaped it). Returns how many were stored in out.
 */
static int ours(pid_t *out, int max)
{
	pid_t self = getpid(), sessiond;
	int n = 0;

	scan_procs();
	sessiond = root_sessiond();
	for (int i = 0; i < nprocs && n < max; i++) {
		if (procs[i].pid == self || procs[i].state == 'X' ||
		    (procs[i].state == 'Z' && procs[i].ppid != self &&
		     !live_zombie_leader(procs[i].pid)))
			continue;
		if (sessiond && descends_from(i, sessiond))
			continue;
		if (descends_from(i, self) || has_marker(procs[i].pid))
			out[n++] = procs[i].pid;
	}
	return n;
}

/* "pid P (test NAME): argv..." for a report. */
static void describe(pid_t pid, char *out, size_t len)
{
	static char env[1 << 17];
	char path[64], cmd[1024], test[256] = "?";
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_file(path, cmd, sizeof(cmd));
	for (ssize_t i = 0; i < n - 1; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	if (n <= 0) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if (read_file(path, cmd, sizeof(cmd)) <= 0)
			strcpy(cmd, "(gone)");
		cmd[strcspn(cmd, "\n")] = '\0';
	}
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	n = read_file(path, env, sizeof(env));
	for (ssize_t off = 0; off < n; off += (ssize_t)strlen(env + off) + 1)
		if (!strncmp(env + off, "LETW_TEST_NAME=", 15))
			snprintf(test, sizeof(test), "%s", env + off + 15);
	snprintf(out, len, "pid %d (test %s): %s", (int)pid, test, cmd);
}

static void reap(pid_t child, int *child_status, int *child_done)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == child) {
			*child_status = st;
			*child_done = 1;
		}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void signal_all(int sig)
{
	pid_t pids[4096];
	int n = ours(pids, 4096);

	for (int i = 0; i < n; i++)
		kill(pids[i], sig);
}

/* SIGKILL until nothing of ours is left (each round also catches what was
 * forked or re-parented meanwhile). */
static void kill_all(pid_t child, int *status, int *done)
{
	pid_t pids[4096];

	for (int round = 0; round < 200; round++) {
		int n = ours(pids, 4096);

		reap(child, status, done);
		if (!n)
			return;
		for (int i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		sleep_ms(20);
		reap(child, status, done);
	}
	fprintf(stderr, "%s: processes survive SIGKILL (uninterruptible?)\n", prog);
}

/* Wait until nothing of ours is alive, or the deadline. 1 if clean. */
static int wait_gone(long deadline, pid_t child, int *status, int *done)
{
	pid_t pids[1];

	for (;;) {
		reap(child, status, done);
		if (!ours(pids, 1))
			return 1;
		if (now_ms() >= deadline)
			return 0;
		sleep_ms(50);
	}
}

/* Report, SIGTERM, SIGKILL every leftover. Returns how many there were. */
static int clean_leftovers(pid_t child, int *status, int *done)
{
	pid_t pids[4096];
	char desc[1400];
	int n;

	if (wait_gone(now_ms() + LEFTOVER_GRACE_MS, child, status, done))
		return 0;
	/* A child that died since wait_gone's last reap is no leftover. */
	reap(child, status, done);
	n = ours(pids, 4096);
	for (int i = 0; i < n; i++) {
		describe(pids[i], desc, sizeof(desc));
		fprintf(stderr, "LEFTOVER: %s\n", desc);
	}
	if (!n)
		return 0;
	fprintf(stderr, "%s: %s left %d process%s running: killing %s\n", prog,
		opt_run ? "the test run" : opt_name, n, n == 1 ? "" : "es",
		n == 1 ? "it" : "them");
	signal_all(SIGTERM);
	if (!wait_gone(now_ms() + TERM_GRACE_MS, child, status, done))
		kill_all(child, status, done);
	return n;
}

/* Timeout or signal: SIGTERM everything (traps run, sessions get
 * destroyed), wait for the command, then SIGKILL whatever remains. */
static void teardown(pid_t child, int *status, int *done, long grace_ms)
{
	long deadline = now_ms() + grace_ms;

	signal_all(SIGTERM);
	while (!*done && now_ms() < deadline) {
		reap(child, status, done);
		sleep_ms(50);
	}
	/* What the command's trap started (lttng destroy) may finish within
	 * the same grace; the rest is killed. */
	wait_gone(deadline, child, status, done);
	kill_all(child, status, done);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: %s --name NAME [--timeout SECONDS] -- COMMAND [ARG...]\n"
		   "       %s --run [--timeout SECONDS] -- COMMAND [ARG...]\n",
		prog, prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "run", no_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	double timeout = 0;
	long start = now_ms(), term_at = 0, grace = 0;
	sigset_t mask, old;
	int c, status = 0, done = 0, rc, leftovers;
	const char *env;
	pid_t child;

	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'n': opt_name = optarg; break;
		case 'r': opt_run = 1; break;
		case 't': timeout = strtod(optarg, NULL); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc || (!opt_name && !opt_run)) {
		usage(stderr);
		return 2;
	}
	if (!timeout && !opt_run && (env = getenv("LETW_TEST_TIMEOUT")))
		timeout = strtod(env, NULL);
	if (timeout > 0) {
		/* ctest kills at `timeout`: TERM a margin before, KILL half-way. */
		long t = (long)(timeout * 1000), margin = t / 5;

		if (margin > 20000)
			margin = 20000;
		if (margin < 1000)
			margin = t / 2;
		term_at = start + t - margin;
		grace = margin / 2;
	}

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		perror("letw-test-launch: PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	snprintf(marker_var, sizeof(marker_var), "%s", opt_run ? "LETW_TEST_RUN" : "LETW_TEST_ID");
	snprintf(marker_val, sizeof(marker_val), "%d-%ld-%ld", (int)getpid(), (long)time(NULL), start);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &old);

	/* Whoever reads our stderr may be gone (killed with the test: a
	 * process substitution is the launcher's own child); the cleanup
	 * below must still run. The test gets the default back. */
	signal(SIGPIPE, SIG_IGN);
	if ((rc = letw_launch_state_init(state_dir, sizeof(state_dir)))) {
		fprintf(stderr, "%s: cannot make its directory: %s\n", prog, strerror(-rc));
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("letw-test-launch: fork");
		return 1;
	}
	if (child == 0) {
		setenv(marker_var, marker_val, 1);
		setenv("LETW_LAUNCH_STATE", state_dir, 1);
		setenv("TMPDIR", state_dir, 1);
		if (opt_name) {
			/* Nested runs (a test running ctest in a sub-build) name
			 * the outer test too. */
			const char *outer = getenv("LETW_TEST_NAME");
			char full[512];

			snprintf(full, sizeof(full), "%s%s%s", outer ? outer : "",
				 outer ? "/" : "", opt_name);
			setenv("LETW_TEST_NAME", full, 1);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "%s: %s: %s\n", prog, argv[optind], strerror(errno));
		_exit(127);
	}

	rc = -1;
	while (!done) {
		struct timespec ts = { 0, 250 * 1000000L };
		int sig = sigtimedwait(&mask, NULL, &ts);

		reap(child, &status, &done);
		if (done)
			break;
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			fprintf(stderr, "%s: %s: got signal %d: stopping every process it started\n",
				prog, opt_run ? "test run" : opt_name, sig);
			teardown(child, &status, &done, TERM_GRACE_MS);
			rc = 128 + sig;
			break;
		}
		if (term_at && now_ms() >= term_at) {
			fprintf(stderr, "%s: TIMEOUT: %s ran longer than %.0f s (ctest's limit %.0f s): "
				"SIGTERM to every process it started, SIGKILL in %ld s\n",
				prog, opt_run ? "test run" : opt_name,
				(double)(term_at - start) / 1000, timeout, grace / 1000);
			teardown(child, &status, &done, grace);
			rc = 124;
			break;
		}
	}
	leftovers = clean_leftovers(child, &status, &done);
	/* Nothing of the test runs now: what it registered and did not
	 * destroy is a leftover too. */
	leftovers += letw_launch_state_clean(state_dir, opt_run ? "the test run" : opt_name);
	if (rc < 0) {
		if (WIFEXITED(status))
			rc = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			rc = 128 + WTERMSIG(status);
		else
			rc = 1;
		if (leftovers && rc == 0)
			rc = 1;
	}
	if (opt_run)
		fprintf(stderr, "%s: %s\n", prog, leftovers ?
			"FAIL: the test run left processes, sessions or triggers (listed above, now gone)" :
			"no process, session or trigger started by this test run is left");
	return rc;
}
