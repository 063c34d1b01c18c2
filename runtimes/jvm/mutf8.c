/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <string.h>

#include "mutf8.h"

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

static int is_cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/* Length of the well-formed modified-UTF-8 unit at p and its code point,
 * or 0 when malformed. Surrogates are decoded as code points; the caller
 * pairs them. */
static size_t decode(const unsigned char *p, uint32_t *cp)
{
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xE0) == 0xC0 && is_cont(p[1])) {
		*cp = ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
		/* C0 80 is modified UTF-8's NUL; other overlong forms are bad. */
		return *cp >= 0x80 || (p[0] == 0xC0 && p[1] == 0x80) ? 2 : 0;
	}
	if ((p[0] & 0xF0) == 0xE0 && is_cont(p[1]) && is_cont(p[2])) {
		*cp = ((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) |
		      (p[2] & 0x3F);
		return *cp >= 0x800 ? 3 : 0;
	}
	/* Standard 4-byte forms do not occur in modified UTF-8, but a valid
	 * one is passed through rather than destroyed. */
	if ((p[0] & 0xF8) == 0xF0 && is_cont(p[1]) && is_cont(p[2]) && is_cont(p[3])) {
		*cp = ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) |
		      ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
		return *cp >= 0x10000 && *cp <= 0x10FFFF ? 4 : 0;
	}
	return 0;
}

static size_t encode(uint32_t cp, char *o)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

size_t jvm_mutf8_to_utf8(const char *in, char *out, size_t cap, int *cut)
{
	const unsigned char *p = (const unsigned char *)(in ? in : "");
	size_t n = 0;

	if (cut)
		*cut = 0;
	if (!cap)
		return 0;
	while (*p) {
		char buf[4];
		size_t ilen, olen;
		uint32_t cp, lo;

		ilen = decode(p, &cp);
		if (!ilen) {
			cp = 0xFFFD;
			ilen = 1;
		} else if (cp == 0) {
			cp = 0xFFFD; /* C0 80: no NUL inside a C string */
		} else if (cp >= 0xD800 && cp <= 0xDBFF && ilen == 3 &&
			   decode(p + 3, &lo) == 3 && lo >= 0xDC00 && lo <= 0xDFFF) {
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			ilen = 6;
		} else if (cp >= 0xD800 && cp <= 0xDFFF) {
			cp = 0xFFFD; /* lone surrogate */
		}
		olen = cp == 0xFFFD ? 3 : encode(cp, buf);
		if (n + olen + 1 > cap) {
			if (cut)
				*cut = 1;
			break;
		}
		memcpy(out + n, cp == 0xFFFD ? replacement : buf, olen);
		n += olen;
		p += ilen;
	}
	out[n] = '\0';
	return n;
}

size_t jvm_utf8_cut(char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	len = max;
	/* Back off continuation bytes: the cut lands before a lead byte. */
	while (len > 0 && is_cont((unsigned char)s[len]))
		len--;
	s[len] = '\0';
	return len;
}
