/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "chunkname.h"

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong form, no
 * surrogate, nothing past U+10FFFF), or 0. Hand-written: lttng-etw's own
 * check (provider/record.c) is private to the library, and this host links
 * nothing else that has one. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80 ||
		    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* Appends the clean form of s[0..n) (stopping at a NUL) to
 * out[*at..cap-1), whole sequences only; returns 1 if it all went in. */
static int put_clean(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end && *p) {
		size_t k = utf8_seq(p);

		if (k > (size_t)(end - p))
			k = 0;
		if (*at + (k ? k : 1) >= cap)
			return 0;
		if (k == 1 && (*p < 0x20 || *p == 0x7f))
			k = 0;
		if (k) {
			memcpy(out + *at, p, k);
			*at += k;
			p += k;
		} else {
			out[(*at)++] = '?';
			p++;
		}
	}
	return p >= end || !*p;
}

char *lh_chunk_name(const char *source, int base_only, char *out, size_t cap)
{
	size_t at = 0, n;

	out[0] = '\0';
	if (!source || !*source)
		source = "=?";
	if (source[0] == '=') {
		put_clean(out, cap, &at, source + 1, strlen(source + 1));
	} else if (source[0] == '@') {
		const char *p = source + 1, *slash = strrchr(p, '/');
		char tmp[4096];
		size_t t = 0;

		if (base_only && slash && slash[1])
			p = slash + 1;
		/* Cleaned whole into tmp (a bad byte becomes one '?', so it
		 * never grows), then its tail kept when too long. */
		n = strlen(p);
		if (n >= sizeof(tmp))
			p += n - (sizeof(tmp) - 1);
		put_clean(tmp, sizeof(tmp), &t, p, strlen(p));
		tmp[t] = '\0';
		if (t < cap) {
			memcpy(out, tmp, t);
			at = t;
		} else {
			const char *tail = tmp + t - (cap - 4);

			while ((*(const unsigned char *)tail & 0xc0) == 0x80)
				tail++; /* start on a character */
			memcpy(out, "...", 3);
			at = 3 + strlen(tail);
			memcpy(out + 3, tail, at - 3);
		}
	} else {
		/* A string chunk: its first line, as LuaJIT shows it. */
		size_t first = strcspn(source, "\r\n");
		int whole;

		memcpy(out, "[string \"", 9);
		at = 9;
		whole = put_clean(out, cap - 5, &at, source, first) && !source[first];
		if (!whole) {
			memcpy(out + at, "...", 3);
			at += 3;
		}
		memcpy(out + at, "\"]", 2);
		at += 2;
	}
	out[at] = '\0';
	return out;
}
