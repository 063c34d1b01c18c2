/* SPDX-License-Identifier: MIT */
/*
 * The stream files on disk against what the reader delivered
 * (trace_files.c): each file against LTTng's index of it, files an index
 * names but no stream came from, a stream's first packet, and in which
 * file of a stream its packet sequence numbers skip. Private to
 * trace_facts.c, which calls these from letw_facts_finish().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctf_index.h"
#include "event.h"
#include "grow.h"
#include "trace_facts.h"
#include "trace_facts_int.h"

static const char *kib(uint64_t bytes, char *buf, size_t len)
{
	if (bytes < 10 * 1024)
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
	else if (bytes < 10ull * 1024 * 1024)
		snprintf(buf, len, "%" PRIu64 " KiB", bytes / 1024);
	else
		snprintf(buf, len, "%" PRIu64 " MiB", bytes / (1024 * 1024));
	return buf;
}

/* Keep a file's walk for letw_facts_locate(). Returns 0 or -ENOMEM. */
static int keep_walk(struct letw_trace_facts *f, const char *path,
		     const struct letw_ctf_walk *w, uint64_t indexed)
{
	if (letw_grow_small((void **)&f->files, &f->files_cap, f->nfiles + 1, sizeof(*f->files)))
		return -ENOMEM;
	f->files[f->nfiles].path = strdup(path);
	if (!f->files[f->nfiles].path)
		return -ENOMEM;
	f->files[f->nfiles].indexed = indexed;
	f->files[f->nfiles].said = 0;
	f->files[f->nfiles++].w = *w;
	return 0;
}

/*
 * One stream file against its own index: shorter than the packets it
 * lists, or holding fewer of them. Under tracefile rotation a stream is
 * several files, each with its own index, and the reader's packet count
 * is the whole stream's: only the file itself says which of them lost
 * packets. Appends to *problem; returns 0 or -ENOMEM.
 */
static int check_file(struct letw_trace_facts *f, const char *path, uint64_t size,
		      const struct letw_idx *idx, char **problem)
{
	struct letw_ctf_walk w;
	char a[32], b[32];
	int walked, ret;

	/* Packets are walked in LTTng's own layout only (an index 1.1
	 * comes with it): another layout walked this way would be
	 * miscounted. A file cut short is walked too: its first packet
	 * still says which stream it belongs to. */
	walked = idx->entry_len >= 72 && letw_ctf_walk_packets(path, &w) == 0;
	if (walked && (ret = keep_walk(f, path, &w, idx->n)) != 0)
		return ret;
	if (size < idx->end)
		ret = letw_facts_say(problem, "the file holds %s of the %s its index lists (cut short?)",
			   kib(size, a, sizeof(a)), kib(idx->end, b, sizeof(b)));
	else if (walked && w.n < idx->n)
		ret = letw_facts_say(problem, "the file holds %" PRIu64 " of the %zu packets its index lists",
			   w.n, idx->n);
	else
		return 0;
	/* Said of the file itself: its packets read are not judged again. */
	if (walked)
		f->files[f->nfiles - 1].said = 1;
	return ret;
}

static const struct letw_file_walk *walk_of(const struct letw_trace_facts *f,
					    const char *path)
{
	for (size_t i = 0; i < f->nfiles; i++)
		if (strcmp(f->files[i].path, path) == 0)
			return &f->files[i];
	return NULL;
}

/* The reader makes one stream of the files of a directory whose packets
 * carry the same stream class and instance ids (src.ctf.fs). */
