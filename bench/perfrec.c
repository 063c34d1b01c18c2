/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "perfrec.h"

/*
 * perf on given threads (stall.c: the JIT threads and the walker): sched_switch with DWARF call graphs (glibc and
 * the library are built without frame pointers), CLOCK_MONOTONIC stamps
 * so the windows can be matched. Its pid goes to FILE.pid for run.sh's
 * cleanup, should we die before stopping it.
 */
pid_t bench_perf_start(const char *out, const pid_t *tids_in, unsigned n)
{
	char tids[64 * 12] = "", log[600], pidfile[600];
	posix_spawn_file_actions_t fa;
	size_t len = 0;
	pid_t pid;
	FILE *f;

	for (unsigned i = 0; i < n && len < sizeof(tids) - 12; i++)
		len += (size_t)snprintf(tids + len, sizeof(tids) - len, "%s%d",
					i ? "," : "", (int)tids_in[i]);
	char *argv[] = { "perf", "record", "-q", "-e", "sched:sched_switch",
			 "-e", "page-faults", "-c", "1", "--call-graph", "dwarf,16384",
			 "-k", "mono", "-t", tids, "-o", (char *)out, NULL };
	snprintf(log, sizeof(log), "%s.log", out);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, log,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (posix_spawnp(&pid, "perf", &fa, NULL, argv, NULL)) {
		posix_spawn_file_actions_destroy(&fa);
		fprintf(stderr, "bench: cannot run perf\n");
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	snprintf(pidfile, sizeof(pidfile), "%s.pid", out);
	if ((f = fopen(pidfile, "w"))) {
		fprintf(f, "%d\n", (int)pid);
		fclose(f);
	}
	/* perf writes its header once the events are open. */
	for (int i = 0; i < 100; i++) {
		struct stat sb;

		if (!stat(out, &sb) && sb.st_size > 0)
			break;
		bench_sleep_ns(50000000);
	}
	bench_sleep_ns(200000000);
	return pid;
}

int bench_perf_stop(pid_t pid, const char *out)
{
	char pidfile[600];
	int status = 0;

	if (pid <= 0)
		return -1;
	kill(pid, SIGINT);
	waitpid(pid, &status, 0);
	snprintf(pidfile, sizeof(pidfile), "%s.pid", out);
	unlink(pidfile);
	/* perf re-raises the SIGINT it handled once the data is written. */
	return (WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
	       (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) ? 0 : -1;
}
