/* SPDX-License-Identifier: MIT */
/*
 * LTTng's packet index files (`index/STREAM.idx` beside each stream file:
 * CTF index 1.0/1.1, big endian, written by the consumer daemon or relayd
 * as each packet is closed). They say what a stream file should hold, so
 * the sinks can tell a stream file that lost packets, or vanished, from
 * one that was read whole (trace_facts.c).
 */
#ifndef LETW_BT_CTF_INDEX_H
#define LETW_BT_CTF_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* What an index says its stream file holds (entries are checked as they
 * are read, not kept). */
struct letw_idx {
	size_t n;               /* packets */
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
