/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "grow.h"
#include "precheck.h"
#include "precheck_index.h"
#include "tsdl.h"

#define META_MAGIC 0x75D11D57u
#define META_HDR 37u          /* packetized metadata header, bytes */
#define META_MAX (256u << 20) /* larger metadata is not ours to judge */
/* LTTng's packet header and context (tsdl.c checks the metadata declares
 * exactly these; ctf_index.c reads them): an empty packet holds this much,
 * its context ending with cpu_id. */
#define PK_HDR 84

/* What a trace file is when it is not a regular file. */
static const char *file_kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "of an unknown type";
}

/*
 * Open a trace file for reading, refusing what is not a regular file:
 * 0 with *fd, a negative errno, or 1 with st->st_mode telling what it is.
 * O_NONBLOCK because opening a FIFO for reading otherwise waits for a
 * writer forever: a FIFO in place of the metadata hung the pre-checks (and
 * one in place of an index file, the reader). Reads of a regular file
 * ignore the flag.
 */
static int open_regular(const char *path, int *fd, struct stat *st)
{
	int e;

	/* First by name: opening a socket fails with ENXIO, which says
	 * nothing to a user; then again on the open file, which is what is
	 * read. */
	if (stat(path, st) == 0 && !S_ISREG(st->st_mode))
		return 1;
	*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	if (fstat(*fd, st) != 0) {
		e = -errno;
		close(*fd);
		return e;
	}
	if (!S_ISREG(st->st_mode)) {
		close(*fd);
		return 1;
	}
	return 0;
}

