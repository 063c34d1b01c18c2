/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "mutf8.h"
#include "naming.h"

/* A bounded writer: appends until full, then remembers it was cut. */
struct sbuf {
	char *out;
	size_t cap, len;
	int cut;
};

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	if (b->cut)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t room = b->cap - 1 - b->len;

		/* s[room] is the first byte left out: if it continues a
		 * character, that character goes too. */
		while (room > 0 && ((unsigned char)s[room] & 0xC0) == 0x80)
			room--;
		n = room;
		b->cut = 1;
	}
	memcpy(b->out + b->len, s, n);
	b->len += n;
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static size_t sb_end(struct sbuf *b)
{
	b->out[b->len] = '\0';
	return b->len;
}

/* Write a binary class name ("com/example/Foo", n bytes) in a style, one
 * path segment at a time (so a cut never splits a character). A hidden
 * class's name has a '.' before its suffix (JVMS 4.2.1: "Foo$$Lambda$14.0x0800");
 * Class.getName() shows it as '/', and so does the dotted style. */
static void put_class(struct sbuf *b, const char *name, size_t n, int dotted, int simple)
{
	size_t i, seg = 0;

	if (simple) {
		for (i = 0; i < n; i++)
			if (name[i] == '/')
				seg = i + 1;
	}
	for (i = seg; i <= n; i++) {
		if (i < n && name[i] != '/' && name[i] != '.')
			continue;
		sb_putn(b, name + seg, i - seg);
		if (i < n && dotted)
			sb_putn(b, name[i] == '/' ? "." : "/", 1);
		else if (i < n)
			sb_putn(b, name + i, 1);
		seg = i + 1;
	}
}

size_t jvm_class_sig_to_utf8(const char *mutf8_sig, char *out, size_t cap)
{
	size_t n;
	int cut = 0;

	if (cap < 3)
		return jvm_mutf8_to_utf8(mutf8_sig, out, cap, NULL);
	n = jvm_mutf8_to_utf8(mutf8_sig, out, cap - 1, &cut);
	if (cut && out[0] == 'L' && n >= 2) {
		out[n++] = ';';
		out[n] = '\0';
	}
	return n;
}

size_t jvm_name_class(const char *sig, enum jvm_ns_style style, char *out, size_t cap)
{
	struct sbuf b = { out, cap, 0, 0 };
	size_t n;

	if (!cap)
		return 0;
	sig = sig ? sig : "";
	n = strlen(sig);
	if (style == JVM_NS_JVM || n < 2 || sig[0] != 'L' || sig[n - 1] != ';') {
		/* Arrays and primitives have no methods; anything unexpected
		 * is kept as the JVM wrote it. */
		sb_putn(&b, sig, n);
		return sb_end(&b);
	}
	put_class(&b, sig + 1, n - 2, 1, style == JVM_NS_SIMPLE);
	return sb_end(&b);
}

static const char *prim_name(char c)
{
	switch (c) {
	case 'Z': return "boolean";
	case 'B': return "byte";
	case 'C': return "char";
	case 'S': return "short";
	case 'I': return "int";
	case 'J': return "long";
	case 'F': return "float";
	case 'D': return "double";
	case 'V': return "void";
	default: return NULL;
	}
}

/* Parse one field type at *p into b; returns 0, or -1 on a malformed
 * descriptor. */
static int put_type(struct sbuf *b, const char **p, int simple)
{
	unsigned int dims = 0;
	const char *prim;

	while (**p == '[') {
		dims++;
		(*p)++;
	}
	if (**p == 'L') {
		const char *end = strchr(*p, ';');

		if (!end || end == *p + 1)
			return -1;
		put_class(b, *p + 1, (size_t)(end - *p - 1), 1, simple);
		*p = end + 1;
	} else if ((prim = prim_name(**p)) != NULL && (**p != 'V' || !dims)) {
		sb_puts(b, prim);
		(*p)++;
	} else {
		return -1;
	}
	while (dims--)
		sb_puts(b, "[]");
	return 0;
}

size_t jvm_name_signature(const char *desc, enum jvm_sig_style style, char *out, size_t cap)
{
	struct sbuf b = { out, cap, 0, 0 };
	const char *p;
	int first = 1;

	if (!cap)
		return 0;
	desc = desc ? desc : "";
	if (style == JVM_SIG_NONE)
		return sb_end(&b);
	if (style == JVM_SIG_DESCRIPTOR || desc[0] != '(')
		goto raw;
	p = desc + 1;
	sb_puts(&b, "(");
	while (*p && *p != ')') {
		if (!first)
			sb_puts(&b, ", ");
		first = 0;
		if (put_type(&b, &p, style == JVM_SIG_SIMPLE) < 0)
			goto raw;
	}
	if (*p != ')')
		goto raw;
	sb_puts(&b, ")");
	return sb_end(&b);
raw:
	b.len = 0;
	b.cut = 0;
	sb_puts(&b, desc);
	return sb_end(&b);
}

size_t jvm_source_path(const char *sig, const char *source_file, char *out, size_t cap)
{
	struct sbuf b = { out, cap, 0, 0 };
	size_t n, i, pkg = 0;

	if (!cap)
		return 0;
	if (!source_file || !*source_file)
		return sb_end(&b);
	sig = sig ? sig : "";
	n = strlen(sig);
	if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
		for (i = 1; i < n - 1; i++)
			if (sig[i] == '/')
				pkg = i; /* the last '/' ends the package */
		if (pkg)
			sb_putn(&b, sig + 1, pkg); /* "com/example/" */
	}
	sb_puts(&b, source_file);
	return sb_end(&b);
}

int jvm_is_mh_intrinsic(const char *class_sig, int npcs, int native)
{
	if (!class_sig || strcmp(class_sig, "Ljava/lang/invoke/MethodHandle;"))
		return 0;
	return npcs < 0 ? native : npcs == 0;
}
