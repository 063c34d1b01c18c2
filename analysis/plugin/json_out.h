/* SPDX-License-Identifier: MIT */
/* Strings from trace data, which may hold any byte: JSON always valid
 * UTF-8 and strict (RFC 8259); text without control characters. */
#ifndef LETW_BT_JSON_OUT_H
#define LETW_BT_JSON_OUT_H

#include <stdio.h>

/* Write s (NULL: "") as a JSON string: quotes, backslashes and control
 * characters escaped, each byte that is not part of valid UTF-8 written
 * as U+FFFD. */
void letw_json_str(FILE *f, const char *s);

/* Write s (NULL: "") as one line of text: each control character (but
 * tab) as \xNN, so that a name from a trace (a file name, a method name)
 * neither splits a line nor sends escape sequences to a terminal. */
void letw_text_str(FILE *f, const char *s);

/* s (NULL: "") as letw_text_str() writes it, in a new string (free()
 * it), or NULL without memory: for a line of several parts written with
 * one fprintf(). stderr is unbuffered, and a line written in pieces (an
 * fputc per byte: a write(2) each) can interleave with another process's
 * in a shared terminal or log. */
char *letw_text_dup(const char *s);

/* prefix (as it is), s as letw_text_str() writes it, and a newline, in
 * one write to f (letw_text_dup). */
void letw_text_line(FILE *f, const char *prefix, const char *s);

#endif /* LETW_BT_JSON_OUT_H */
