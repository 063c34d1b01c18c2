/* SPDX-License-Identifier: MIT */
/* What `start`, `stop` and `snapshot` leave when interrupted, and the
 * note a second signal writes (cmd_session.c's top comment). */
#ifndef LETW_CLI_SESSION_LEFT_H
#define LETW_CLI_SESSION_LEFT_H

#include <sys/types.h>

struct session_opts {
	const char *session, *channel;
	pid_t *pids;
	int npids;
	int missing; /* --pid processes that did not answer: exit status 1 */
	double timeout_s;
	double deadline; /* of the whole command, listing included */
};

/* What an interrupted command leaves (see the top comment). */
enum left {
	LEFT_NOTHING,     /* interrupted before the session was touched */
	LEFT_STARTED,     /* start: started, its passes not waited for */
	LEFT_DCEND_ON,    /* stop: DCEnd events enabled, no pass asked for */
	LEFT_DCEND_ASKED, /* stop: DCEnd passes asked for, not waited for */
	LEFT_NO_SNAPSHOT, /* snapshot: statedump regenerated, none recorded */
	LEFT_STOPPED,     /* stop: the work done, interrupted during `lttng stop` */
	LEFT_RECORDED,    /* snapshot: interrupted while recording, recorded */
	LEFT_STOP_FAILED, /* stop: passes waited for, `lttng stop` failed */
	LEFT_RECORD_FAILED, /* snapshot: passes waited for, the record failed */
};

/* Says what the interrupted command cmd leaves (left), and the commands
 * to look and to redo; short_: a process's pass was not done (said
 * before). Returns the exit status, LETW_EXIT_INTERRUPTED. */
int letw_session_interrupted(const char *cmd, const struct session_opts *o, enum left left,
			     int short_);
/* From now on, what a second signal leaves (letw_set_kill_note). */
void letw_session_kill_note(const char *cmd, const struct session_opts *o);

#endif
