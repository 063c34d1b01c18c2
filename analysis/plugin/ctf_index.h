/* SPDX-License-Identifier: MIT */
/*
 * LTTng's packet index files (`index/STREAM.idx` beside each stream file:
 * CTF index 1.0/1.1, big endian, written by the consumer daemon or relayd
 * as each packet is closed). They say what a stream file should hold, so
 * the sinks can tell a stream file that lost packets, or vanished, from
 * one that was read whole (trace_facts.c).
 *
 * Also the context of a stream file's first packet, which babeltrace2
 * keeps from its sinks (its packet context holds cpu_id only) and reports
 * no gap for: whether packets were lost before the first one kept.
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
	size_t entry_len;       /* bytes per entry: 72 and up is CTF index 1.1
				   (LTTng 2.8 and later) */
};

/* "DIR/index/BASE.idx" for the stream file DIR/BASE (malloc()ed, or NULL). */
char *letw_idx_path(const char *stream_path);

/* Read an index file. Returns 0, -ENOENT when there is none, -EINVAL with
 * *why when it is not a valid LTTng index (including entries that do not
 * describe packets back to back from the start of the file, in order: a
 * damaged index, not a damaged stream), or another negative errno. */
int letw_idx_read(const char *path, struct letw_idx *idx, const char **why);
void letw_idx_fini(struct letw_idx *idx);

/* An index file's entries as they are on disk, after only the checks
 * babeltrace2 2.0 itself makes before it reads a stream file by them
 * (magic, major version 1, entries of at least CTF index 1.0's size that
 * fill the file), for the pre-checks, which must judge an index as the
 * reader will use it; letw_idx_read() judges it as LTTng writes it. */
struct letw_idx_raw {
	unsigned char *ents;    /* n entries of elen bytes, big endian */
	size_t n, elen;
};

/* An entry's fields babeltrace2 2.0 reads a stream file by (then come
 * events_discarded, stream_id and, in 1.1, stream_instance_id and
 * packet_seq_num). */
enum letw_idx_field {
	LETW_IDX_OFFSET,        /* bytes */
	LETW_IDX_PACKET_SIZE,   /* bits */
	LETW_IDX_CONTENT_SIZE,  /* bits */
	LETW_IDX_TS_BEGIN,
	LETW_IDX_TS_END,
};

/* flags: LETW_IDX_AS_WRITTEN also refuses entry sizes LTTng never writes
 * (over 4096 bytes, or not whole 64-bit fields), before anything is read.
 * Either way an index over 256 MiB is refused ("implausibly large"), not
 * read. Returns 0 (n may be 0), -ENOENT, -EINVAL with *why, or another
 * negative errno; *raw is empty on failure. */
#define LETW_IDX_AS_WRITTEN 0x1u
int letw_idx_load(const char *path, unsigned flags, struct letw_idx_raw *raw,
		  const char **why);
uint64_t letw_idx_get(const struct letw_idx_raw *raw, size_t i, enum letw_idx_field f);
void letw_idx_raw_fini(struct letw_idx_raw *raw);

/* The first packet of an LTTng stream file (2.8 and later, UST and kernel:
 * packet header magic, uuid, stream_id, stream_instance_id, then the
 * context timestamp_begin, timestamp_end, content_size, packet_size,
 * packet_seq_num, events_discarded, cpu_id). */
struct letw_first_packet {
	uint64_t stream_id, instance_id; /* the stream the reader makes it
					    part of */
	uint64_t ts_begin;  /* raw clock value */
	uint64_t seq;       /* packet_seq_num: packets before it were lost */
	uint64_t discarded; /* events_discarded: the channel's count so far */
};

/* Read it (long_bits: the width of `unsigned long`, events_discarded's
 * type: the trace's architecture_bit_width). Returns 0, -EINVAL when the
 * file does not start with such a packet, or another negative errno. The
 * caller checks ts_begin against the reader's first packet: only then is
 * the layout known to be this one. */
int letw_ctf_first_packet(const char *path, unsigned long_bits,
			  struct letw_first_packet *fp);

/* One packet's header and context, in the layout above, read at a byte
 * offset of a stream file: the one reading both the report's packet walk
 * (below) and the CLI's pre-check (which says what is wrong where). */
struct letw_ctf_packet {
	uint32_t stream_id;
	uint64_t instance_id, ts_begin, ts_end;
	uint64_t content_bits, packet_bits, seq;
	uint64_t discarded;     /* read as 64 bits (see letw_ctf_walk) */
	size_t got;             /* bytes read, for LETW_PKT_SHORT */
};

enum letw_ctf_packet_status {
	LETW_PKT_OK,
	LETW_PKT_SHORT,    /* the file ends inside the header and context */
	LETW_PKT_MAGIC,    /* no CTF magic number (in byte order *be) */
	LETW_PKT_SIZE,     /* packet_size not whole bytes, or below the
			      header and context */
	LETW_PKT_PAST_END, /* packet_size runs past the end of the file */
};

/* Read the packet at off of the file fd of size bytes. *be: the byte
 * order (1: big endian); -1: taken from this packet's magic number. *pk
 * is filled from LETW_PKT_SIZE on (content_size is not judged: the
 * callers differ). Returns a status, or a negative errno from pread(). */
int letw_ctf_packet_read(int fd, uint64_t off, uint64_t size, int *be,
			 struct letw_ctf_packet *pk);

/* The packets of an LTTng stream file (2.8 and later, the layout above),
 * walked from its start by each packet's packet_size, as the reader does,
 * up to the first that is no such packet or runs past the file's end. */
struct letw_ctf_walk {
	uint64_t n;                     /* packets */
	uint64_t stream_id, instance_id; /* the first packet's header: the
					   stream the reader makes it part of */
	uint64_t first_ts;              /* its timestamp_begin (raw) */
	uint64_t first_seq, last_seq;   /* packet_seq_num of the first and last */
	uint64_t jumps;                 /* packets whose packet_seq_num is not
					   the previous one's + 1 */
	uint64_t jump_from, jump_to;    /* the first such: previous, then its */
	/* events_discarded, read as 64 bits: with a 32-bit count the other
	 * half is cpu_id, constant in a stream file, so the order of two
	 * values is still the order of the counts. */
	uint64_t first_disc, last_disc;
	uint64_t disc_backs;            /* packets whose count is below the
					   previous one's (a counter gone back) */
	uint64_t disc_rises;            /* packets whose count is above the
					   previous one's (events discarded) */
	uint64_t disc_back_at;          /* the first such packet's index */
};

/* Returns 0 with *w, -EINVAL when the file does not start with such a
 * packet (another layout: nothing to count), or another negative errno. */
int letw_ctf_walk_packets(const char *path, struct letw_ctf_walk *w);

#endif /* LETW_BT_CTF_INDEX_H */
