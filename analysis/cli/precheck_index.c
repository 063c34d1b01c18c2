/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "precheck_index.h"

#define IDX_MAGIC 0xC1F1DCC1u
#define IDX_HDR 16u      /* magic, major, minor, packet_index_len */
#define IDX_1_0 56u      /* the smallest entry babeltrace2 takes */
#define IDX_MAX (256u << 20) /* larger is no index LTTng wrote: not judged */
/* An entry's fields (bytes): offset, packet_size, content_size,
 * timestamp_begin, timestamp_end (then events_discarded, stream_id,
 * and in 1.1 stream_instance_id, packet_seq_num, none of which
 * babeltrace2 2.0 reads a stream file by). */
#define E_OFF 0
#define E_SIZE 8
#define E_CONTENT 16
#define E_TB 24
#define E_TE 32

static uint64_t ent(const struct letw_pc_index *ix, uint64_t i, unsigned field)
{
	uint64_t v;

	memcpy(&v, ix->ents + i * ix->elen + field, sizeof(v));
	return be64toh(v);
}

/*
 * babeltrace2 2.0's own checks of an index (build_index_from_idx_file):
 * the header, entries of at least 1.0's size filling the file, packet
 * sizes of whole bytes, offsets not going back, no packet ending before
 * it begins, and the sizes summing to the stream file's. An index failing
 * one is replaced by a walk of the stream file: then nothing here matters.
 */
static int used_by_reader(const struct letw_pc_index *ix, uint64_t file_size)
{
	uint64_t total = 0;

	for (size_t i = 0; i < ix->n; i++) {
		uint64_t ps = ent(ix, i, E_SIZE);

		if (ps % 8 || (i && ent(ix, i, E_OFF) < ent(ix, i - 1, E_OFF)) ||
		    ent(ix, i, E_TE) < ent(ix, i, E_TB))
			return 0;
		total += ps / 8;
	}
	return total == file_size;
}

int letw_pc_index_load(const char *dir, const char *stream, uint64_t file_size,
		       struct letw_pc_index *ix)
{
	unsigned char hdr[IDX_HDR];
	uint32_t w[4];
	struct stat st;
	size_t len, got = 0;
	ssize_t r;
	int fd;

	memset(ix, 0, sizeof(*ix));
	if (asprintf(&ix->path, "%s/index/%s.idx", dir, stream) < 0) {
		ix->path = NULL;
		return -ENOMEM;
	}
	/* What the reader cannot open it does without, as without one (a
	 * FIFO there was refused before). */
	fd = open(ix->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < IDX_HDR ||
	    (uint64_t)st.st_size > IDX_MAX || pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr))
		goto none;
	memcpy(w, hdr, sizeof(w));
	ix->elen = be32toh(w[3]);
	len = (size_t)st.st_size - IDX_HDR;
	if (be32toh(w[0]) != IDX_MAGIC || be32toh(w[1]) != 1 || ix->elen < IDX_1_0 ||
	    len % ix->elen || !len)
		goto none;
	if (!(ix->ents = malloc(len))) {
		close(fd);
		return -ENOMEM;
	}
	while (got < len && (r = pread(fd, ix->ents + got, len - got, (off_t)(IDX_HDR + got))) > 0)
		got += (size_t)r;
	ix->n = len / ix->elen;
	if (got == len && used_by_reader(ix, file_size)) {
		close(fd);
		return 0;
	}
none:
	close(fd);
	free(ix->ents);
	ix->ents = NULL;
	ix->n = 0;
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
	uint64_t off = ent(ix, i, E_OFF), ps = ent(ix, i, E_SIZE) / 8;

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

	if (i >= ix->n)
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
	*idx_cs = ent(ix, i, E_CONTENT);
	return *idx_cs != p->cs;
}

int letw_pc_index_end(const struct letw_pc_index *ix, const char *spath, uint64_t n)
{
	if (ix->n <= n)
		return 0;
	/* Entries of no size past the last packet: the sizes still sum to
	 * the file's, so the reader takes the index and seeks there. */
	letw_err("LTTng's index `%s` does not match its stream file `%s`: it lists %zu packets, the file holds %" PRIu64
		 "; if the stream file is intact, move the index file away and the packets are read from the stream file itself",
		 ix->path, spath, ix->n, n);
	return -1;
}

uint64_t letw_pc_index_first_ts(const struct letw_pc_index *ix)
{
	return ent(ix, 0, E_TB);
}

void letw_pc_index_fini(struct letw_pc_index *ix)
{
	free(ix->path);
	free(ix->ents);
	memset(ix, 0, sizeof(*ix));
}