static int same_stream(const struct letw_file_walk *a, const struct letw_file_walk *b)
{
	const char *sa = strrchr(a->path, '/'), *sb = strrchr(b->path, '/');
	size_t la = sa ? (size_t)(sa - a->path) : 0, lb = sb ? (size_t)(sb - b->path) : 0;

	return a->w.stream_id == b->w.stream_id && a->w.instance_id == b->w.instance_id &&
	       la == lb && strncmp(a->path, b->path, la) == 0;
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* In the reader's order: by the first packet's time, as src.ctf.fs. */
static int by_first_packet(const void *pa, const void *pb)
{
	const struct letw_file_walk *a = *(const struct letw_file_walk *const *)pa;
	const struct letw_file_walk *b = *(const struct letw_file_walk *const *)pb;

	if (a->w.first_ts != b->w.first_ts)
		return a->w.first_ts < b->w.first_ts ? -1 : 1;
	return a->w.first_seq < b->w.first_seq ? -1 : a->w.first_seq > b->w.first_seq;
}

/*
 * Where a stream's packet sequence numbers skip: babeltrace2 reports the
 * gap on the stream, which is named by its first file, while under
 * tracefile rotation the gap may be in, or before, any later file. Sets
 * *where to "in FILE, seq A then B; ..." (NULL when the files do not say,
 * e.g. without index 1.1). Returns 0 or -ENOMEM.
 */
/* The walked files of sf's stream, in the reader's order, in *v (to
 * free()); *n is 0 when its first file was not walked. Returns 0 or
 * -ENOMEM. */
static int stream_walks(const struct letw_trace_facts *f, const struct letw_stream_facts *sf,
			const struct letw_file_walk ***v, size_t *n)
{
	const struct letw_file_walk *first = walk_of(f, sf->path);

	*n = 0;
	*v = malloc((f->nfiles ? f->nfiles : 1) * sizeof(**v));
	if (!*v)
		return -ENOMEM;
	for (size_t i = 0; first && i < f->nfiles; i++)
		if (same_stream(first, &f->files[i]))
			(*v)[(*n)++] = &f->files[i];
	qsort(*v, *n, sizeof(**v), by_first_packet);
	return 0;
}

int letw_facts_locate(const struct letw_trace_facts *f, const struct letw_stream_facts *sf,
		      enum letw_facts_locate_what what, char **where)
{
	const struct letw_file_walk **v;
	size_t n, i, said = 0;
	int ret;

	*where = NULL;
	if ((ret = stream_walks(f, sf, &v, &n)) != 0)
		return ret;
	for (i = 0; i < n && !ret && said < 3; i++) {
		const struct letw_ctf_walk *w = &v[i]->w, *prev = i ? &v[i - 1]->w : NULL;
		const char *name = base_of(v[i]->path), *pname = i ? base_of(v[i - 1]->path) : NULL;

		if (what == LETW_LOCATE_SEQ) {
			if (prev && w->first_seq != prev->last_seq + 1 && ++said)
				ret = letw_facts_say(where, "`%s` begins at seq %" PRIu64 " after seq %" PRIu64 " in `%s`",
						     name, w->first_seq, prev->last_seq, pname);
			if (!ret && w->jumps && ++said)
				ret = letw_facts_say(where, "in `%s`, seq %" PRIu64 " then %" PRIu64 "%s",
						     name, w->jump_from, w->jump_to,
						     w->jumps > 1 ? " (and more)" : "");
		} else {
			if (prev && w->first_disc < prev->last_disc && ++said)
				ret = letw_facts_say(where, "`%s` begins below the count `%s` ended with",
						     name, pname);
			if (!ret && w->disc_backs && ++said)
				ret = letw_facts_say(where, "in `%s`, at packet %" PRIu64,
						     name, w->disc_back_at);
		}
	}
	free(v);
	return ret;
}

/* Whether file i of a stream's n walked files v (the reader's order) is
 * one to name; detail: what to say after its name ("" for nothing). */
typedef int (*file_pick)(const struct letw_file_walk *const *v, size_t i, size_t n,
			 const void *arg, char *detail, size_t len);

/* Which of a stream's n walked files v (the reader's order) holds the
 * packet that begins at t: a file holds the packets from its first one's
 * beginning up to the next file's, so a packet at the very time the next
 * file begins is that file's first. n: t is before them all. */
static size_t file_at(const struct letw_file_walk *const *v, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid]->w.first_ts <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : n;
}

