/* SPDX-License-Identifier: MIT */
/* `capture-state` and `status`: ask processes using lttng-etw for a rundown
 * or for their rundown state, over their control socket (DESIGN §4). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s capture-state (--pid PID... | --all) [--wait] [--timeout S] [--mask MASK]\n"
		"\n"
		"Ask processes using lttng-etw for a CAPTURE_STATE rundown: every live method,\n"
		"stub and module is emitted again (DCStart/DCEnd as the sessions enabled them).\n"
		"\n"
		"  -p, --pid PID      a process (repeatable)\n"
		"  -a, --all          every process with an lttng-etw control socket\n"
		"  -w, --wait         wait for each pass's Complete and print its figures\n"
		"  -t, --timeout S    give up waiting after S seconds (default 30)\n"
		"  -k, --mask MASK    rundown keyword mask (default: the live mask of the\n"
		"                     sessions, e.g. 0x1000000000058 for DCStart of all kinds)\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 every request accepted (and, with --wait, answered), 1 otherwise,\n"
		"130 interrupted by SIGINT, SIGTERM or SIGHUP: the passes asked for go on in their\n"
		"processes; which processes were not asked, and the command to ask them, is said.\n",
		letw_prog);
}

/* Said when capture-state is interrupted (exit 130): nothing is undone, a
 * pass once asked for runs to its end in its process, into the sessions
 * recording then; the processes not asked yet are named with the command
 * that asks them, as start/stop/snapshot say what they leave. Before,
 * Ctrl-C in a --wait killed it without a word. */
static int capture_interrupted(const pid_t *pids, int npids, int asked, int unwaited,
			       int wait, uint64_t timeout_s, uint64_t mask)
{
	char *again = NULL;
	size_t len;
	FILE *f = asked < npids ? open_memstream(&again, &len) : NULL;
	char unw[64] = "";

	if (f) {
		fprintf(f, "%s capture-state", letw_prog);
		for (int i = asked; i < npids; i++)
			fprintf(f, " --pid %d", (int)pids[i]);
		if (wait)
			fprintf(f, " --wait --timeout %" PRIu64, timeout_s);
		if (mask)
			fprintf(f, " --mask 0x%" PRIx64, mask);
		if (fclose(f) != 0) {
			free(again);
			again = NULL;
		}
	}
	if (unwaited)
		snprintf(unw, sizeof(unw), " (pid %d's pass not waited for)", (int)pids[asked - 1]);
	if (asked < npids)
		letw_err("capture-state: interrupted: %d of %d process(es) asked, their passes go on%s; not asked: %d (`%s` asks them)",
			 asked, npids, unw, npids - asked, again ? again : "capture-state");
	else
		letw_err("capture-state: interrupted: all %d process(es) asked, their passes go on%s",
			 npids, unw);
	free(again);
	return LETW_EXIT_INTERRUPTED;
}

const char *letw_ctl_strerror(int err)
{
	switch (err) {
	case -ECONNREFUSED:
	case -ENOENT:
		return "no lttng-etw control socket (not an lttng-etw process, or it exited)";
	case -ETIMEDOUT:
		return "no reply before the timeout";
	case -EPROTO:
		return "malformed reply (another lttng-etw version?)";
	case -EADDRINUSE:
		return "its control socket's name is held by another process (not lttng-etw's)";
	case -ENOTCONN:
		return "tracing is unavailable in that process (LETW_DISABLE or no lttng-ust)";
	case -EACCES:
	case -EPERM:
		return "permission denied (same user or root only)";
	default:
		return strerror(-err);
	}
}

static const char *passes_name(uint32_t p)
{
	return p == 3 ? "dcstart+dcend" : p == 1 ? "dcstart" : p == 2 ? "dcend" : "none";
}

