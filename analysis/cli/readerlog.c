/* SPDX-License-Identifier: MIT */
/* The reader child's stderr, line by line (readerlog.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem, strcasestr */
#endif
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json_out.h"
#include "readerlog.h"

/* "MM-DD HH:MM:SS.mmm PID TID L TAG func@file:line [comp] message":
 * babeltrace2's log line format. Returns the level letter (0 if not a log
 * line) and points *msg at the message, *tag at the tag. */
static char parse_log_line(const char *l, const char **tag, size_t *taglen,
			   const char **msg)
{
	const char *p = l;
	int fields = 0;
	char lvl;

	if (!(isdigit((unsigned char)l[0]) && isdigit((unsigned char)l[1]) && l[2] == '-'))
		return 0;
	/* date, time, pid, tid */
	while (*p && fields < 4) {
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
		fields++;
	}
	if (!*p || !strchr("TDIWEF", *p) || p[1] != ' ')
		return 0;
	lvl = *p;
	p += 2;
	*tag = p;
	while (*p && *p != ' ')
		p++;
	*taglen = (size_t)(p - *tag);
	while (*p == ' ')
		p++;
	/* func@file:line */
	if (strchr(p, '@') && strchr(p, ' ') && strchr(p, '@') < strchr(p, ' ')) {
		p = strchr(p, ' ');
		while (*p == ' ')
			p++;
	}
	if (*p == '[' && strstr(p, "] ")) /* [component] */
		p = strstr(p, "] ") + 2;
	*msg = p;
	return lvl;
}

static void keep_last(struct letw_reader_log *rl, const char *s)
{
	if (rl->nlast == LETW_RLOG_KEEP) {
		memmove(rl->last[0], rl->last[1], sizeof(rl->last[0]) * (LETW_RLOG_KEEP - 1));
		rl->nlast--;
	}
	/* Cut to the slot on purpose: the last words, not all of them. */
	snprintf(rl->last[rl->nlast++], sizeof(rl->last[0]), "%.*s",
		 (int)sizeof(rl->last[0]) - 1, s);
}

void letw_rlog_clear_progress(struct letw_reader_log *rl)
{
	if (rl->progress_shown) {
		fputc('\n', stderr);
		rl->progress_shown = 0;
	}
}

static void on_line(struct letw_reader_log *rl, const char *l)
{
	const char *tag, *msg;
	size_t taglen;
	char lvl = parse_log_line(l, &tag, &taglen, &msg);

	/* A failed allocation as the reader's libraries log it: g_malloc's
	 * "failed to allocate N bytes" before it aborts, babeltrace2's
	 * "Failed to allocate ...", glib's threads' "Unexpected error from C
	 * library during 'malloc': Cannot allocate memory. Aborting.". The
	 * supervisor's own message below says it once (allocwatch.c is what
	 * detects the limit; this only keeps the lines quiet, and stands in
	 * where the allocation watch is compiled out). */
	if (strcasestr(l, "failed to allocate") ||
	    (strstr(l, "Unexpected error from C library during") &&
	     strstr(l, strerror(ENOMEM)))) {
		rl->oom = 1;
		if (!rl->verbose)
			return;
	}

	if (lvl) {
		if ((lvl == 'E' || lvl == 'F') && !rl->root[0]) {
			snprintf(rl->root, sizeof(rl->root), "%s", msg);
			rl->root_is_metadata = memmem(tag, taglen, "META", 4) != NULL;
		}
		if (lvl == 'F')
			keep_last(rl, msg);
		if (!rl->verbose)
			return;
	} else if (strstr(l, "Assertion `")) {
		/* " (╯°□°)╯︵ ┻━┻  msg-iter.c:1111: func(): Assertion `...` failed." */
		const char *loc = l;

		while (*loc && !isalnum((unsigned char)*loc))
			loc++;
		keep_last(rl, loc);
		if (!rl->verbose)
			return;
	} else if (!*l || strstr(l, "precondition not satisfied") ||
		   strncmp(l, "E [", 3) == 0) {
		/* Blank lines around assertions, and our sink's error lines
		 * (log.h), which are error causes too: printed once, below. */
		if (!rl->verbose)
			return;
	}
	letw_rlog_clear_progress(rl);
	letw_text_line(stderr, "", l);
}

void letw_rlog_output(struct letw_reader_log *rl, const char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (buf[i] == '\n' || rl->plen == sizeof(rl->partial) - 1) {
			rl->partial[rl->plen] = '\0';
			on_line(rl, rl->partial);
			rl->plen = 0;
			if (buf[i] == '\n')
				continue;
		}
		rl->partial[rl->plen++] = buf[i];
	}
}
