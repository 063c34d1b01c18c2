/* SPDX-License-Identifier: MIT */
/*
 * Which clock a trace's times are raw values of: its clock class's name
 * and, when it has one, its uuid (LTTng's `monotonic` has the boot's).
 * Noted by the sinks (sink_common.c) and compared by the CLI before it
 * merges the jitdumps of several chunks: one definition, one compare.
 */
#ifndef LETW_BT_CLOCK_ID_H
#define LETW_BT_CLOCK_ID_H

#include <stdint.h>
#include <string.h>

struct letw_clock_id {
	char name[64]; /* cut to 63 bytes, NUL-terminated */
	uint8_t uuid[16];
	int has_uuid;
};

static inline int letw_clock_id_same(const struct letw_clock_id *a, const struct letw_clock_id *b)
{
	return strcmp(a->name, b->name) == 0 && a->has_uuid == b->has_uuid &&
	       (!a->has_uuid || memcmp(a->uuid, b->uuid, sizeof(a->uuid)) == 0);
}

#endif /* LETW_BT_CLOCK_ID_H */
