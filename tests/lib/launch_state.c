/* SPDX-License-Identifier: MIT */
/*
 * The launcher's backstop for what a test killed in its cleanup cannot
 * undo: its LTTng sessions and triggers, and its temporary files.
 *
 * A test's bash cleanup (tests/lib/lttng.sh) destroys its sessions, but
 * destroying one takes ~0.5 s, and a test killed on timeout or Ctrl-C gets
 * a bounded grace before SIGKILL: test_sessions, with 69 sessions, leaked
 * all of them, and the launcher said "nothing left". So each launcher owns
 * a directory, given to the test as TMPDIR: lttng.sh makes LETW_TEST_TMP
 * there and writes each session's and trigger's name into its `sessions`
 * and `triggers` files *before* creating it. Once nothing of the test runs
 * any more, the launcher reads those files (a nested launcher's directory
 * is inside its parent's, so the outer one also finds what a killed inner
 * one left), destroys every listed session sessiond still has, removes
 * every listed trigger, reports each as a leftover, and removes the
 * directory (unmounting what the test mounted there first).
 *
 * The same for processes that are not the test's but that it stopped
 * (faults.sh stops the root sessiond's lttng-consumerd to stall a
 * channel): lttng.sh's letw_stop_process writes "PID STARTTIME" into
 * `stopped` before the SIGSTOP, and whatever listed process is still
 * stopped here gets SIGCONT. Killed before its cleanup resumed it, a test
 * left the consumer stopped, and every later session on the machine
 * stalled.
 *
 * Through liblttng-ctl: all destructions are started, then waited for, so
 * 69 sessions take about as long as one; and no `lttng` client process is
 * started for the launcher to mistake for a leftover.
 */
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "launch_state.h"

/* Deep enough for launcher/launcher/LETW_TEST_TMP/sessions; trace
 * directories below are not walked. */
#define REGISTRY_DEPTH 3
#define DESTROY_WAIT_MS 60000

struct names {
	char **v;
	size_t n, cap;
};

static struct names sessions, triggers, stopped;

static int names_add(struct names *ns, const char *s)
{
	char *copy;

	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], s))
			return 0;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 64;
		char **v = realloc(ns->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ns->v = v;
		ns->cap = cap;
	}
	if (!(copy = strdup(s)))
		return -ENOMEM;
	ns->v[ns->n++] = copy;
	return 0;
}

static int names_has(const struct names *ns, const char *s)
{
	for (size_t i = 0; s && i < ns->n; i++)
		if (!strcmp(ns->v[i], s))
			return 1;
	return 0;
}

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	memset(ns, 0, sizeof(*ns));
}

static void read_names(const char *path, struct names *ns)
{
	FILE *f = fopen(path, "re");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (*line)
			(void)names_add(ns, line);
	}
	fclose(f);
}

static int collect(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	if (type == FTW_D && ftw->level >= REGISTRY_DEPTH)
		return FTW_SKIP_SUBTREE;
	if (type == FTW_F && !strcmp(path + ftw->base, "sessions"))
		read_names(path, &sessions);
	else if (type == FTW_F && !strcmp(path + ftw->base, "triggers"))
		read_names(path, &triggers);
	else if (type == FTW_F && !strcmp(path + ftw->base, "stopped"))
		read_names(path, &stopped);
	return FTW_CONTINUE;
}

int letw_launch_state_init(char *dir, size_t len)
{
	const char *outer = getenv("LETW_LAUNCH_STATE"), *parent = getenv("TMPDIR");
	int nested = outer && *outer;

	/* Nested (a test's launcher under the --run one): inside the outer
	 * launcher's directory, so that it finds what a killed one left. */
	if (nested)
		parent = outer;
	else if (!parent || !*parent)
		parent = "/tmp";
	if ((size_t)snprintf(dir, len, "%s/%s", parent,
			     nested ? "t.XXXXXX" : "letw-launch.XXXXXX") >= len)
		return -ENAMETOOLONG;
	if (!mkdtemp(dir))
		return -errno;
	/* As /tmp: a test may run programs as another user that make their
	 * temporary files under TMPDIR. */
	if (chmod(dir, 01777))
		return -errno;
	return 0;
}