static int read_all(const char *path, char **buf, size_t *len, struct stat *st)
{
	ssize_t n;
	size_t got = 0;
	int fd, r;

	*buf = NULL;
	if ((r = open_regular(path, &fd, st)) != 0)
		return r;
	if ((uint64_t)st->st_size > META_MAX) {
		close(fd);
		return -EFBIG;
	}
	*buf = malloc((size_t)st->st_size + 1);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st->st_size &&
	       (n = read(fd, *buf + got, (size_t)st->st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	*len = got;
	(*buf)[got] = '\0';
	return 0;
}

static uint32_t rd32(const char *p, int swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

/* Packetized metadata: every packet's sizes within the file (2.0's
 * decoder loops forever reading past the end), the TSDL text joined
 * into *text. */
static int check_meta_packets(const char *path, const char *buf, size_t len,
			      char **text, size_t *tlen)
{
	int swap = rd32(buf, 0) != META_MAGIC;
	size_t off = 0, n = 0;
	char *t = malloc(len + 1);

	if (!t) {
		letw_err("out of memory");
		return -1;
	}
	*tlen = 0;
	while (off < len) {
		uint64_t cs, ps;

		if (len - off < META_HDR) {
			letw_err("metadata `%s` is damaged: it ends %zu byte(s) into the header of packet %zu (byte %zu)",
				 path, len - off, n, off);
			goto bad;
		}
		cs = rd32(buf + off + 24, swap);
		ps = rd32(buf + off + 28, swap);
		if (cs % 8 || ps % 8 || cs / 8 < META_HDR || cs > ps) {
			letw_err("metadata `%s` is damaged: packet %zu (byte %zu) has content_size %" PRIu64
				 " and packet_size %" PRIu64 " bits", path, n, off, cs, ps);
			goto bad;
		}
		if (ps / 8 > len - off) {
			letw_err("metadata `%s` is damaged or cut short: packet %zu (byte %zu) claims %" PRIu64
				 " bytes, past the end of the file (%zu bytes)", path, n, off, ps / 8, len);
			goto bad;
		}
		memcpy(t + *tlen, buf + off + META_HDR, cs / 8 - META_HDR);
		*tlen += cs / 8 - META_HDR;
		off += ps / 8;
		n++;
	}
	t[*tlen] = '\0';
	*text = t;
	return 0;
bad:
	free(t);
	return -1;
}

/* Walk a stream file's packets as the reader does (by packet_size) and
 * refuse sizes past the file, the values 2.0's reader aborts on, and
 * packets out of order. LTTng writes a stream file's packets in order:
 * packet_seq_num rises (with gaps where packets were lost) and a packet
 * begins no earlier than the one before it ended. A packet repeated or
 * moved breaks that; the reader then fails in its muxer ("Youngest
 * upstream message iterator wrapper's timestamp is less than ...") or, for
 * a sequence number going back, reports 2^64 - 2 packets discarded. */
/* A stream file's identity and time span, for check_identities. */
struct stream_span {
	char *path;
	char *ipath;   /* its LTTng index's path (letw_idx_path) */
	uint32_t sid;  /* stream_id: its stream class */
	uint64_t iid;  /* stream_instance_id */
	uint64_t tb, te; /* first packet's begin, last packet's end */
	uint64_t rtb;    /* the begin the reader orders it by: its index's */
	int events;      /* a packet holds more than its header and context */
	/* The first packet whose content_size its index does not list. */
	int cs_bad;
	uint64_t cs_pkt, cs_off, cs, cs_idx;
};

struct spans {
	struct stream_span *v;
	size_t n, cap;
};

static int check_stream(const char *path, const char *ipath, int be,
			struct stream_span *span)
{
	struct stat st;
	struct letw_pc_index ix;
	uint64_t off = 0, size, n = 0, prev_seq = 0, prev_te = 0, icsz;
	int ret = -1, fd, r;

	/* Not a regular file since the directory was listed: skipped, as
	 * the reader skips it (the report then finds its data missing). */
	if ((r = open_regular(path, &fd, &st)) != 0) {
		if (r < 0)
			letw_err("cannot read the stream file `%s`: %s", path, strerror(-r));
		return r < 0 ? -1 : 0;
	}
	size = (uint64_t)st.st_size;
	if (letw_pc_index_load(ipath, size, &ix)) {
		letw_err("out of memory");
		close(fd);
		return -1;
	}
	while (off < size) {
		struct letw_ctf_packet pk;
		uint64_t cs, ps, seq, tb, te;
		uint32_t sid;
		/* The reader's own packet header reading (ctf_index.c), in
		 * the byte order the metadata declares. */
		int kind = letw_ctf_packet_read(fd, off, size, &be, &pk);

		if (kind < 0) {
			letw_err("cannot read the stream file `%s`: %s", path, strerror(-kind));
			goto out;
		}
		if (kind == LETW_PKT_SHORT) {
			letw_err("stream file `%s` is cut short: it ends %zu byte(s) into the header of packet %" PRIu64
				 " (byte %" PRIu64 ")", path, pk.got, n, off);
			goto out;
		}
		if (kind == LETW_PKT_MAGIC) {
			letw_err("stream file `%s` is damaged: packet %" PRIu64 " (byte %" PRIu64
				 ") does not start with the CTF magic number", path, n, off);
			goto out;
		}
		tb = pk.ts_begin;
		te = pk.ts_end;
		cs = pk.content_bits;
		ps = pk.packet_bits;
		seq = pk.seq;
		if (kind == LETW_PKT_SIZE || cs > ps || cs / 8 < PK_HDR) {
			letw_err("stream file `%s` is damaged: packet %" PRIu64 " (byte %" PRIu64
				 ") has content_size %" PRIu64 " and packet_size %" PRIu64 " bits",
				 path, n, off, cs, ps);
			goto out;
		}
		if (kind == LETW_PKT_PAST_END) {
			letw_err("stream file `%s` is damaged or cut short: packet %" PRIu64 " (byte %" PRIu64
				 ") claims %" PRIu64 " bytes, past the end of the file (%" PRIu64 " bytes)",
				 path, n, off, ps / 8, size);
			goto out;
		}
		if (seq == UINT64_MAX || tb == UINT64_MAX || te == UINT64_MAX) {
			letw_err("stream file `%s` is damaged: packet %" PRIu64 " (byte %" PRIu64
				 ") has %s 2^64-1", path, n, off,
				 seq == UINT64_MAX ? "packet_seq_num" : "a timestamp of");
			goto out;
		}
		/* A packet's timestamps bound its events: one ending before
		 * it begins makes the muxer see time go back ("Youngest
		 * upstream message iterator wrapper's timestamp is less than
		 * muxer's"), naming no file. */
		if (te < tb) {
			letw_err("stream file `%s` is damaged: packet %" PRIu64 " (byte %" PRIu64
				 ") ends at timestamp %" PRIu64 ", before it begins (%" PRIu64 ")",
				 path, n, off, te, tb);
			goto out;
		}
		/* LTTng writes one stream per file: a packet of another
		 * stream class amid them was put there, and the reader,
		 * which takes the class from the first packet, fails on it
		 * ("No stream class with ID", naming no file). */
		sid = pk.stream_id;
		if (n && sid != span->sid) {
			letw_err("stream file `%s` is damaged: packet %" PRIu64 " (byte %" PRIu64
				 ") has stream_id %" PRIu32 ", where the file's first packet has %" PRIu32
				 " (a packet of another stream put in this file)",
				 path, n, off, sid, span->sid);
			goto out;
		}
		if (n && seq <= prev_seq) {
			letw_err("stream file `%s` is damaged: packet %" PRIu64 " (byte %" PRIu64
				 ") has packet_seq_num %" PRIu64 ", not above the previous packet's %" PRIu64
				 " (a packet repeated or out of order)", path, n, off, seq, prev_seq);
			goto out;
		}
		if (n && tb < prev_te) {
			letw_err("stream file `%s` is damaged: packet %" PRIu64 " (byte %" PRIu64
				 ") begins at timestamp %" PRIu64 ", before the previous packet ends (%" PRIu64
				 "): a packet repeated or out of order", path, n, off, tb, prev_te);
			goto out;
		}
		/* After the file's own checks: what they refuse is the
		 * stream file's damage, whatever its index says. */
		r = letw_pc_index_packet(&ix, path, n, &(struct letw_pc_packet){
				.off = off, .size = ps / 8, .cs = cs }, &icsz);
		if (r < 0)
			goto out;
		if (r && !span->cs_bad) {
			span->cs_bad = 1;
			span->cs_pkt = n;
			span->cs_off = off;
			span->cs = cs;
			span->cs_idx = icsz;
		}
		if (!n) {
			span->sid = sid;
			span->iid = pk.instance_id;
			span->tb = tb;
			span->rtb = ix.raw.n ? letw_pc_index_first_ts(&ix) : tb;
		}
		span->te = te;
		span->events |= cs / 8 > PK_HDR;
		prev_seq = seq;
		prev_te = te;
		off += ps / 8;
		n++;
	}
	if (letw_pc_index_end(&ix, path, n))
		goto out;
	ret = n ? 1 : 0;
out:
	letw_pc_index_fini(&ix);
	close(fd);
	return ret;
}

static int span_cmp(const void *a, const void *b)
{
	const struct stream_span *x = a, *y = b;

	if (x->sid != y->sid)
		return x->sid < y->sid ? -1 : 1;
	if (x->iid != y->iid)
		return x->iid < y->iid ? -1 : 1;
	return x->tb < y->tb ? -1 : x->tb > y->tb;
}

/*
 * The reader makes one stream of the files that share a stream class and a
 * stream_instance_id: the pieces of a stream that LTTng's tracefile
 * rotation (--tracefile-size) cut, one after the other in time. Two such
 * files whose times overlap are not pieces (a stream file overwritten by a
 * copy of another, or given another's instance id), and the reader then
 * fails in its muxer with a message that names no file.
 */
static int check_identities(struct spans *sp)
{
	/* Not with none: a trace with no stream file pre-checked (not
	 * LTTng's layout, or no packet in any) leaves sp->v NULL, and
	 * qsort's array must be valid even for 0 elements (glibc declares
	 * it nonnull; UBSan, output_safety_e2e). */
	if (sp->n > 1)
		qsort(sp->v, sp->n, sizeof(*sp->v), span_cmp);
	for (size_t i = 1; i < sp->n; i++) {
		const struct stream_span *a = &sp->v[i - 1], *b = &sp->v[i];

		if (a->sid == b->sid && a->iid == b->iid && b->tb < a->te) {
			letw_err("stream files `%s` and `%s` are damaged: both claim stream %" PRIu64
				 " of stream class %" PRIu32 " over the same time (%" PRIu64 " to %" PRIu64
				 " and %" PRIu64 " to %" PRIu64 "): one is a copy of another stream file, or its header was changed",
				 a->path, b->path, a->iid, a->sid, a->tb, a->te, b->tb, b->te);
			return -1;
		}
		/* The reader orders a stream's files by their index's first
		 * timestamp: an index that is another file's (files renamed,
		 * their indexes not) puts them out of order, and the muxer
		 * then sees time go back. */
		if (a->sid == b->sid && a->iid == b->iid && b->rtb < a->rtb) {
			const struct stream_span *x = b->rtb != b->tb ? b : a;

			letw_err("LTTng's index `%s` does not match its stream file `%s`: it says the file begins at timestamp %" PRIu64
				 ", where its first packet begins at %" PRIu64 " (the index of another file?). babeltrace2 orders the files `%s` and `%s` by their indexes, so it reads them out of order; if the stream files are intact, move their index files away and the packets are read from the stream files themselves",
				 x->ipath, x->path, x->rtb, x->tb, a->path, b->path);
			return -1;
		}
	}
	return 0;
}

/* After check_identities, which tells an index that is another file's. */
static int check_content_sizes(const struct spans *sp)
{
	for (size_t i = 0; i < sp->n; i++) {
		const struct stream_span *s = &sp->v[i];

		if (!s->cs_bad)
			continue;
		letw_err("stream file `%s` is damaged: packet %" PRIu64 " (byte %" PRIu64
			 ") has content_size %" PRIu64 " bits, where its index `%s` lists %" PRIu64
			 " (the packet was %s after LTTng wrote it, or the index was changed)",
			 s->path, s->cs_pkt, s->cs_off, s->cs, s->ipath, s->cs_idx, s->cs < s->cs_idx ? "cut short" : "changed");
		return -1;
	}
	return 0;
}

static int spans_add(struct spans *sp, const char *path, const struct stream_span *span)
{
	if (letw_grow_small((void **)&sp->v, &sp->cap, sp->n + 1, sizeof(*sp->v)))
		return -ENOMEM;
	sp->v[sp->n] = *span;
	sp->v[sp->n].path = strdup(path);
	sp->v[sp->n].ipath = strdup(span->ipath);
	if (!sp->v[sp->n].path || !sp->v[sp->n].ipath) {
		free(sp->v[sp->n].path);
		free(sp->v[sp->n].ipath);
		return -ENOMEM;
	}
	sp->n++;
	return 0;
}

/*
 * The reader maps LTTng's index file of every stream file it reads, when
 * there is one; it must be a regular file (what it holds is judged later,
 * by the report's cross-check: a damaged index does not stop the read).
 * A FIFO there made the reader wait for a writer forever.
 */
static int check_index_file(const char *ip)
{
	struct stat st;

	if (stat(ip, &st) == 0 && !S_ISREG(st.st_mode)) {
		letw_err("LTTng's index file `%s` is %s, not a regular file: the trace is damaged",
			 ip, file_kind(st.st_mode));
		return 1;
	}
	return 0;
}

int letw_precheck_trace(const char *dir, int verbose)
{
	char *mpath = NULL, *buf = NULL, *text = NULL, why[256];
	size_t len = 0, tlen = 0;
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	struct spans spans = { 0 };
	int ret = -1, r, be = 0, layout;

	if (asprintf(&mpath, "%s/metadata", dir) < 0) {
		letw_err("out of memory");
		return -1;
	}
	r = read_all(mpath, &buf, &len, &st);
	if (r > 0) {
		letw_err("the metadata `%s` is %s, not a regular file: the trace is damaged",
			 mpath, file_kind(st.st_mode));
		goto out;
	}
	if (r) {
		letw_err("cannot read the metadata `%s`: %s", mpath,
			 r == -EFBIG ? "larger than 256 MiB" : strerror(-r));
		goto out;
	}
	if (!len) {
		/* Also what a session still tracing looks like: the consumer
		 * writes the metadata it has buffered when the session stops
		 * or rotates (seen: empty through a whole active session). */
		letw_err("the metadata `%s` is empty: the trace is damaged, or its session is still active (LTTng writes the metadata at `lttng stop` or `lttng rotate`)",
			 mpath);
		goto out;
	}
	if (len >= 4 && (rd32(buf, 0) == META_MAGIC || rd32(buf, 1) == META_MAGIC)) {
		if (check_meta_packets(mpath, buf, len, &text, &tlen))
			goto out;
	} else {
		text = buf; /* plain-text metadata */
		tlen = len;
		buf = NULL;
	}
	if (letw_tsdl_check(text, tlen, why, sizeof(why))) {
		letw_err("the metadata `%s` is damaged: %s", mpath, why);
		goto out;
	}
	layout = letw_tsdl_is_lttng_layout(text, tlen, &be);
	if (!layout && verbose)
		letw_note("%s: not LTTng's packet layout: stream files not pre-checked", dir);

	d = opendir(dir);
	if (!d) {
		letw_err("cannot read the trace directory `%s`: %s", dir, strerror(errno));
		goto out;
	}
	while ((de = readdir(d))) {
		char *sp = NULL, *ip;
		int bad;

		/* What src.ctf.fs reads: regular files but the metadata, not
		 * hidden. */
		if (de->d_name[0] == '.' || strcmp(de->d_name, "metadata") == 0)
			continue;
		if (asprintf(&sp, "%s/%s", dir, de->d_name) < 0) {
			letw_err("out of memory");
			goto out;
		}
		if (!(ip = letw_idx_path(sp))) {
			free(sp);
			letw_err("out of memory");
			goto out;
		}
		bad = 0;
		if (stat(sp, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
			if (access(sp, R_OK) != 0) {
				letw_err("cannot read the stream file `%s`: %s", sp, strerror(errno));
				bad = 1;
			} else if (!(bad = check_index_file(ip)) && layout) {
				struct stream_span span = { .ipath = ip };

				r = check_stream(sp, ip, be, &span);
				bad = r < 0;
				if (r > 0 && spans_add(&spans, sp, &span)) {
					letw_err("out of memory");
					bad = 1;
				}
			}
		}
		free(sp);
		free(ip);
		if (bad)
			goto out;
	}
	if (check_identities(&spans) || check_content_sizes(&spans))
		goto out;
	ret = 0;
	/*
	 * The metadata of a per-process trace (--buffers-pid) declares no
	 * stream class when the process exited before LTTng described its
	 * channel, while its stream files hold the empty packets flushed at
	 * its exit. The reader refuses such a trace ("No stream class with
	 * ID"), and with it every other trace of the session: left out when
	 * it holds no event, since nothing is lost then.
	 */
	if (layout && !letw_tsdl_declares_stream(text, tlen)) {
		for (size_t i = 0; i < spans.n; i++)
			if (spans.v[i].events) {
				letw_err("the metadata `%s` declares no stream, but `%s` holds events: LTTng did not write the description of its channel (the process exited first?); the trace cannot be read",
					 mpath, spans.v[i].path);
				ret = -1;
				goto out;
			}
		ret = 1;
	}
out:
	for (size_t i = 0; i < spans.n; i++) {
		free(spans.v[i].path);
		free(spans.v[i].ipath);
	}
	free(spans.v);
	if (d)
		closedir(d);
	free(mpath);
	free(buf);
	free(text);
	return ret;
}
