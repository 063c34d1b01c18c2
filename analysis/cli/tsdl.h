/* SPDX-License-Identifier: MIT */
/*
 * A light scanner of CTF 1.8 metadata text (TSDL), for the pre-checks that
 * refuse what makes babeltrace2 2.0's reader crash rather than fail: a
 * clock without a usable frequency (SIGFPE) and a structure or variant
 * declaring one name twice (an abort in the library). It tokenizes and
 * tracks braces; it is not a TSDL parser, so it only reports what it is
 * sure of and leaves everything else to the reader.
 */
#ifndef LETW_CLI_TSDL_H
#define LETW_CLI_TSDL_H

#include <stddef.h>

/* Returns 0 when nothing is wrong, else 1 with a description (naming the
 * line) in why. */
int letw_tsdl_check(const char *text, size_t len, char *why, size_t whylen);

/* 1 when the text declares LTTng-UST's packet header and context layout
 * (what letw_precheck_stream() decodes), with *big_endian set; else 0. */
int letw_tsdl_is_lttng_layout(const char *text, size_t len, int *big_endian);

/* 1 when the text declares a stream class (a `stream { ... }` block). The
 * metadata of a per-process trace lacks one when the process exited
 * before LTTng described its channel. */
int letw_tsdl_declares_stream(const char *text, size_t len);

#endif /* LETW_CLI_TSDL_H */
