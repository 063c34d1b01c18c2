/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "json_out.h"

static void escaped(FILE *f, const char *s, const char *end)
{
	for (; s < end; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

void letw_json_str(FILE *f, const char *s)
{
	const char *bad;

	fputc('"', f);
	while (s && *s) {
		/* glib's validator: no overlong forms, no surrogates, nothing
		 * past U+10FFFF — what strict parsers reject. */
		if (g_utf8_validate(s, -1, &bad)) {
			escaped(f, s, s + strlen(s));
			break;
		}
		escaped(f, s, bad);
		fputs("\\ufffd", f);
		s = bad + 1;
	}
	fputc('"', f);
}

void letw_text_str(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

char *letw_text_dup(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	if (!m)
		return NULL;
	letw_text_str(m, s);
	if (fclose(m) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

void letw_text_line(FILE *f, const char *prefix, const char *s)
{
	char *t = letw_text_dup(s);

	/* One fprintf() is one write(2) on an unbuffered stream (glibc
	 * formats it into a buffer of its own first). */
	if (t) {
		fprintf(f, "%s%s\n", prefix, t);
		free(t);
		return;
	}
	/* No memory for the line: the same bytes, piece by piece. */
	fputs(prefix, f);
	letw_text_str(f, s);
	fputc('\n', f);
}
