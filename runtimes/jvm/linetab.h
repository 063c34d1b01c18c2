/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_LINETAB_H
#define LETW_JVM_LINETAB_H

#include <stdint.h>

#include <jvmti.h>

/*
 * A method's JVMTI line-number table (GetLineNumberTable: JVMTI-allocated,
 * the caller's until Deallocate) made searchable: sorted once in place by
 * start_location, then each frame's bci is a binary search instead of a
 * scan (an inlining tree asks one table once per PcDesc). JVMTI does not
 * promise the table sorted, nor distinct starts. Pure, no allocation.
 */

/* Sorts by (start_location, line_number): entries sharing a start end up
 * in one order whatever order JVMTI gave. */
void jvm_linetab_sort(jvmtiLineNumberEntry *tab, jint n);

/* On a sorted table: the line of the entry with the greatest start <= bci
 * (the first of equal starts), or fallback when bci < 0 (HotSpot's
 * synchronization and method-entry scopes) or before every entry. */
uint32_t jvm_linetab_line(const jvmtiLineNumberEntry *tab, jint n, jint bci, uint32_t fallback);

#endif
