/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsdl.h"

enum tok { T_END, T_IDENT, T_NUM, T_STR, T_PUNCT };

struct lexer {
	const char *p, *end;
	int line;
	/* current token */
	enum tok t;
	const char *s;
	size_t n;
	int tline;
};

static void skip_space(struct lexer *lx)
{
	while (lx->p < lx->end) {
		if (*lx->p == '\n') {
			lx->line++;
			lx->p++;
		} else if (isspace((unsigned char)*lx->p) || *lx->p == '\0') {
			lx->p++; /* NULs: padding of the last metadata packet */
		} else if (lx->p + 1 < lx->end && lx->p[0] == '/' && lx->p[1] == '*') {
			for (lx->p += 2; lx->p + 1 < lx->end && !(lx->p[0] == '*' && lx->p[1] == '/'); lx->p++)
				lx->line += *lx->p == '\n';
			lx->p = lx->p + 2 < lx->end ? lx->p + 2 : lx->end;
		} else if (lx->p + 1 < lx->end && lx->p[0] == '/' && lx->p[1] == '/') {
			while (lx->p < lx->end && *lx->p != '\n')
				lx->p++;
		} else {
			break;
		}
	}
}

static void next(struct lexer *lx)
{
	skip_space(lx);
	lx->s = lx->p;
	lx->tline = lx->line;
	if (lx->p >= lx->end) {
		lx->t = T_END;
		lx->n = 0;
		return;
	}
	if (isalpha((unsigned char)*lx->p) || *lx->p == '_') {
		while (lx->p < lx->end && (isalnum((unsigned char)*lx->p) || *lx->p == '_'))
			lx->p++;
		lx->t = T_IDENT;
	} else if (isdigit((unsigned char)*lx->p)) {
		while (lx->p < lx->end && (isalnum((unsigned char)*lx->p) || *lx->p == '.'))
			lx->p++;
		lx->t = T_NUM;
	} else if (*lx->p == '"' || *lx->p == '\'') {
		char q = *lx->p++;

		while (lx->p < lx->end && *lx->p != q) {
			if (*lx->p == '\\' && lx->p + 1 < lx->end)
				lx->p++;
			lx->line += *lx->p == '\n';
			lx->p++;
		}
		if (lx->p < lx->end)
			lx->p++;
		lx->t = T_STR;
	} else {
		lx->p++;
		lx->t = T_PUNCT;
	}
	lx->n = (size_t)(lx->p - lx->s);
}

static int is(const struct lexer *lx, const char *word)
{
	return lx->n == strlen(word) && memcmp(lx->s, word, lx->n) == 0;
}

enum frame_kind { F_OTHER, F_MEMBERS, F_CLOCK };

#define MAX_DEPTH 64
#define MAX_NAMES 512

struct frame {
	enum frame_kind kind;
	int line;
	/* F_MEMBERS: the names declared so far, and the last identifier of
	 * the current declaration (outside brackets) */
	const char *names[MAX_NAMES];
	size_t lens[MAX_NAMES];
	size_t nnames;
	const char *last;
	size_t lastn;
	int lastline;
	int brackets;
	/* F_CLOCK */
	int has_freq, freq_zero;
};

static int member_end(struct frame *f, char *why, size_t whylen)
{
	size_t i;

	if (f->kind != F_MEMBERS || !f->last)
		goto out;
	for (i = 0; i < f->nnames; i++) {
		if (f->lens[i] == f->lastn && memcmp(f->names[i], f->last, f->lastn) == 0) {
			snprintf(why, whylen,
				 "line %d: the structure or variant declared at line %d names `%.*s` twice",
				 f->lastline, f->line, (int)f->lastn, f->last);
			return 1;
		}
	}
	if (f->nnames < MAX_NAMES) {
		f->names[f->nnames] = f->last;
		f->lens[f->nnames++] = f->lastn;
	}
out:
	f->last = NULL;
	return 0;
}

