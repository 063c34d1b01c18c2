/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctf_index.h"
#include "event.h"
#include "json_out.h"
#include "trace_facts.h"

void letw_facts_init(struct letw_trace_facts *f)
{
	memset(f, 0, sizeof(*f));
}

void letw_facts_fini(struct letw_trace_facts *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		bt_stream_put_ref(f->s[i].stream);
		free(f->s[i].path);
		free(f->s[i].problem);
		free(f->s[i].note);
	}
	free(f->s);
	memset(f, 0, sizeof(*f));
}

static struct letw_stream_facts *add(struct letw_trace_facts *f,
				     const bt_stream *stream, const char *path)
{
	struct letw_stream_facts *sf;

	if (f->n == f->cap) {
		size_t ncap = f->cap ? f->cap * 2 : 16;
		struct letw_stream_facts *ns = realloc(f->s, ncap * sizeof(*ns));

		if (!ns)
			return NULL;
		f->s = ns;
		f->cap = ncap;
	}
	sf = &f->s[f->n];
	memset(sf, 0, sizeof(*sf));
	sf->indexed = -1;
	sf->path = strdup(path ? path : "");
	if (!sf->path)
		return NULL;
	/* The reference keeps the address from being reused by a later
	 * stream (live sessions add streams as they go). */
	sf->stream = stream;
	bt_stream_get_ref(stream);
	f->n++;
	return sf;
}

static struct letw_stream_facts *of_stream(struct letw_trace_facts *f,
					   const bt_stream *stream)
{
	size_t i;

	if (f->last < f->n && f->s[f->last].stream == stream)
		return &f->s[f->last];
	for (i = 0; i < f->n; i++)
		if (f->s[i].stream == stream)
			return &f->s[f->last = i];
	/* A stream whose beginning we did not see (a filter dropped it):
	 * track it from here. */
	if (!add(f, stream, bt_stream_get_name(stream)))
		return NULL;
	return &f->s[f->last = f->n - 1];
}

