/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_REPLAYSET_H
#define LETW_JVM_REPLAYSET_H

#include <stdint.h>

/*
 * The methods an attach replay (GenerateEvents) published, by code start
 * and jmethodID. At attach the ServiceThread goes on posting events, and
 * an nmethod both report is refused the second time. When the queue's copy
 * comes second, its thread is not the replay's: without this set the
 * refusal was counted as an overlap ("a name was lost") in about 1 attach
 * in 8 (a hostile JVM audit).
 *
 * One writer, the replay thread, appends into memory reserved before the
 * replay (no allocation in a callback); any thread may look up, lock-free,
 * what was appended before it looked (release/acquire on the count). A
 * lookup is a linear scan, paid only by a refused publish. Entries past the
 * reservation (JVM_REPLAYSET_CAP) are not kept: their duplicates are
 * counted as overlaps, as before.
 */
#define JVM_REPLAYSET_CAP (1u << 20)

/* Reserves the memory (mmap, untouched until used); 0 or -errno. Call
 * before the replay, outside any callback. Idempotent. */
int jvm_replayset_init(void);
/* The replay thread, after a successful publish. */
void jvm_replayset_add(uint64_t code_start, uint64_t method_id);
/* 1 when the replay published this method at this start. */
int jvm_replayset_has(uint64_t code_start, uint64_t method_id);
/* Forgets every entry (tests; not concurrent with add/has). */
void jvm_replayset_reset(void);

#endif