static int pick_absurd(const struct letw_file_walk *const *v, size_t i, size_t n,
		       const void *arg, char *detail, size_t len)
{
	const struct letw_stream_facts *sf = arg;

	(void)detail;
	(void)len;
	for (size_t k = 0; k < sf->nabsurd_at; k++)
		if (file_at(v, n, sf->absurd_at[k]) == i)
			return 1;
	return 0;
}

static int pick_discarded(const struct letw_file_walk *const *v, size_t i, size_t n,
			  const void *arg, char *detail, size_t len)
{
	(void)n;
	(void)arg;
	(void)detail;
	(void)len;
	/* The packet whose count rose (from the previous packet's, over
	 * the files in the reader's order) is where babeltrace2 says events
	 * were discarded; a stream whose first packet's count is above 0
	 * lost events before it (babeltrace2: a count unknown). */
	return v[i]->w.disc_rises ||
	       (i ? v[i]->w.first_disc > v[i - 1]->w.last_disc : v[i]->w.first_disc > 0);
}

/* The files of sf's stream that pick() takes, into *in and *where (see
 * letw_facts_locate_files()). Returns 0 or -ENOMEM. */
static int locate_files(const struct letw_trace_facts *f, const struct letw_stream_facts *sf,
			file_pick pick, const void *arg, struct letw_file_list *in, char **where)
{
	const struct letw_file_walk **v;
	char detail[64];
	size_t n, i;
	int ret;

	*where = NULL;
	if (!sf->stream)
		return 0;
	if ((ret = stream_walks(f, sf, &v, &n)) != 0)
		return ret;
	/* A stream of one file: its name, on the line, already says it. */
	if (n > 1 && !(in->path = calloc(n, sizeof(*in->path))))
		ret = -ENOMEM;
	for (i = 0; n > 1 && !ret && i < n; i++) {
		detail[0] = '\0';
		if (!pick(v, i, n, arg, detail, sizeof(detail)))
			continue;
		/* ", "-separated: "; " separates a stream's problems. */
		if (in->n < 3)
			ret = letw_facts_say_sep(where, ", ", "`%s`%s", base_of(v[i]->path), detail);
		else if (in->n == 3)
			ret = letw_facts_say_sep(where, " ", "(and more)");
		in->path[in->n++] = v[i]->path;
	}
	free(v);
	return ret;
}

int letw_facts_locate_files(const struct letw_trace_facts *f, struct letw_stream_facts *sf,
			    enum letw_facts_files_what what, char **where)
{
	*where = NULL;
	if (what == LETW_FILES_ABSURD)
		return sf->nabsurd_at ? locate_files(f, sf, pick_absurd, sf, &sf->absurd_in, where) : 0;
	return locate_files(f, sf, pick_discarded, NULL, &sf->discarded_in, where);
}

/* Packets read of each file, and whether to name one (see below). */
struct reads {
	uint64_t *n;
};

static int pick_short(const struct letw_file_walk *const *v, size_t i, size_t n,
		      const void *arg, char *detail, size_t len)
{
	const struct reads *r = arg;

	(void)n;
	if (v[i]->said || r->n[i] >= v[i]->indexed)
		return 0;
	snprintf(detail, len, " (%" PRIu64 " of %" PRIu64 ")", r->n[i], v[i]->indexed);
	return 1;
}

int letw_facts_check_packets_read(const struct letw_trace_facts *f,
				  struct letw_stream_facts *sf)
{
	const struct letw_file_walk **v;
	const uint64_t *at = sf->pkt_at.p;
	struct reads r = { NULL };
	char *where = NULL;
	size_t n, k;
	int ret;

