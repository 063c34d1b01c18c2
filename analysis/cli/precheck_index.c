/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "precheck_index.h"

static uint64_t ent(const struct letw_pc_index *ix, uint64_t i, enum letw_idx_field f)
{
	return letw_idx_get(&ix->raw, (size_t)i, f);
}

/*
 * The rest of babeltrace2 2.0's own checks of an index
 * (build_index_from_idx_file; letw_idx_load() makes the first ones):
 * packet sizes of whole bytes, offsets not going back, no packet ending
 * before it begins, and the sizes summing to the stream file's. An index
 * failing one is replaced by a walk of the stream file: then nothing here
 * matters.
 */
static int used_by_reader(const struct letw_pc_index *ix, uint64_t file_size)
{
	uint64_t total = 0;

	for (size_t i = 0; i < ix->raw.n; i++) {
		uint64_t ps = ent(ix, i, LETW_IDX_PACKET_SIZE);

		if (ps % 8 ||
		    (i && ent(ix, i, LETW_IDX_OFFSET) < ent(ix, i - 1, LETW_IDX_OFFSET)) ||
		    ent(ix, i, LETW_IDX_TS_END) < ent(ix, i, LETW_IDX_TS_BEGIN))
			return 0;
		total += ps / 8;
	}
	return total == file_size;
}

int letw_pc_index_load(const char *ipath, uint64_t file_size, struct letw_pc_index *ix)
{
	const char *why;
	int r;

	memset(ix, 0, sizeof(*ix));
	ix->path = ipath;
	/* What the reader cannot open or refuses it does without, as
	 * without one (a FIFO there was refused before). */
	r = letw_idx_load(ipath, 0, &ix->raw, &why);
	if (r == -ENOMEM)
		return r;
	if (r || !ix->raw.n || !used_by_reader(ix, file_size))
		letw_idx_raw_fini(&ix->raw);
	return 0;
}

/* Why entry i does not describe packet p, in why; 0 when it does. Not
 * the timestamps: the reader decodes a packet's events from the packet's
 * own (a packet's timestamps shifted in the stream file, its index kept,
 * still reads), and takes from the index only the first one, to order a
 * stream's files (precheck.c's check_identities). */
static int mismatch(const struct letw_pc_index *ix, uint64_t i, const struct letw_pc_packet *p,
		    char *why, size_t len)
{
	uint64_t off = ent(ix, i, LETW_IDX_OFFSET), ps = ent(ix, i, LETW_IDX_PACKET_SIZE) / 8;

	if (off != p->off)
		snprintf(why, len, "its entry %" PRIu64 " places a packet at byte %" PRIu64
			 ", where the file's packet %" PRIu64 " begins at byte %" PRIu64,
			 i, off, i, p->off);
	else if (ps != p->size)
		snprintf(why, len, "its entry %" PRIu64 " lists a packet of %" PRIu64
			 " bytes, where the file's packet %" PRIu64 " (byte %" PRIu64 ") has %" PRIu64,
			 i, ps, i, p->off, p->size);
	else
		return 0;
	return 1;
}

int letw_pc_index_packet(const struct letw_pc_index *ix, const char *spath, uint64_t i,
			 const struct letw_pc_packet *p, uint64_t *idx_cs)
{
	char why[256];

	if (i >= ix->raw.n)
		return 0;
	if (mismatch(ix, i, p, why, sizeof(why))) {
		/* The reader goes by the index: it reads mid-packet, a packet
		 * twice, or skips one. Without the index it walks the file
		 * as these checks just did. */
		letw_err("LTTng's index `%s` does not match its stream file `%s`: %s. babeltrace2 reads the packets where the index says, so the trace cannot be read as it is; if the stream file is intact, move the index file away and the packets are read from the stream file itself",
			 ix->path, spath, why);
		return -1;
	}
	/* content_size is not what the reader goes by (it takes the
	 * packet's own), but the two disagreeing means one was changed
	 * since LTTng wrote both: a packet's content cut short ends the
	 * read inside an event ("Cannot handle state"), index or not. Left
	 * to the caller, which may know better why (another file's index). */
	*idx_cs = ent(ix, i, LETW_IDX_CONTENT_SIZE);
	return *idx_cs != p->cs;
}

int letw_pc_index_end(const struct letw_pc_index *ix, const char *spath, uint64_t n)
{
	if (ix->raw.n <= n)
		return 0;
	/* Entries of no size past the last packet: the sizes still sum to
	 * the file's, so the reader takes the index and seeks there. */
	letw_err("LTTng's index `%s` does not match its stream file `%s`: it lists %zu packets, the file holds %" PRIu64
		 "; if the stream file is intact, move the index file away and the packets are read from the stream file itself",
		 ix->path, spath, ix->raw.n, n);
	return -1;
}

uint64_t letw_pc_index_first_ts(const struct letw_pc_index *ix)
{
	return ent(ix, 0, LETW_IDX_TS_BEGIN);
}

void letw_pc_index_fini(struct letw_pc_index *ix)
{
	letw_idx_raw_fini(&ix->raw);
	ix->path = NULL;
}
