/* SPDX-License-Identifier: MIT */
/*
 * What the CLI needs to know about a session, from lttng's machine
 * interface (`lttng --mi xml`, a stable, versioned output meant for tools;
 * liblttng-ctl's headers are not packaged here). The document is flat
 * enough that locating elements by their tags suffices.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Text of the first <name> element in [p, end), malloc()ed. */
static char *first_name(const char *p, const char *end)
{
	const char *b = strstr(p, "<name>"), *e;

	if (!b || b >= end)
		return NULL;
	b += strlen("<name>");
	e = strstr(b, "</name>");
	return e && e <= end ? strndup(b, (size_t)(e - b)) : NULL;
}

char *letw_session_rundown_channel(const char *session)
{
	char *argv[] = { "lttng", "--mi", "xml", "list", (char *)session, NULL };
	char *xml = letw_run_capture(argv), *found = NULL;
	const char *p, *end, *ust;

	if (!xml)
		return NULL;
	/* Only the user-space domain: a kernel channel may share the name. */
	ust = strstr(xml, "<type>UST</type>");
	for (p = ust; p && !found && (p = strstr(p, "<channel>"));) {
		end = strstr(p, "</channel>");
		if (!end)
			break;
		if (memmem(p, (size_t)(end - p), "<event><name>letw_rundown",
			   strlen("<event><name>letw_rundown")))
			found = first_name(p + strlen("<channel>"), end);
		p = end;
	}
	free(xml);
	return found;
}