	if (!sf->stream || sf->indexed < 0)
		return 0;
	if ((ret = stream_walks(f, sf, &v, &n)) != 0)
		return ret;
	/* One file, or packets without a beginning time to place them in
	 * files by: the stream's count against its first file's index
	 * (more read: the later files of a rotated stream not walked). */
	if (n < 2 || sf->npkt_at != sf->packets) {
		free(v);
		if (sf->problem || sf->packets >= (uint64_t)sf->indexed)
			return 0;
		return letw_facts_say(&sf->problem, "%" PRIu64 " of the %" PRId64 " packets its index lists were read",
				      sf->packets, sf->indexed);
	}
	if (!(r.n = calloc(n, sizeof(*r.n))))
		ret = -ENOMEM;
	for (k = 0; !ret && k < sf->npkt_at; k++) {
		size_t i = file_at(v, n, at[k]);

		if (i < n)
			r.n[i]++;
	}
	free(v);
	if (!ret)
		ret = locate_files(f, sf, pick_short, &r, &sf->short_in, &where);
	if (!ret && where)
		ret = letw_facts_say(&sf->problem, "fewer packets were read than its files' indexes list: in %s",
				     where);
	free(where);
	free(r.n);
	return ret;
}

/* An unread file holding packets of a stream that was read: a later file
 * of a rotated stream (1 + that stream's index), or 0. */
size_t letw_facts_part_of(const struct letw_trace_facts *f, const char *path)
{
	const struct letw_file_walk *w = walk_of(f, path), *r;

	for (size_t i = 0; w && i < f->n; i++)
		if (f->s[i].stream && (r = walk_of(f, f->s[i].path)) && same_stream(w, r))
			return i + 1;
	return 0;
}

/* A stream file is named by a stream when src.ctf.fs read it: compare
 * what was read with its index. */
int letw_facts_check_read(struct letw_trace_facts *f, struct letw_stream_facts *sf)
{
	struct letw_idx idx;
	struct stat st;
	const char *why;
	char *ip;
	int ret = 0, r;

	if (!sf->path[0] || stat(sf->path, &st) != 0 || !S_ISREG(st.st_mode)) {
		/* Not a file (a live stream): nothing to compare. */
		sf->live = sf->stream != NULL;
		return 0;
	}
	ip = letw_idx_path(sf->path);
	if (!ip)
		return -ENOMEM;
	r = letw_idx_read(ip, &idx, &why);
	if (r == -EINVAL)
		ret = letw_facts_say(&sf->note, "index `%s` unusable (%s): packets not cross-checked", ip, why);
	else if (r == -ENOMEM)
		ret = -ENOMEM;
	else if (r == 0) {
		sf->indexed = (int64_t)idx.n;
		/* The packets read against it: letw_facts_check_packets_read(),
		 * once the later files of a rotated stream are walked too. */
		ret = check_file(f, sf->path, (uint64_t)st.st_size, &idx, &sf->problem);
		letw_idx_fini(&idx);
	}
	free(ip);
	return ret;
}

static int is_read(const struct letw_trace_facts *f, const char *path)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->s[i].stream && strcmp(f->s[i].path, path) == 0)
			return 1;
	return 0;
}

/* An integer of the trace environment, or -1. */
static int64_t env_int(const bt_trace *trace, const char *name)
{
	int64_t v;

	return letw_trace_env_int(trace, name, &v) ? v : -1;
}

/*
 * The first packet's sequence number and discarded-events count, when the
 * stream is LTTng's (2.8 and later have packet_seq_num) and its file's
 * first packet is the one the reader began the stream with (the same
 * timestamp_begin, to the cycle): a stream file of another layout, or one
 * changed since, leaves them unknown.
 */
