/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_MUTF8_H
#define LETW_JVM_MUTF8_H

#include <stddef.h>

/*
 * JNI and JVMTI hand out strings in *modified* UTF-8: U+0000 as C0 80 and
 * characters above U+FFFF as two 3-byte surrogates (CESU-8). lttng-etw
 * takes standard UTF-8 only (-EILSEQ otherwise), so every JVM string goes
 * through this first.
 *
 * Converts in into out (cap bytes, cap >= 1, always NUL-terminated):
 * surrogate pairs become 4-byte sequences, C0 80 and anything malformed
 * (lone surrogates, bad continuation bytes, overlong forms) become U+FFFD.
 * Output that does not fit is cut at a character boundary. Returns the
 * output length; *cut (if non-NULL) is set to 1 when output was dropped.
 * No allocation: callable on any JVM callback path.
 */
size_t jvm_mutf8_to_utf8(const char *in, char *out, size_t cap, int *cut);

/* Cut a UTF-8 string in place to at most max bytes at a character
 * boundary; returns the new length. */
size_t jvm_utf8_cut(char *s, size_t len, size_t max);

#endif