int letw_cmd_capture_state(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "wait", no_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "mask", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	pid_t *pids = NULL, *np;
	int npids = 0, all = 0, wait = 0, c, i, failed = 0, others = 0, ret;
	uint64_t timeout_s = 30, mask = 0;

	while ((c = getopt_long(argc, argv, "p:awt:k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			np = realloc(pids, (size_t)(npids + 1) * sizeof(*pids));
			if (!np || letw_parse_pid(optarg, &np[npids])) {
				letw_err("capture-state: bad --pid `%s`", optarg);
				free(np ? np : pids);
				return LETW_EXIT_USAGE;
			}
			pids = np;
			npids++;
			break;
		case 'a': all = 1; break;
		case 'w': wait = 1; break;
		case 't':
			if (letw_parse_u64(optarg, &timeout_s) || !timeout_s || timeout_s > 86400) {
				letw_err("capture-state: bad --timeout `%s` (seconds, 1..86400)", optarg);
				free(pids);
				return LETW_EXIT_USAGE;
			}
			break;
		case 'k':
			if (letw_parse_u64(optarg, &mask)) {
				letw_err("capture-state: bad --mask `%s`", optarg);
				free(pids);
				return LETW_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); free(pids); return LETW_EXIT_OK;
		default: usage(stderr); free(pids); return LETW_EXIT_USAGE;
		}
	}
	if (optind != argc || (all == (npids > 0))) {
		if (optind != argc)
			letw_err("capture-state: unexpected argument `%s`", argv[optind]);
		else
			letw_err("capture-state: give either --pid PID or --all");
		usage(stderr);
		free(pids);
		return LETW_EXIT_USAGE;
	}
	letw_catch_interrupts();
	if (all) {
		npids = letw_ctl_list(&pids);
		if (npids < 0) {
			letw_err("cannot list the lttng-etw control sockets: %s", strerror(-npids));
			return LETW_EXIT_ERROR;
		}
		if (!npids)
			letw_note("no process with an lttng-etw control socket");
	}
	for (i = 0; i < npids; i++) {
		struct letw_ctl_reply r;

		ret = letw_ctl_call(pids[i], LETW_CTL_CAPTURE_STATE, mask, wait,
				    (int)timeout_s * 1000, &r);
		/* -EINTR: not sent; -EINPROGRESS: sent, its reply not waited
		 * for. An answer that came is printed first (the next turn
		 * stops). */
		if ((ret == -EINTR || ret == -EINPROGRESS) && letw_interrupted) {
			ret = capture_interrupted(pids, npids, i + (ret == -EINPROGRESS),
						  ret == -EINPROGRESS, wait, timeout_s, mask);
			free(pids);
			return ret;
		}
		if (!ret && wait)
			ret = r.status;
		if (all && letw_ctl_denied(ret)) {
			others++;
			continue;
		}
		if (ret) {
			letw_err("pid %d: %s", (int)pids[i], letw_ctl_strerror(ret));
			failed = 1;
			continue;
		}
		if (!wait)
			printf("pid %d: capture-state requested\n", (int)pids[i]);
		else if (!r.passes)
			printf("pid %d: no rundown event enabled in any started session: no pass\n",
			       (int)pids[i]);
		else
			printf("pid %d: pass %" PRIu64 " (%s): %" PRIu64 " records emitted, %" PRIu64
			       " skipped (raced), mask 0x%" PRIx64 "\n",
			       (int)pids[i], r.pass_id, passes_name(r.passes), r.emitted,
			       r.skipped_raced, r.rundown_mask);
		if (letw_interrupted && i + 1 < npids) {
			ret = capture_interrupted(pids, npids, i + 1, 0, wait, timeout_s, mask);
			free(pids);
			return ret;
		}
	}
	if (others)
		letw_note("capture-state: %d process(es) of other users not asked: %s", others,
			  letw_ctl_strerror(-EACCES));
	free(pids);
	return failed ? LETW_EXIT_ERROR : LETW_EXIT_OK;
}

static void status_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s status [--pid PID... | --all]\n"
		"\n"
		"Print, for each lttng-etw process, the rundown keyword mask its started\n"
		"sessions enable and the ids of its last completed DCStart and DCEnd passes\n"
		"(what `start` and `stop` wait on), whether sessions reach it through the\n"
		"statedump hook or it polls (LETW_STATEDUMP=0), the statedump passes still\n"
		"queued, and whether a session's statedump was served by a capture-state\n"
		"into every session (64 other sessions each waiting for a pass).\n"
		"Default: --all.\n"
		"\n"
		"  -p, --pid PID   a process (repeatable)\n"
		"  -a, --all       every process with an lttng-etw control socket\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 every process listed, 1 some could not be asked, 130\n"
		"interrupted by SIGINT, SIGTERM or SIGHUP (how many were listed is said).\n",
		letw_prog);
}

