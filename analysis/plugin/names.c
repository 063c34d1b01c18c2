/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "names.h"

const char *letw_tier_name(unsigned int tier)
{
	/* Same order as enum letw_tier in the public header. */
	static const char *const names[] = {
		NULL, "min-opt", "optimized", "quick", "tier1",
		"ready-to-run", "instrumented", "osr",
	};

	return tier < sizeof(names) / sizeof(names[0]) ? names[tier] : NULL;
}

const char *letw_stub_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		"unknown", "precode", "jump", "dispatch", "resolve", "thunk",
		"block",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : NULL;
}

/* A perf map name is one line of text: every control character (C0, DEL
 * and C1) and every byte that is not part of valid UTF-8 becomes '?', in
 * place (never longer). Most names are plain ASCII: checked first. */
static char *sanitize(char *s)
{
	char *in, *out;

	if (!s)
		return NULL;
	for (in = s; *in; in++)
		if ((unsigned char)*in < 0x20 || (unsigned char)*in >= 0x7f)
			break;
	for (out = in; *in;) {
		unsigned char c = (unsigned char)*in;
		gunichar u;
		size_t len;

		if (c < 0x80) {
			*out++ = c < 0x20 || c == 0x7f ? '?' : (char)c;
			in++;
			continue;
		}
		u = g_utf8_get_char_validated(in, -1);
		if (u == (gunichar)-1 || u == (gunichar)-2) {
			*out++ = '?';
			in++;
			continue;
		}
		len = (size_t)(g_utf8_next_char(in) - in);
		if (u <= 0x9f) {
			*out++ = '?';
		} else {
			memmove(out, in, len);
			out += len;
		}
		in += len;
	}
	*out = '\0';
	return s;
}

char *letw_name_method(const char *ns, const char *name, const char *sig,
		       uint32_t method_flags)
{
	const char *tier = letw_tier_name((method_flags >> 7) & 0x7u);
	char *out = NULL;
	int n;

	n = asprintf(&out, "%s%s%s%s%s%s%s", ns && *ns ? ns : "",
		     ns && *ns ? "::" : "", name && *name ? name : "?",
		     sig ? sig : "", tier ? " [" : "", tier ? tier : "",
		     tier ? "]" : "");
	return n < 0 ? NULL : sanitize(out);
}

char *letw_name_stub(uint32_t kind, uint64_t owner, const char *name)
{
	const char *kn = letw_stub_kind_name(kind);
	char kbuf[16];
	char *out = NULL;
	int n;

	if (!kn) {
		snprintf(kbuf, sizeof(kbuf), "%u", kind);
		kn = kbuf;
	}
	n = asprintf(&out, "stub<%s>@0x%llx%s%s", kn, (unsigned long long)owner,
		     name && *name ? " " : "", name && *name ? name : "");
	return n < 0 ? NULL : sanitize(out);
}
