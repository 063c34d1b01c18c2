/* SPDX-License-Identifier: MIT */
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

/* Offset of the first byte of s[0..len) outside printable ASCII
 * (0x20..0x7e), eight bytes at a time: a name is checked once per event
 * (byte by byte this was half the cost of building names). */
static size_t printable_prefix(const char *s, size_t len)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, sizeof(w));
		/* A byte < 0x20 (exact for thresholds up to 0x80), or one
		 * >= 0x7f (0x7f + 1 sets the high bit; larger ones have it). */
		if (((w - 0x20 * ones) & ~w & highs) || ((w | (w + ones)) & highs))
			break;
	}
	for (; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			break;
	return i;
}

/* A perf map name is one line of text: every control character (C0, DEL
 * and C1) and every byte that is not part of valid UTF-8 becomes '?', in
 * place (never longer). Most names are plain ASCII: checked first. */
static char *sanitize(char *s, size_t slen)
{
	char *in, *out;

	if (!s)
		return NULL;
	in = s + printable_prefix(s, slen);
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

/* Concatenate up to 7 parts into b, grown as needed: once per event, so
 * no printf and no allocation once the buffer is big enough (measured:
 * asprintf was ~8% of `lttng-etw report`). */
static const char *join(struct letw_namebuf *b, const char *const *part,
			size_t *len, size_t n)
{
	size_t total = 1, i;
	char *o;

	for (i = 0; i < n; i++) {
		if (!part[i])
			len[i] = 0;
		else if (len[i] == SIZE_MAX)
			len[i] = strlen(part[i]);
		total += len[i];
	}
	if (total > b->cap) {
		size_t ncap = total < 256 ? 256 : 2 * total;
		char *ns = realloc(b->s, ncap);

		if (!ns)
			return NULL;
		b->s = ns;
		b->cap = ncap;
	}
	for (o = b->s, i = 0; i < n; i++) {
		memcpy(o, part[i] ? part[i] : "", len[i]);
		o += len[i];
	}
	*o = '\0';
	return sanitize(b->s, total - 1);
}

/* A method's name as its 7 parts, "ns::name(sig) [tier]" with what is
 * missing left out: the one layout letw_name_method_len() builds and
 * letw_name_method_is() compares against. A len of SIZE_MAX means
 * strlen(), NULL parts count 0. */
static void method_parts(const char *part[7], size_t len[7], const char *ns,
			 size_t ns_len, const char *name, size_t name_len,
			 const char *sig, size_t sig_len, uint32_t method_flags)
{
	const char *tier = letw_tier_name((method_flags >> 7) & 0x7u);
	int has_ns = ns && *ns, has_name = name && *name;

	part[0] = has_ns ? ns : NULL;
	part[1] = has_ns ? "::" : NULL;
	part[2] = has_name ? name : "?";
	part[3] = sig;
	part[4] = tier ? " [" : NULL;
	part[5] = tier;
	part[6] = tier ? "]" : NULL;
	len[0] = ns_len;
	len[1] = 2;
	len[2] = has_name ? name_len : 1;
	len[3] = sig_len;
	len[4] = 2;
	len[5] = SIZE_MAX;
	len[6] = 1;
}

const char *letw_name_method_len(struct letw_namebuf *b, const char *ns, size_t ns_len,
				 const char *name, size_t name_len, const char *sig,
				 size_t sig_len, uint32_t method_flags)
{
	const char *part[7];
	size_t len[7];

	method_parts(part, len, ns, ns_len, name, name_len, sig, sig_len, method_flags);
	return join(b, part, len, 7);
}

/* Match part p (len bytes) at *s and step past it. strncmp, not memcmp:
 * stored may end before len bytes. */
static int part_is(const char **s, const char *p, size_t len)
{
	if (strncmp(*s, p, len) != 0)
		return 0;
	*s += len;
	return 1;
}

int letw_name_method_is(const char *stored, const char *ns, size_t ns_len,
			const char *name, size_t name_len, const char *sig,
			size_t sig_len, uint32_t method_flags)
{
	const char *part[7], *s = stored;
	size_t len[7], i;

	method_parts(part, len, ns, ns_len, name, name_len, sig, sig_len, method_flags);

	for (i = 0; i < 7; i++)
		if (!part[i])
			len[i] = 0;
		else if (len[i] == SIZE_MAX)
			len[i] = strlen(part[i]);
	/* A stored name is sanitize()'s output, which sanitize() leaves as
	 * it is: parts joining into exactly its bytes are its name. */
	for (i = 0; i < 7; i++)
		if (len[i] && !part_is(&s, part[i], len[i]))
			break;
	if (i == 7 && *s == '\0')
		return 1;
	/* Different bytes: a different name, unless sanitize() would
	 * change some of them (then only building the name can tell). */
	for (i = 0; i < 7; i++)
		if (printable_prefix(part[i] ? part[i] : "", len[i]) < len[i])
			return -1;
	return 0;
}

const char *letw_name_method_in(struct letw_namebuf *b, const char *ns,
				const char *name, const char *sig,
				uint32_t method_flags)
{
	return letw_name_method_len(b, ns, SIZE_MAX, name, SIZE_MAX, sig, SIZE_MAX,
				    method_flags);
}

const char *letw_name_stub_in(struct letw_namebuf *b, uint32_t kind,
			      uint64_t owner, const char *name)
{
	const char *kn = letw_stub_kind_name(kind);
	char kbuf[16], obuf[32];
	int has_name = name && *name;
	const char *part[5] = { "stub<", NULL, obuf, has_name ? " " : NULL,
				has_name ? name : NULL };

	if (!kn) {
		snprintf(kbuf, sizeof(kbuf), "%u", kind);
		kn = kbuf;
	}
	size_t len[5] = { 5, SIZE_MAX, SIZE_MAX, 1, SIZE_MAX };

	part[1] = kn;
	snprintf(obuf, sizeof(obuf), ">@0x%llx", (unsigned long long)owner);
	return join(b, part, len, 5);
}

void letw_namebuf_fini(struct letw_namebuf *b)
{
	free(b->s);
	b->s = NULL;
	b->cap = 0;
}

char *letw_name_method(const char *ns, const char *name, const char *sig,
		       uint32_t method_flags)
{
	struct letw_namebuf b = { NULL, 0 };

	/* The buffer is the result: exactly what the caller frees. */
	return (char *)letw_name_method_in(&b, ns, name, sig, method_flags);
}

char *letw_name_stub(uint32_t kind, uint64_t owner, const char *name)
{
	struct letw_namebuf b = { NULL, 0 };

	return (char *)letw_name_stub_in(&b, kind, owner, name);
}