int letw_tsdl_check(const char *text, size_t len, char *why, size_t whylen)
{
	struct lexer lx = { text, text + len, 1, T_END, NULL, 0, 1 };
	struct frame *st = calloc(MAX_DEPTH, sizeof(*st));
	enum frame_kind pending = F_OTHER;
	int depth = 0, ret = 0; /* st[depth - 1] is the innermost frame */
	int after_freq = 0;

	if (!st)
		return 0; /* cannot check: let the reader decide */
	for (next(&lx); lx.t != T_END && !ret; next(&lx)) {
		struct frame *top = depth ? &st[depth - 1] : NULL;

		if (lx.t == T_IDENT) {
			if (is(&lx, "struct") || is(&lx, "variant"))
				pending = F_MEMBERS;
			else if (is(&lx, "clock") && !top)
				pending = F_CLOCK;
			else if (is(&lx, "enum") || is(&lx, "integer") || is(&lx, "floating_point") ||
				 is(&lx, "string") || is(&lx, "event") || is(&lx, "stream") ||
				 is(&lx, "trace") || is(&lx, "env") || is(&lx, "callsite"))
				pending = F_OTHER;
			if (top && top->kind == F_MEMBERS && !top->brackets) {
				top->last = lx.s;
				top->lastn = lx.n;
				top->lastline = lx.tline;
			}
			if (top && top->kind == F_CLOCK && is(&lx, "freq"))
				after_freq = 1;
			continue;
		}
		if (lx.t == T_NUM && top && top->kind == F_CLOCK && after_freq == 2) {
			top->has_freq = 1;
			top->freq_zero = strtoull(lx.s, NULL, 0) == 0;
			after_freq = 0;
			continue;
		}
		if (lx.t != T_PUNCT)
			continue;
		switch (*lx.s) {
		case '=':
			if (after_freq == 1)
				after_freq = 2;
			break;
		case '[':
			if (top)
				top->brackets++;
			break;
		case ']':
			if (top && top->brackets)
				top->brackets--;
			break;
		case '{':
			if (depth == MAX_DEPTH)
				goto out; /* deeper than LTTng writes: not ours to judge */
			memset(&st[depth], 0, sizeof(st[depth]));
			st[depth].kind = pending;
			st[depth].line = lx.tline;
			depth++;
			pending = F_OTHER;
			break;
		case '}':
			if (!depth)
				goto out; /* unbalanced: the reader reports syntax */
			if (top->kind == F_CLOCK && (!top->has_freq || top->freq_zero)) {
				snprintf(why, whylen, "line %d: the clock declared there has %s",
					 top->line, top->has_freq ? "a frequency of 0 (`freq = 0`)" :
					 "no frequency (`freq`)");
				ret = 1;
			}
			depth--;
			pending = F_OTHER;
			break;
		case ';':
			after_freq = 0;
			pending = F_OTHER;
			if (top)
				ret = member_end(top, why, whylen);
			break;
		default:
			break;
		}
	}
out:
	free(st);
	return ret;
}

/* The text with every run of white space (and comments) as one space. */
static char *normalize(const char *text, size_t len)
{
	struct lexer lx = { text, text + len, 1, T_END, NULL, 0, 1 };
	char *out = malloc(2 * len + 1), *o = out;

	if (!out)
		return NULL;
	for (next(&lx); lx.t != T_END; next(&lx)) {
		if (o != out)
			*o++ = ' ';
		memcpy(o, lx.s, lx.n);
		o += lx.n;
	}
	*o = '\0';
	return out;
}

int letw_tsdl_is_lttng_layout(const char *text, size_t len, int *big_endian)
{
	/* What LTTng-UST 2.x (and the kernel tracer) declare; tokens
	 * separated by one space. */
	static const char *const need[] = {
		"typealias integer { size = 8 ; align = 8 ; signed = false ; } : = uint8_t ;",
		"typealias integer { size = 32 ; align = 8 ; signed = false ; } : = uint32_t ;",
		"typealias integer { size = 64 ; align = 8 ; signed = false ; } : = uint64_t ;",
		"typealias integer { size = 64 ; align = 8 ; signed = false ; } : = unsigned long ;",
		"packet . header : = struct { uint32_t magic ; uint8_t uuid [ 16 ] ; uint32_t stream_id ; uint64_t stream_instance_id ; } ;",
		"struct packet_context { uint64_clock_monotonic_t timestamp_begin ; uint64_clock_monotonic_t timestamp_end ; uint64_t content_size ; uint64_t packet_size ; uint64_t packet_seq_num ; unsigned long events_discarded ; uint32_t cpu_id ; } ;",
		"typealias integer { size = 64 ; align = 8 ; signed = false ; map = clock . monotonic . value ; } : = uint64_clock_monotonic_t ;",
	};
	char *n = normalize(text, len);
	size_t i;
	int ok;

	if (!n)
		return 0;
	ok = 1;
	for (i = 0; ok && i < sizeof(need) / sizeof(need[0]); i++)
		ok = strstr(n, need[i]) != NULL;
	if (ok && strstr(n, "byte_order = le ;"))
		*big_endian = 0;
	else if (ok && strstr(n, "byte_order = be ;"))
		*big_endian = 1;
	else
		ok = 0;
	free(n);
	return ok;
}

int letw_tsdl_declares_stream(const char *text, size_t len)
{
	struct lexer lx = { text, text + len, 1, T_END, NULL, 0, 1 };
	int after_stream = 0;

	/* `stream` followed by `{` opens a stream block and nothing else:
	 * elsewhere the word is followed by `.` (stream.event.header) or
	 * is part of a longer identifier (stream_id). */
	for (next(&lx); lx.t != T_END; next(&lx)) {
		if (after_stream && lx.t == T_PUNCT && *lx.s == '{')
			return 1;
		after_stream = lx.t == T_IDENT && is(&lx, "stream");
	}
	return 0;
}
