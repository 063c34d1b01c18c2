/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf_index.h"

#define CTF_INDEX_MAGIC 0xC1F1DCC1u
#define CTF_INDEX_HDR 16u   /* magic, major, minor, packet_index_len */
#define CTF_INDEX_1_0 56u   /* seven u64 fields */
#define CTF_INDEX_1_1 72u   /* + stream_instance_id, packet_seq_num */
/* The entries are read into memory: past this an index file is no
 * index LTTng wrote (3.7 million 1.1 entries: packets of a stream file of
 * 15 GiB at 4 KiB sub-buffers) but a damaged one, and is not judged. A
 * bound on entries alone let a damaged entry length (1 GiB, a sparse
 * file) make the pre-check and the report read 3 GiB (a re-audit). */
#define CTF_INDEX_MAX_BYTES (256u << 20)
/* What LTTng writes: CTF index 1.0 or 1.1 entries, perhaps longer ones
 * later, but whole 64-bit fields. */
#define CTF_INDEX_MAX_ENTRY 4096u

char *letw_idx_path(const char *stream)
{
	const char *slash = strrchr(stream, '/');
	char *out = NULL;

	if (!slash)
		return asprintf(&out, "index/%s.idx", stream) < 0 ? NULL : out;
	return asprintf(&out, "%.*s/index/%s.idx", (int)(slash - stream), stream,
			slash + 1) < 0 ? NULL : out;
}

int letw_idx_load(const char *path, unsigned flags, struct letw_idx_raw *raw,
		  const char **why)
{
	unsigned char hdr[CTF_INDEX_HDR];
	uint32_t w[4];
	struct stat st;
	size_t len, got = 0;
	ssize_t r;
	int ret = -EINVAL, fd;

	memset(raw, 0, sizeof(*raw));
	*why = NULL;
	/* O_NONBLOCK: opening a FIFO put in its place would otherwise wait
	 * for a writer forever. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		goto out;
	}
	if ((uint64_t)st.st_size < sizeof(hdr) ||
	    pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		*why = "shorter than its header";
		goto out;
	}
	memcpy(w, hdr, sizeof(w));
	raw->elen = be32toh(w[3]);
	if (be32toh(w[0]) != CTF_INDEX_MAGIC) {
		*why = "bad magic number";
		goto out;
	}
	if (be32toh(w[1]) != 1) { /* major version */
		*why = "unknown index version";
		goto out;
	}
	if (raw->elen < CTF_INDEX_1_0 ||
	    ((flags & LETW_IDX_AS_WRITTEN) &&
	     (raw->elen > CTF_INDEX_MAX_ENTRY || raw->elen % 8))) {
		*why = "bad entry size";
		goto out;
	}
	len = (size_t)st.st_size - sizeof(hdr);
	if (len % raw->elen) {
		*why = "cut in the middle of an entry";
		goto out;
	}
	if (len > CTF_INDEX_MAX_BYTES) {
		*why = "implausibly large";
		goto out;
	}
	if (len && !(raw->ents = malloc(len))) {
		ret = -ENOMEM;
		goto out;
	}
	while (got < len && (r = pread(fd, raw->ents + got, len - got,
				       (off_t)(sizeof(hdr) + got))) > 0)
		got += (size_t)r;
	if (got < len) {
		ret = r < 0 ? -EIO : -EINVAL;
		*why = r < 0 ? NULL : "shorter than it was";
		goto out;
	}
	raw->n = len / raw->elen;
	ret = 0;
out:
	if (ret)
		letw_idx_raw_fini(raw);
	close(fd);
	return ret;
}

uint64_t letw_idx_get(const struct letw_idx_raw *raw, size_t i, enum letw_idx_field f)
{
	uint64_t v;

	memcpy(&v, raw->ents + i * raw->elen + 8 * (size_t)f, sizeof(v));
	return be64toh(v);
}

void letw_idx_raw_fini(struct letw_idx_raw *raw)
{
	free(raw->ents);
	memset(raw, 0, sizeof(*raw));
}

int letw_idx_read(const char *path, struct letw_idx *idx, const char **why)
{
	struct letw_idx_raw raw;
	size_t i;
	int ret;

	memset(idx, 0, sizeof(*idx));
	if ((ret = letw_idx_load(path, LETW_IDX_AS_WRITTEN, &raw, why)) != 0)
		return ret;
	for (i = 0; i < raw.n; i++) {
		uint64_t offset = letw_idx_get(&raw, i, LETW_IDX_OFFSET);
		uint64_t packet_size = letw_idx_get(&raw, i, LETW_IDX_PACKET_SIZE);
		uint64_t content_size = letw_idx_get(&raw, i, LETW_IDX_CONTENT_SIZE);
		uint64_t ts_begin = letw_idx_get(&raw, i, LETW_IDX_TS_BEGIN);
		uint64_t ts_end = letw_idx_get(&raw, i, LETW_IDX_TS_END);
		uint64_t end = offset + packet_size / 8;

		/* What the consumer writes: packets back to back from the
		 * start of the file, whole bytes, content within the packet,
		 * time moving forward. Anything else is a damaged index,
		 * which says nothing about its stream file. */
		if (end < offset || offset != idx->end || packet_size % 8 ||
		    !packet_size || content_size > packet_size || ts_end < ts_begin) {
			*why = "its entries do not describe packets back to back";
			letw_idx_raw_fini(&raw);
			letw_idx_fini(idx);
			return -EINVAL;
		}
		idx->bytes += packet_size / 8;
		if (end > idx->end)
			idx->end = end;
	}
	idx->n = raw.n;
	idx->entry_len = raw.elen;
	letw_idx_raw_fini(&raw);
	return 0;
}