int letw_facts_message(struct letw_trace_facts *f, const bt_message *msg)
{
	struct letw_stream_facts *sf;
	uint64_t count;

	switch (bt_message_get_type(msg)) {
	case BT_MESSAGE_TYPE_STREAM_BEGINNING:
		sf = of_stream(f, bt_message_stream_beginning_borrow_stream_const(msg));
		break;
	case BT_MESSAGE_TYPE_PACKET_BEGINNING:
		sf = of_stream(f, bt_packet_borrow_stream_const(
			bt_message_packet_beginning_borrow_packet_const(msg)));
		if (!sf)
			break;
		if (!sf->packets++ &&
		    bt_stream_class_packets_have_beginning_default_clock_snapshot(
			    bt_stream_borrow_class_const(sf->stream))) {
			int ok = 0;

			const bt_clock_snapshot *cs =
				bt_message_packet_beginning_borrow_default_clock_snapshot_const(msg);

			sf->first_ns = letw_clock_ns(cs, &ok);
			sf->first_raw = bt_clock_snapshot_get_value(cs);
			sf->has_first = ok;
		}
		break;
	case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
		sf = of_stream(f, bt_message_discarded_events_borrow_stream_const(msg));
		if (!sf)
			break;
		if (bt_message_discarded_events_get_count(msg, &count) ==
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			sf->discarded_events = letw_count_add(sf->discarded_events, count);
		else
			sf->discarded_uncounted = 1;
		break;
	case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
		sf = of_stream(f, bt_message_discarded_packets_borrow_stream_const(msg));
		if (!sf)
			break;
		/* babeltrace2 emits this for a packet sequence number gap;
		 * the count is the gap's width. */
		if (bt_message_discarded_packets_get_count(msg, &count) ==
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			sf->discarded_packets = letw_count_add(sf->discarded_packets, count);
		else
			sf->discarded_packets++;
		break;
	default:
		return 0;
	}
	return sf ? 0 : -ENOMEM;
}

int letw_facts_absurd(struct letw_trace_facts *f, const bt_stream *stream,
		      const char *what)
{
	struct letw_stream_facts *sf = of_stream(f, stream);

	if (!sf)
		return -ENOMEM;
	if (!sf->absurd++)
		snprintf(sf->absurd_example, sizeof(sf->absurd_example), "%s", what);
	return 0;
}

/* ---- the end-of-graph judgement ---- */

/* Append "; "-separated text to *dst. Returns 0 or -ENOMEM. */
static int say(char **dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(char **dst, const char *fmt, ...)
{
	char *add_txt = NULL, *joined = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&add_txt, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	if (!*dst) {
		*dst = add_txt;
		return 0;
	}
	n = asprintf(&joined, "%s; %s", *dst, add_txt);
	free(add_txt);
	if (n < 0)
		return -ENOMEM;
	free(*dst);
	*dst = joined;
	return 0;
}

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

/*
 * One stream file against its own index: shorter than the packets it
 * lists, or holding fewer of them. Under tracefile rotation a stream is
 * several files, each with its own index, and the reader's packet count
 * is the whole stream's: only the file itself says which of them lost
 * packets. Appends to *problem; returns 0 or -ENOMEM.
 */
static int check_file(const char *path, uint64_t size, const struct letw_idx *idx,
		      char **problem)
{
	char a[32], b[32];
	uint64_t held;

	if (size < idx->end)
		return say(problem, "the file holds %s of the %s its index lists (cut short?)",
			   kib(size, a, sizeof(a)), kib(idx->end, b, sizeof(b)));
	/* Packets are counted in LTTng's own layout only (an index 1.1
	 * comes with it): another layout walked this way would be
	 * miscounted. */
	if (idx->entry_len >= 72 && letw_ctf_count_packets(path, &held) == 0 &&
	    held < idx->n)
		return say(problem, "the file holds %" PRIu64 " of the %zu packets its index lists",
			   held, idx->n);
	return 0;
}

/* A stream file is named by a stream when src.ctf.fs read it: compare
 * what was read with its index. */
static int check_read_stream(struct letw_stream_facts *sf)
{
	struct letw_idx idx;
	struct stat st;
	const char *why;
	char *ip;
	int ret = 0, r;

	if (!sf->path[0] || stat(sf->path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0; /* not a file (a live stream): nothing to compare */
	ip = letw_idx_path(sf->path);
	if (!ip)
		return -ENOMEM;
	r = letw_idx_read(ip, &idx, &why);
	if (r == -EINVAL)
		ret = say(&sf->note, "index `%s` unusable (%s): packets not cross-checked", ip, why);
	else if (r == -ENOMEM)
		ret = -ENOMEM;
	else if (r == 0) {
		sf->indexed = (int64_t)idx.n;
		ret = check_file(sf->path, (uint64_t)st.st_size, &idx, &sf->problem);
		/* More packets read than this file's index lists: a stream
		 * made of several files (tracefile rotation, whose later
		 * files check_unread_file() checks); fewer: lost. */
		if (!ret && !sf->problem && sf->packets < idx.n)
			ret = say(&sf->problem, "%" PRIu64 " of the %zu packets its index lists were read",
				  sf->packets, idx.n);
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
static void read_first_packet(struct letw_stream_facts *sf)
{
	const bt_trace *trace = bt_stream_borrow_trace_const(sf->stream);
	const bt_value *name = bt_trace_borrow_environment_entry_value_by_name_const(trace,
										  "tracer_name");
	int64_t major = env_int(trace, "tracer_major"), minor = env_int(trace, "tracer_minor");
	struct letw_first_packet fp;

	if (!sf->has_first || !name || !bt_value_is_string(name) ||
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
		sf = add(f, NULL, path);
		ret = sf ? say(&sf->problem, "missing: its index lists %zu packets (%s)",
			       idx.n, kib(idx.bytes, a, sizeof(a))) : -ENOMEM;
	} else if ((err = stat(path, &st) != 0 ? errno : 0) || !S_ISREG(st.st_mode)) {
		sf = add(f, NULL, path);
		ret = sf ? say(&sf->problem, "not a regular file (%s), so it was not read: its index lists %zu packets",
			       err ? strerror(err) :
			       S_ISCHR(st.st_mode) ? "a character device" :
			       S_ISDIR(st.st_mode) ? "a directory" : "a special file",
			       idx.n) : -ENOMEM;
	} else if (st.st_size == 0) {
		sf = add(f, NULL, path);
		ret = sf ? say(&sf->problem, "empty: its index lists %zu packets (%s)",
			       idx.n, kib(idx.bytes, a, sizeof(a))) : -ENOMEM;
	} else {
		/* Holds data but is not the first file of a stream: a later
		 * file of a rotated stream (tracefile rotation), read as
		 * part of it, which still answers to its own index. */
		char *problem = NULL;

		ret = check_file(path, (uint64_t)st.st_size, &idx, &problem);
		if (!ret && problem && !(sf = add(f, NULL, path)))
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

static int scan_dir(struct letw_trace_facts *f, const char *dir)
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

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
}

int letw_facts_finish(struct letw_trace_facts *f)
{
	size_t i, j, nread = f->n;
	char **dirs;
	size_t ndirs = 0;
	int ret = 0;

	if (f->finished)
		return f->problems;
	dirs = calloc(nread ? nread : 1, sizeof(*dirs));
	if (!dirs)
		return -ENOMEM;
	for (i = 0; i < nread && !ret; i++) {
		struct stat st;
		char *d;

		ret = check_read_stream(&f->s[i]);
		if (ret || !f->s[i].path[0] || stat(f->s[i].path, &st) != 0)
			continue;
		if (f->s[i].stream && S_ISREG(st.st_mode))
			read_first_packet(&f->s[i]);
		d = dir_of(f->s[i].path);
		if (!d) {
			ret = -ENOMEM;
			break;
		}
		for (j = 0; j < ndirs && strcmp(dirs[j], d) != 0; j++)
			;
		if (j < ndirs)
			free(d);
		else
			dirs[ndirs++] = d;
	}
	/* Stream files the index names but that no stream came from. */
	for (j = 0; j < ndirs && !ret; j++)
		ret = scan_dir(f, dirs[j]);
	for (j = 0; j < ndirs; j++)
		free(dirs[j]);
	free(dirs);
	for (i = 0; i < f->n && !ret; i++) {
		struct letw_stream_facts *sf = &f->s[i];

		if (sf->discarded_events)
			ret = say(&sf->problem, "%" PRIu64 " event(s) discarded by the tracer", sf->discarded_events);
		else if (sf->discarded_uncounted)
			ret = say(&sf->problem, "events discarded by the tracer (count unknown)");
		if (!ret && sf->discarded_packets)
			ret = say(&sf->problem, "%" PRIu64 " packet(s) missing (packet sequence numbers skip them)",
				  sf->discarded_packets);
		if (!ret && sf->absurd)
			ret = say(&sf->problem, "%" PRIu64 " lttng-etw record(s) with absurd values, ignored (e.g. %s)",
				  sf->absurd, sf->absurd_example);
	}
	if (ret)
		return ret;
	f->problems = 0;
	for (i = 0; i < f->n; i++)
		f->problems += f->s[i].problem != NULL;
	f->finished = 1;
	return f->problems;
}

int letw_facts_note(struct letw_trace_facts *f, size_t i, const char *fmt, ...)
{
	char *txt = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&txt, fmt, ap);
	va_end(ap);
	if (n < 0 || say(&f->s[i].note, "%s", txt)) {
		free(txt);
		return -ENOMEM;
	}
	free(txt);
	return 0;
}

/* The path and the words may quote file names from the trace directory. */
static void text_line(FILE *out, const char *prefix, const char *kind, const char *path,
		      const char *what)
{
	fprintf(out, "%s%sstream ", prefix, kind);
	letw_text_str(out, path);
	fputs(": ", out);
	letw_text_str(out, what);
	fputc('\n', out);
}

void letw_facts_write_text(const struct letw_trace_facts *f, FILE *out,
			   const char *prefix)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->s[i].problem)
			text_line(out, prefix, "", f->s[i].path, f->s[i].problem);
	for (i = 0; i < f->n; i++)
		if (f->s[i].note)
			text_line(out, prefix, "note: ", f->s[i].path, f->s[i].note);
}

void letw_facts_write_json(const struct letw_trace_facts *f, FILE *out)
{
	size_t i;

	fprintf(out, "\"trace\":{\"complete\":%s,\"incomplete_streams\":%d,\"streams\":[",
		f->problems ? "false" : "true", f->problems);
	for (i = 0; i < f->n; i++) {
		const struct letw_stream_facts *sf = &f->s[i];

		fprintf(out, "%s{\"path\":", i ? "," : "");
		letw_json_str(out, sf->path);
		fprintf(out, ",\"read\":%s,\"packets_read\":%" PRIu64 ",\"packets_indexed\":",
			sf->stream ? "true" : "false", sf->packets);
		if (sf->indexed < 0)
			fprintf(out, "null");
		else
			fprintf(out, "%" PRId64, sf->indexed);
		fprintf(out, ",\"discarded_events\":%" PRIu64 ",\"discarded_uncounted\":%s"
			",\"discarded_packets\":%" PRIu64 ",\"absurd_records\":%" PRIu64,
			sf->discarded_events, sf->discarded_uncounted ? "true" : "false",
			sf->discarded_packets, sf->absurd);
		if (sf->first_known)
			fprintf(out, ",\"first_packet_seq_num\":%" PRIu64, sf->first_seq);
		else
			fprintf(out, ",\"first_packet_seq_num\":null");
		fprintf(out, ",\"problem\":");
		if (sf->problem)
			letw_json_str(out, sf->problem);
		else
			fprintf(out, "null");
		fprintf(out, ",\"note\":");
		if (sf->note)
			letw_json_str(out, sf->note);
		else
			fprintf(out, "null");
		fputc('}', out);
	}
	fprintf(out, "]}");
}
