/* SPDX-License-Identifier: MIT */
/* The reader child's stderr as the supervisor (supervise.c) reads it:
 * babeltrace2's log lines kept for the error message (the first
 * error-level one is the root cause, fatal ones and assertions the last
 * words of a crash), the rest passed through when verbose. Parent side
 * only, one thread. */
#ifndef LETW_CLI_READERLOG_H
#define LETW_CLI_READERLOG_H

#include <stddef.h>

#define LETW_RLOG_KEEP 8

/* What the parent keeps of the reader's stderr. */
struct letw_reader_log {
	char root[512];               /* first error-level log line, stripped */
	int root_is_metadata;
	char last[LETW_RLOG_KEEP][512];   /* last fatal/assertion lines */
	int nlast;
	char partial[4096];           /* a line not ended yet */
	size_t plen;
	int verbose;
	int progress_shown;           /* a "\r..." line is on the terminal */
	int oom;                      /* the reader logged a failed allocation */
};

/* n more bytes of the child's stderr; whole lines are judged. */
void letw_rlog_output(struct letw_reader_log *rl, const char *buf, size_t n);

/* Ends the "\r..." progress line on the terminal, if one is shown, before
 * anything else is printed. */
void letw_rlog_clear_progress(struct letw_reader_log *rl);

#endif
