/* SPDX-License-Identifier: MIT */
/* What an interrupted session command leaves, said (session_left.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "session_left.h"

/* The command to run again, to be pasted: the session and channel names
 * as shell words (a name with a blank or a quote, printed bare, ran
 * another command), with the user's --pid and --channel (a rerun without
 * the --pid waits for every lttng-etw process, or none answers for a
 * session that tracks only those). malloc()ed; NULL when out of memory. */
static char *rerun_command(const char *cmd, const struct session_opts *o)
{
	char *again = NULL, *qs = letw_shell_quote(o->session);
	char *qc = o->channel ? letw_shell_quote(o->channel) : NULL;
	size_t len;
	FILE *f = open_memstream(&again, &len);

	if (f && qs && (!o->channel || qc)) {
		fprintf(f, "%s %s %s", letw_prog, cmd, qs);
		for (int i = 0; i < o->npids; i++)
			fprintf(f, " --pid %d", (int)o->pids[i]);
		if (o->channel)
			fprintf(f, " --channel %s", qc);
	}
	if (f && fclose(f) != 0) {
		free(again);
		again = NULL;
	}
	if (again && !*again) {
		free(again);
		again = NULL;
	}
	free(qs);
	free(qc);
	return again;
}

/* Say in one line what the command leaves and how to go on; the exit
 * status. short_: a process's pass was not done (said above), for the
 * cases where the work was otherwise done. */
int letw_session_interrupted(const char *cmd, const struct session_opts *o, enum left left,
			     int short_)
{
	char *again = rerun_command(cmd, o);
	char *qs = letw_shell_quote(o->session);
	const char *a, *s = qs ? qs : o->session;

	a = again ? again : cmd; /* out of memory: the command's name alone */
	switch (left) {
	case LEFT_NOTHING:
		letw_err("%s: interrupted: nothing changed in session `%s`", cmd, o->session);
		break;
	case LEFT_STARTED:
		letw_err("start: interrupted: session `%s` left started, its DCStart passes not waited for (`lttng-etw status` shows them); to redo it: `lttng stop %s`, then `%s`",
			 o->session, s, a);
		break;
	case LEFT_DCEND_ON:
	case LEFT_DCEND_ASKED:
		letw_err("stop: interrupted: session `%s` left active with DCEnd events enabled, %s; run `%s` again, or `lttng stop %s`",
			 o->session, left == LEFT_DCEND_ON ? "no DCEnd pass asked for"
			 : "its DCEnd passes not waited for", a, s);
		break;
	case LEFT_NO_SNAPSHOT:
		letw_err("snapshot: interrupted: no snapshot of `%s` recorded (its statedump regenerated, the passes not waited for); run `%s` again",
			 o->session, a);
		break;
	/* The signal came during the last call, which liblttng-ctl does
	 * not cut short: the work is done, but the user interrupted, and a
	 * script reads 130 as the other commands' "interrupted" (exit 0
	 * told it nothing had happened). */
	case LEFT_STOPPED:
		if (short_)
			letw_err("stop: interrupted after session `%s` was stopped, but not every process's DCEnd pass was done (said above)",
				 o->session);
		else
			letw_err("stop: interrupted after session `%s` was stopped (its DCEnd passes done): nothing left to do",
				 o->session);
		break;
	case LEFT_RECORDED:
		letw_err("snapshot: interrupted after the snapshot of `%s` was recorded%s",
			 o->session, short_ ? ", but not every process's pass was done (said above)"
			 : ": nothing left to do");
		break;
	/* The last call failed (said above) and the signal came meanwhile:
	 * the passes were waited for. */
	case LEFT_STOP_FAILED:
		letw_err("stop: interrupted: session `%s` not stopped (`lttng stop` failed), its DCEnd passes waited for; run `lttng stop %s`",
			 o->session, s);
		break;
	case LEFT_RECORD_FAILED:
		letw_err("snapshot: interrupted: no snapshot of `%s` recorded (the record failed), its passes waited for; run `%s` again",
			 o->session, a);
		break;
	}
	free(again);
	free(qs);
	return LETW_EXIT_INTERRUPTED;
}

/* From now on, what a second signal leaves (letw_set_kill_note): the
 * session may be started (start) or still active with the DCEnd events on
 * (stop), since the call in progress may or may not have been done; a
 * snapshot may be missing. Said with the commands to look and to clean
 * up, the session as a shell word, snapshot's rerun with the user's --pid
 * (rerun_command()). */
void letw_session_kill_note(const char *cmd, const struct session_opts *o)
{
	char *again = strcmp(cmd, "snapshot") ? NULL : rerun_command(cmd, o);
	char *q = letw_shell_quote(o->session);
	const char *s = q ? q : o->session;

	if (!strcmp(cmd, "start"))
		letw_set_kill_note("start: killed by a second signal: session `%s` may be started, its DCStart passes not waited for (`lttng list %s` says); to undo: `lttng stop %s`",
				   o->session, s, s);
	else if (!strcmp(cmd, "stop"))
		letw_set_kill_note("stop: killed by a second signal: session `%s` may still be active, with DCEnd events enabled (`lttng list %s` says); to stop it: `lttng stop %s`",
				   o->session, s, s);
	else if (!again ||
		 letw_set_kill_note("snapshot: killed by a second signal: the snapshot of `%s` may be missing or cut (its statedump may have been regenerated); run `%s` again",
				    o->session, again) == -ENAMETOOLONG)
		/* Cut by the note's fixed buffer (main.c: filled before the
		 * signal, written by the handler): a cut command would wait
		 * for other processes than the user's. */
		letw_set_kill_note("snapshot: killed by a second signal: the snapshot of `%s` may be missing or cut (its statedump may have been regenerated); run `%s snapshot %s` again%s",
				   o->session, letw_prog, s,
				   o->npids ? ", with the same --pid arguments" : "");
	free(again);
	free(q);
}
