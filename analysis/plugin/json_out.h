/* SPDX-License-Identifier: MIT */
/* JSON strings from trace data, which may hold any byte: always valid
 * UTF-8 and strict JSON (RFC 8259). */
#ifndef LETW_BT_JSON_OUT_H
#define LETW_BT_JSON_OUT_H

#include <stdio.h>

/* Write s (NULL: "") as a JSON string: quotes, backslashes and control
 * characters escaped, each byte that is not part of valid UTF-8 written
 * as U+FFFD. */
void letw_json_str(FILE *f, const char *s);

#endif /* LETW_BT_JSON_OUT_H */