void letw_idx_fini(struct letw_idx *idx)
{
	memset(idx, 0, sizeof(*idx));
}

#define CTF_MAGIC 0xC1FC1FC1u
#define PK_STREAM_ID 20   /* after the magic and the uuid; 32 bits */
#define PK_INSTANCE_ID 24
#define PK_TS_BEGIN 32     /* the packet context starts here */
#define PK_CONTENT 48
#define PK_SIZE 56
#define PK_SEQ 64
#define PK_DISCARDED 72
#define PK_MIN 84      /* the context ends with cpu_id (80 with a 32-bit
			  events_discarded) */

static uint64_t rd(const unsigned char *p, unsigned bytes, int be)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[be ? bytes - 1 - i : i] << (8 * i);
	return v;
}

int letw_ctf_first_packet(const char *path, unsigned long_bits,
			  struct letw_first_packet *fp)
{
	unsigned char h[PK_MIN];
	unsigned dbytes = long_bits == 32 ? 4 : 8;
	uint64_t cs, ps;
	ssize_t got;
	int fd, be;

	/* O_NONBLOCK: a FIFO put in its place since must not hang us. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, h, sizeof(h), 0);
	close(fd);
	if (got < PK_DISCARDED + (ssize_t)dbytes + 4)
		return got < 0 ? -EIO : -EINVAL;
	if (rd(h, 4, 0) == CTF_MAGIC)
		be = 0;
	else if (rd(h, 4, 1) == CTF_MAGIC)
		be = 1;
	else
		return -EINVAL;
	cs = rd(h + PK_CONTENT, 8, be);
	ps = rd(h + PK_SIZE, 8, be);
	if (cs > ps || cs < 8 * (uint64_t)(PK_DISCARDED + dbytes + 4))
		return -EINVAL;
	fp->stream_id = rd(h + PK_STREAM_ID, 4, be);
	fp->instance_id = rd(h + PK_INSTANCE_ID, 8, be);
	fp->ts_begin = rd(h + PK_TS_BEGIN, 8, be);
	fp->seq = rd(h + PK_SEQ, 8, be);
	fp->discarded = rd(h + PK_DISCARDED, dbytes, be);
	return 0;
}

int letw_ctf_packet_read(int fd, uint64_t off, uint64_t size, int *be,
			 struct letw_ctf_packet *pk)
{
	unsigned char h[PK_MIN];
	ssize_t got = off < size ? pread(fd, h, sizeof(h), (off_t)off) : 0;

	if (got < 0)
		return -errno;
	pk->got = (size_t)got;
	if ((size_t)got < sizeof(h))
		return LETW_PKT_SHORT;
	if (*be < 0)
		*be = rd(h, 4, 0) == CTF_MAGIC ? 0 : rd(h, 4, 1) == CTF_MAGIC ? 1 : -1;
	if (*be < 0 || rd(h, 4, *be) != CTF_MAGIC)
		return LETW_PKT_MAGIC;
	pk->stream_id = (uint32_t)rd(h + PK_STREAM_ID, 4, *be);
	pk->instance_id = rd(h + PK_INSTANCE_ID, 8, *be);
	pk->ts_begin = rd(h + PK_TS_BEGIN, 8, *be);
	pk->ts_end = rd(h + PK_TS_BEGIN + 8, 8, *be);
	pk->content_bits = rd(h + PK_CONTENT, 8, *be);
	pk->packet_bits = rd(h + PK_SIZE, 8, *be);
	pk->seq = rd(h + PK_SEQ, 8, *be);
	pk->discarded = rd(h + PK_DISCARDED, 8, *be);
	if (pk->packet_bits % 8 || pk->packet_bits / 8 < PK_MIN)
		return LETW_PKT_SIZE;
	if (pk->packet_bits / 8 > size - off)
		return LETW_PKT_PAST_END;
	return LETW_PKT_OK;
}

int letw_ctf_walk_packets(const char *path, struct letw_ctf_walk *w)
{
	struct letw_ctf_packet pk;
	struct stat st;
	uint64_t off = 0, seq, disc;
	int fd, be = -1, ret = 0;

	memset(w, 0, sizeof(*w));
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	/* Up to the first that is no such packet, or cannot be read. */
	while (!ret && letw_ctf_packet_read(fd, off, (uint64_t)st.st_size, &be, &pk) == LETW_PKT_OK) {
		seq = pk.seq;
		disc = pk.discarded;
		if (w->n && disc < w->last_disc && !w->disc_backs++)
			w->disc_back_at = w->n;
		if (w->n && disc > w->last_disc)
			w->disc_rises++;
		if (!w->n)
			w->first_disc = disc;
		w->last_disc = disc;
		if (!w->n) {
			w->stream_id = pk.stream_id;
			w->instance_id = pk.instance_id;
			w->first_ts = pk.ts_begin;
			w->first_seq = seq;
		} else if (seq != w->last_seq + 1 && !w->jumps++) {
			w->jump_from = w->last_seq;
			w->jump_to = seq;
		}
		w->last_seq = seq;
		off += pk.packet_bits / 8;
		w->n++;
	}
	if (!ret && !w->n && st.st_size)
		ret = -EINVAL;
	close(fd);
	return ret;
}
