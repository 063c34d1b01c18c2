/* SPDX-License-Identifier: MIT */
/*
 * LTTng's packet index files (`index/STREAM.idx` beside each stream file:
 * CTF index 1.0/1.1, big endian, written by the consumer daemon or relayd
 * as each packet is closed). They say what a stream file should hold, so
 * the sinks can tell a stream file that lost packets, or vanished, from
 * one that was read whole; the CLI's pre-checks use them too.
 */
#ifndef LETW_BT_CTF_INDEX_H
#define LETW_BT_CTF_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct letw_idx_entry {
	uint64_t offset;        /* bytes from the start of the stream file */
	uint64_t packet_size;   /* bits, as in the file */
	uint64_t content_size;  /* bits */
	uint64_t ts_begin, ts_end;
	uint64_t events_discarded;
	uint64_t stream_id;
	uint64_t stream_instance_id, packet_seq_num; /* 1.1 and later */
};

struct letw_idx {
	struct letw_idx_entry *e;
	size_t n;
	uint32_t major, minor;
	int has_seq;            /* minor >= 1: seq numbers present */
	uint64_t bytes;         /* sum of the packet sizes, in bytes */
	uint64_t end;           /* largest offset + packet size, in bytes */
};

/* "DIR/index/BASE.idx" for the stream file DIR/BASE (malloc()ed, or NULL). */
char *letw_idx_path(const char *stream_path);

/* Read an index file. Returns 0, -ENOENT when there is none, -EINVAL with
 * *why when it is not a valid LTTng index (including entries that do not
 * describe packets back to back from the start of the file, in order: a
 * damaged index, not a damaged stream), or another negative errno. */
int letw_idx_read(const char *path, struct letw_idx *idx, const char **why);
void letw_idx_fini(struct letw_idx *idx);

#endif /* LETW_BT_CTF_INDEX_H */