int letw_cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	pid_t *pids = NULL, *np;
	int npids = 0, all, c, i, failed = 0, others = 0, ret, all_opt = 0;

	while ((c = getopt_long(argc, argv, "p:ah", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			np = realloc(pids, (size_t)(npids + 1) * sizeof(*pids));
			if (!np || letw_parse_pid(optarg, &np[npids])) {
				letw_err("status: bad --pid `%s`", optarg);
				free(np ? np : pids);
				return LETW_EXIT_USAGE;
			}
			pids = np;
			npids++;
			break;
		case 'a': all_opt = 1; break;
		case 'h': status_usage(stdout); free(pids); return LETW_EXIT_OK;
		default: status_usage(stderr); free(pids); return LETW_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		letw_err("status: unexpected argument `%s`", argv[optind]);
		status_usage(stderr);
		free(pids);
		return LETW_EXIT_USAGE;
	}
	if (all_opt && npids) {
		/* As capture-state: which one was meant cannot be guessed
		 * (--all was silently ignored). */
		letw_err("status: give either --pid PID or --all");
		free(pids);
		return LETW_EXIT_USAGE;
	}
	all = !npids;
	letw_catch_interrupts();
	if (all) {
		npids = letw_ctl_list(&pids);
		if (npids < 0) {
			letw_err("cannot list the lttng-etw control sockets: %s", strerror(-npids));
			return LETW_EXIT_ERROR;
		}
		/* An empty answer would look like a hang or a bug. */
		if (!npids)
			letw_note("status: found no process with an lttng-etw control socket");
	}
	for (i = 0; i < npids; i++) {
		struct letw_ctl_reply r;

		ret = letw_ctl_call(pids[i], LETW_CTL_STATUS, 0, 1, 5000, &r);
		/* Interrupted (a stopped process holds each call up to 5 s):
		 * it only asked, so nothing is left but a shorter list, said
		 * so that it is not taken for every process. */
		if ((ret == -EINTR || ret == -EINPROGRESS) && letw_interrupted) {
			letw_err("status: interrupted: %d of %d process(es) asked", i, npids);
			free(pids);
			return LETW_EXIT_INTERRUPTED;
		}
		if (!ret)
			ret = r.status;
		/* Another user's processes are listed too (/proc/net/unix):
		 * counted, not errors, unless named with --pid. */
		if (all && letw_ctl_denied(ret)) {
			others++;
			continue;
		}
		if (ret) {
			letw_err("pid %d: %s", (int)pids[i], letw_ctl_strerror(ret));
			failed = 1;
			continue;
		}
		/* How sessions reach it, and what a session command would
		 * wait for: said, so a slow `start` or a missing pass can be
		 * told apart from a process that polls. */
		printf("pid %d: instance %u, rundown mask 0x%" PRIx64
		       ", last dcstart pass %" PRIu64 ", last dcend pass %" PRIu64,
		       (int)pids[i], r.instance_id, r.rundown_mask,
		       r.last_dcstart_pass_id, r.last_dcend_pass_id);
		/* Before the hook's word, which ends the line of an idle
		 * process (scripts match it there). */
		if (r.passes & LETW_CTL_STATUS_EMITTED)
			printf(" (%" PRIu64 " records, %" PRIu64 " bytes of payload)",
			       r.emitted, r.skipped_raced);
		printf(", %s", (r.passes & LETW_CTL_STATUS_HOOK) ? "statedump hook" : "polls");
		if (r.pending_statedumps)
			printf(", %u statedump pass(es) queued or running", r.pending_statedumps);
		printf("%s\n", (r.passes & LETW_CTL_STATUS_OVERFLOW) ?
		       ", session statedumps served by an all-sessions pass" : "");
	}
	if (others)
		letw_note("status: %d process(es) of other users not listed: %s", others,
			  letw_ctl_strerror(-EACCES));
	free(pids);
	return failed ? LETW_EXIT_ERROR : LETW_EXIT_OK;
}
