/* SPDX-License-Identifier: MIT */
/*
 * A stream file's LTTng index (index/NAME.idx) against the packets the
 * pre-checks walk in the file. babeltrace2 2.0 reads a stream file's
 * packets at the offsets its index lists, and orders a stream's files by
 * the index's timestamps, whenever the index passes its own few checks:
 * an index that disagrees with its file then makes it read mid-packet
 * ("Invalid CTF magic number"), a packet twice, or a stream's files out of
 * order, all failures that name only the trace. These checks name the
 * index and its stream file instead. Private to precheck.c.
 */
#ifndef LETW_CLI_PRECHECK_INDEX_H
#define LETW_CLI_PRECHECK_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "ctf_index.h"

struct letw_pc_index {
	const char *path;          /* the index file's path (the caller's) */
	struct letw_idx_raw raw;   /* raw.n == 0: babeltrace2 does not use it */
};

/* What the walk read in a packet's header and context. */
struct letw_pc_packet {
	uint64_t off, size;   /* bytes */
	uint64_t cs;          /* content_size, bits */
};

/* Load the index at ipath (letw_idx_path() of the stream file) when
 * babeltrace2 would use it for a stream file of file_size bytes;
 * ix->raw.n is 0 when it would not (no index, or one it refuses and
 * replaces by a walk of the file). ix keeps ipath. Returns 0 or -ENOMEM. */
int letw_pc_index_load(const char *ipath, uint64_t file_size, struct letw_pc_index *ix);

/* Packet i of the stream file at spath against entry i: 0; -1 after
 * printing which file is damaged and how; 1 when only their content_size
 * differs (the index's in *idx_cs). */
int letw_pc_index_packet(const struct letw_pc_index *ix, const char *spath, uint64_t i,
			 const struct letw_pc_packet *p, uint64_t *idx_cs);

/* After the walk's n packets: 0, or -1 when the index lists more. */
int letw_pc_index_end(const struct letw_pc_index *ix, const char *spath, uint64_t n);

/* Its first packet's timestamp_begin, by which the reader orders a
 * stream's files (ix->raw.n > 0). */
uint64_t letw_pc_index_first_ts(const struct letw_pc_index *ix);

void letw_pc_index_fini(struct letw_pc_index *ix);

#endif /* LETW_CLI_PRECHECK_INDEX_H */