static int destroy_sessions(const char *who)
{
	struct lttng_session *list = NULL;
	struct lttng_destruction_handle **h;
	int n = lttng_list_sessions(&list), left = 0;

	if (n < 0) {
		fprintf(stderr, "letw-test-launch: %s: cannot list sessions to check for leftovers: %s\n",
			who, lttng_strerror(n));
		return n;
	}
	/* Without room for the handles, each leftover is still destroyed
	 * and reported, one at a time (lttng_destroy_session waits). */
	h = calloc((size_t)n + 1, sizeof(*h));
	for (int i = 0; i < n; i++) {
		if (!names_has(&sessions, list[i].name))
			continue;
		fprintf(stderr, "LEFTOVER SESSION: %s (%s): destroying it\n", list[i].name, who);
		left++;
		if (h ? lttng_destroy_session_ext(list[i].name, &h[i]) != LTTNG_OK
		      : lttng_destroy_session(list[i].name) < 0)
			fprintf(stderr, "letw-test-launch: cannot destroy session %s\n", list[i].name);
	}
	for (int i = 0; h && i < n; i++) {
		if (!h[i])
			continue;
		if (lttng_destruction_handle_wait_for_completion(h[i], DESTROY_WAIT_MS) !=
		    LTTNG_DESTRUCTION_HANDLE_STATUS_COMPLETED)
			fprintf(stderr, "letw-test-launch: session %s not destroyed within %d s\n",
				list[i].name, DESTROY_WAIT_MS / 1000);
		lttng_destruction_handle_destroy(h[i]);
	}
	free(h);
	free(list);
	return left;
}

/* After the sessions: sessiond 2.13 crashes at a later rotation of a
 * session whose rotation trigger was removed (tests/lib/lttng.sh). */
static int remove_triggers(const char *who)
{
	struct lttng_triggers *list = NULL;
	unsigned int n = 0;
	int left = 0;

	if (lttng_list_triggers(&list) != LTTNG_OK ||
	    lttng_triggers_get_count(list, &n) != LTTNG_TRIGGER_STATUS_OK) {
		fprintf(stderr, "letw-test-launch: %s: cannot list triggers to check for leftovers\n", who);
		lttng_triggers_destroy(list);
		return -1;
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct lttng_trigger *t = lttng_triggers_get_at_index(list, i);
		const char *name = NULL;

		if (lttng_trigger_get_name(t, &name) != LTTNG_TRIGGER_STATUS_OK ||
		    !names_has(&triggers, name))
			continue;
		fprintf(stderr, "LEFTOVER TRIGGER: %s (%s): removing it\n", name, who);
		left++;
		if (lttng_unregister_trigger(t) < 0)
			fprintf(stderr, "letw-test-launch: cannot remove trigger %s\n", name);
	}
	lttng_triggers_destroy(list);
	return left;
}

/* The state letter and the start time (clock ticks since boot) of pid,
 * from /proc/PID/stat. 0, or -1 when it is gone or unreadable. */
static int proc_state(long pid, char *state, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) state ...": comm may hold spaces and parentheses;
	 * starttime is the 20th field after the state. */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
		   state, start) != 2)
		return -1;
	return 0;
}

/* SIGCONT each listed process (the same one: pid and start time) that is
 * still stopped. Returns how many. */
static int resume_stopped(const char *who)
{
	int left = 0;

	for (size_t i = 0; i < stopped.n; i++) {
		unsigned long long want, start;
		long pid;
		char st;

		if (sscanf(stopped.v[i], "%ld %llu", &pid, &want) != 2 || pid <= 0 ||
		    proc_state(pid, &st, &start) || start != want || st != 'T')
			continue;
		fprintf(stderr, "LEFTOVER STOPPED: pid %ld (%s): resuming it\n",
			pid, who);
		left++;
		if (kill((pid_t)pid, SIGCONT))
			fprintf(stderr, "letw-test-launch: cannot resume pid %ld: %s\n", pid,
				strerror(errno));
	}
	return left;
}

/* What the test mounted under dir (output_safety's tmpfs) goes first, so
 * the removal below neither fails on it nor stops at it. */
static void unmount_under(const char *dir)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t dlen = strlen(dir);
	char line[4096], point[4096];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...": octal escapes in
		 * MOUNTPOINT only for spaces and such, which ours lack. */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1 &&
		    !strncmp(point, dir, dlen) && point[dlen] == '/')
			(void)umount2(point, MNT_DETACH);
	fclose(f);
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (type == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return FTW_CONTINUE;
}

int letw_launch_state_clean(const char *dir, const char *who)
{
	int left = 0, n;

	if (!*dir)
		return 0;
	(void)nftw(dir, collect, 16, FTW_PHYS | FTW_ACTIONRETVAL);
	/* First: a stopped consumer would hold the destructions below. */
	if (stopped.n)
		left += resume_stopped(who);
	if (sessions.n && (n = destroy_sessions(who)) > 0)
		left += n;
	if (triggers.n && (n = remove_triggers(who)) > 0)
		left += n;
	names_free(&sessions);
	names_free(&triggers);
	names_free(&stopped);
	if (getenv("LETW_KEEP_TMP")) {
		fprintf(stderr, "letw-test-launch: %s: kept %s (LETW_KEEP_TMP)\n", who, dir);
		return left;
	}
	unmount_under(dir);
	(void)nftw(dir, remove_one, 16, FTW_PHYS | FTW_DEPTH | FTW_MOUNT | FTW_ACTIONRETVAL);
	return left;
}