void letw_facts_read_first_packet(struct letw_stream_facts *sf)
{
	const bt_trace *trace;
	const bt_value *name;
	int64_t major, minor;
	struct letw_first_packet fp;

	/* Nothing to compare the file with (and the stream left alone: the
	 * unit tests judge files against a stream that is no object). */
	if (!sf->has_first)
		return;
	trace = bt_stream_borrow_trace_const(sf->stream);
	name = bt_trace_borrow_environment_entry_value_by_name_const(trace, "tracer_name");
	major = env_int(trace, "tracer_major");
	minor = env_int(trace, "tracer_minor");
	if (!name || !bt_value_is_string(name) ||
	    (strcmp(bt_value_string_get(name), "lttng-ust") != 0 &&
	     strcmp(bt_value_string_get(name), "lttng-modules") != 0) ||
	    major < 2 || (major == 2 && minor < 8))
		return;
	if (letw_ctf_first_packet(sf->path, env_int(trace, "architecture_bit_width") == 32 ? 32 : 64,
				  &fp) || fp.ts_begin != sf->first_raw)
		return;
	sf->first_known = 1;
	sf->first_seq = fp.seq;
	sf->first_discarded = fp.discarded;
}

/* An index file of dir whose stream file no stream came from. */
static int check_unread_file(struct letw_trace_facts *f, const char *dir,
			     const char *base)
{
	struct letw_stream_facts *sf = NULL;
	struct letw_idx idx;
	struct stat st;
	const char *why;
	char *path = NULL, *ip = NULL;
	char a[32];
	int ret = -ENOMEM, r, err;

	if (asprintf(&path, "%s/%s", dir, base) < 0)
		return -ENOMEM;
	if (is_read(f, path)) {
		free(path);
		return 0;
	}
	ip = letw_idx_path(path);
	if (!ip)
		goto out;
	r = letw_idx_read(ip, &idx, &why);
	if (r || !idx.n) {
		/* No packet listed: nothing should be there. */
		ret = r == -ENOMEM ? -ENOMEM : 0;
		goto out;
	}
	if (lstat(path, &st) != 0 && errno == ENOENT) {
		sf = letw_facts_add(f, NULL, path);
		ret = sf ? letw_facts_say(&sf->problem, "missing: its index lists %zu packets (%s)",
			       idx.n, kib(idx.bytes, a, sizeof(a))) : -ENOMEM;
	} else if ((err = stat(path, &st) != 0 ? errno : 0) || !S_ISREG(st.st_mode)) {
		sf = letw_facts_add(f, NULL, path);
		ret = sf ? letw_facts_say(&sf->problem, "not a regular file (%s), so it was not read: its index lists %zu packets",
			       err ? strerror(err) :
			       S_ISCHR(st.st_mode) ? "a character device" :
			       S_ISDIR(st.st_mode) ? "a directory" : "a special file",
			       idx.n) : -ENOMEM;
	} else if (st.st_size == 0) {
		sf = letw_facts_add(f, NULL, path);
		ret = sf ? letw_facts_say(&sf->problem, "empty: its index lists %zu packets (%s)",
			       idx.n, kib(idx.bytes, a, sizeof(a))) : -ENOMEM;
	} else {
		/* Holds data but is not the first file of a stream: a later
		 * file of a rotated stream (tracefile rotation), read as
		 * part of it, which still answers to its own index. */
		char *problem = NULL;

		ret = check_file(f, path, (uint64_t)st.st_size, &idx, &problem);
		if (!ret && problem && !(sf = letw_facts_add(f, NULL, path)))
			ret = -ENOMEM;
		if (sf)
			sf->problem = problem;
		else
			free(problem);
	}
	if (ret == 0 && sf && sf->problem)
		sf->indexed = (int64_t)idx.n;
	letw_idx_fini(&idx);
out:
	free(ip);
	free(path);
	return ret;
}

int letw_facts_scan_dir(struct letw_trace_facts *f, const char *dir)
{
	char *idir = NULL;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (asprintf(&idir, "%s/index", dir) < 0)
		return -ENOMEM;
	d = opendir(idir);
	free(idir);
	if (!d)
		return 0; /* no index: nothing says what should be there */
	while (!ret && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *base;

		if (len <= 4 || strcmp(de->d_name + len - 4, ".idx") != 0)
			continue;
		base = strndup(de->d_name, len - 4);
		ret = base ? check_unread_file(f, dir, base) : -ENOMEM;
		free(base);
	}
	closedir(d);
	return ret;
}
