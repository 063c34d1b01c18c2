/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctf_index.h"
#include "event.h"
#include "grow.h"
#include "json_out.h"
#include "trace_facts.h"
#include "trace_facts_int.h"

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
		free(f->s[i].absurd_at);
		letw_grow_free(&f->s[i].pkt_at, sizeof(uint64_t));
		free(f->s[i].absurd_in.path);
		free(f->s[i].discarded_in.path);
		free(f->s[i].short_in.path);
	}
	free(f->s);
	for (i = 0; i < f->nfiles; i++)
		free(f->files[i].path);
	free(f->files);
	memset(f, 0, sizeof(*f));
}

struct letw_stream_facts *letw_facts_add(struct letw_trace_facts *f,
					 const bt_stream *stream, const char *path)
{
	struct letw_stream_facts *sf;

	if (letw_grow_small((void **)&f->s, &f->cap, f->n + 1, sizeof(*f->s)))
		return NULL;
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
	if (!letw_facts_add(f, stream, bt_stream_get_name(stream)))
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
		if (!sf->packets++)
			sf->pkt_clock = bt_stream_class_packets_have_beginning_default_clock_snapshot(
				bt_stream_borrow_class_const(sf->stream));
		if (sf->pkt_clock) {
			int ok = 0;

			const bt_clock_snapshot *cs =
				bt_message_packet_beginning_borrow_default_clock_snapshot_const(msg);

			/* Every packet's, for letw_facts_absurd() to say
			 * which file holds a record (one read per packet),
			 * and for finish to count each file's packets. */
			sf->pkt_raw = bt_clock_snapshot_get_value(cs);
			/* Out of memory, the list stops: finish then counts
			 * the stream as a whole (npkt_at != packets), as for a
			 * stream of one file; no reason to fail the run. */
			if (sf->npkt_at + 1 == sf->packets &&
			    !letw_grow(&sf->pkt_at, sizeof(uint64_t), sf->npkt_at + 1))
				((uint64_t *)sf->pkt_at.p)[sf->npkt_at++] = sf->pkt_raw;
			if (sf->packets == 1) {
				sf->first_ns = letw_clock_ns(cs, &ok);
				sf->first_raw = sf->pkt_raw;
				sf->has_first = ok;
			}
		}
		break;
	case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
		sf = of_stream(f, bt_message_discarded_events_borrow_stream_const(msg));
		if (!sf)
			break;
		if (bt_message_discarded_events_get_count(msg, &count) !=
		    BT_PROPERTY_AVAILABILITY_AVAILABLE) {
			sf->discarded_uncounted = 1;
		} else if (!letw_count_plausible(count)) {
			sf->discarded_uncounted = 1;
			sf->discarded_back = 1;
		} else {
			sf->discarded_events = letw_count_add(sf->discarded_events, count);
		}
		break;
	case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
		sf = of_stream(f, bt_message_discarded_packets_borrow_stream_const(msg));
		if (!sf)
			break;
		/* babeltrace2 emits this for a packet sequence number gap;
		 * the count is the gap's width. */
		if (bt_message_discarded_packets_get_count(msg, &count) !=
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			sf->discarded_packets++;
		else if (!letw_count_plausible(count))
			sf->seq_back = 1;
		else
			sf->discarded_packets = letw_count_add(sf->discarded_packets, count);
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
	/* The packet that holds it, once per packet: at finish, the stream's
	 * files say which of them that packet is in. */
	if (sf->pkt_clock && sf->packets &&
	    (!sf->nabsurd_at || sf->absurd_at[sf->nabsurd_at - 1] != sf->pkt_raw)) {
		if (letw_grow_small((void **)&sf->absurd_at, &sf->absurd_at_cap, sf->nabsurd_at + 1,
				    sizeof(*sf->absurd_at)))
			return -ENOMEM;
		sf->absurd_at[sf->nabsurd_at++] = sf->pkt_raw;
	}
	return 0;
}

/* ---- the end-of-graph judgement ---- */

/* Append sep-separated text to *dst. Returns 0 or -ENOMEM. */
static int vsay(char **dst, const char *sep, const char *fmt, va_list ap)
{
	char *add_txt = NULL, *joined = NULL;
	int n = vasprintf(&add_txt, fmt, ap);

	if (n < 0)
		return -ENOMEM;
	if (!*dst) {
		*dst = add_txt;
		return 0;
	}
	n = asprintf(&joined, "%s%s%s", *dst, sep, add_txt);
	free(add_txt);
	if (n < 0)
		return -ENOMEM;
	free(*dst);
	*dst = joined;
	return 0;
}

int letw_facts_say(char **dst, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsay(dst, "; ", fmt, ap);
	va_end(ap);
	return ret;
}

int letw_facts_say_sep(char **dst, const char *sep, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsay(dst, sep, fmt, ap);
	va_end(ap);
	return ret;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
}

/* Absurd records or discarded events, and in which files of a rotated
 * stream (the line names the stream by its first file). Returns 0 or
 * -ENOMEM. */
static int say_absurd(const struct letw_trace_facts *f, struct letw_stream_facts *sf)
{
	char *where = NULL;
	int ret = letw_facts_locate_files(f, sf, LETW_FILES_ABSURD, &where);

	if (!ret)
		ret = letw_facts_say(&sf->problem, "%" PRIu64 " lttng-etw record(s) with absurd values, ignored (e.g. %s)%s%s",
				     sf->absurd, sf->absurd_example, where ? ": in " : "",
				     where ? where : "");
	free(where);
	return ret;
}

static int say_discarded(const struct letw_trace_facts *f, struct letw_stream_facts *sf)
{
	char *where = NULL;
	int ret = letw_facts_locate_files(f, sf, LETW_FILES_DISCARDED, &where);
	const char *in = where ? ": in " : "", *files = where ? where : "";

	if (!ret && sf->discarded_events)
		ret = letw_facts_say(&sf->problem, "%" PRIu64 " event(s) discarded by the tracer%s%s",
				     sf->discarded_events, in, files);
	else if (!ret) /* the caller's: uncounted, the counter never went back */
		ret = letw_facts_say(&sf->problem, "events discarded by the tracer (count unknown)%s%s",
				     in, files);
	free(where);
	return ret;
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

		ret = letw_facts_check_read(f, &f->s[i]);
		if (ret || !f->s[i].path[0] || stat(f->s[i].path, &st) != 0)
			continue;
		if (f->s[i].stream && S_ISREG(st.st_mode))
			letw_facts_read_first_packet(&f->s[i]);
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
		ret = letw_facts_scan_dir(f, dirs[j]);
	for (j = 0; j < ndirs; j++)
		free(dirs[j]);
	free(dirs);
	for (i = 0; i < f->n && !ret; i++) {
		struct letw_stream_facts *sf = &f->s[i];

		ret = letw_facts_check_packets_read(f, sf);
		if (!ret && (sf->discarded_events || (sf->discarded_uncounted && !sf->discarded_back)))
			ret = say_discarded(f, sf);
		if (!ret && sf->discarded_back) {
			char *where = NULL;

			ret = letw_facts_locate(f, sf, LETW_LOCATE_DISCARDED, &where);
			if (!ret)
				ret = letw_facts_say(&sf->problem, "the tracer's discarded-events count goes back (damaged events_discarded): events lost, how many unknown%s%s",
						     where ? ": " : "", where ? where : "");
			free(where);
		}
		if (!sf->stream)
			sf->part_of = letw_facts_part_of(f, sf->path);
		if (!ret && (sf->discarded_packets || sf->seq_back)) {
			char *where = NULL;

			ret = letw_facts_locate(f, sf, LETW_LOCATE_SEQ, &where);
			if (!ret && sf->seq_back)
				ret = letw_facts_say(&sf->problem, "packet sequence numbers go back (damaged packet_seq_num)%s%s",
						     where ? "; where they break: " : "", where ? where : "");
			else if (!ret)
				ret = letw_facts_say(&sf->problem, "%" PRIu64 " packet(s) missing (packet sequence numbers skip them%s%s)",
						     sf->discarded_packets, where ? ": " : "", where ? where : "");
			free(where);
		}
		if (!ret && sf->absurd)
			ret = say_absurd(f, sf);
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
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsay(&f->s[i].note, "; ", fmt, ap);
	va_end(ap);
	return ret;
}

/* The path and the words may quote file names from the trace directory. */
static void text_line(FILE *out, const char *prefix, const char *kind, const char *path,
		      const char *what)
{
	char *p = letw_text_dup(path), *w = letw_text_dup(what);

	/* One write: out may be stderr (letw_text_dup). */
	if (p && w)
		fprintf(out, "%s%sstream %s: %s\n", prefix, kind, p, w);
	else
		fprintf(out, "%s%sstream (out of memory)\n", prefix, kind);
	free(p);
	free(w);
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

/* ,"KEY":[paths] of a rotated stream's files; null: the stream's own. */
static void write_files(FILE *out, const char *key, const struct letw_file_list *in)
{
	fprintf(out, ",\"%s\":", key);
	if (!in->n) {
		fprintf(out, "null");
		return;
	}
	for (size_t k = 0; k < in->n; k++) {
		fputc(k ? ',' : '[', out);
		letw_json_str(out, in->path[k]);
	}
	fputc(']', out);
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
		/* A later file of a rotated stream was read, as part of the
		 * stream named by its first file. */
		fprintf(out, ",\"read\":%s,\"part_of\":", sf->stream || sf->part_of ? "true" : "false");
		if (sf->part_of)
			letw_json_str(out, f->s[sf->part_of - 1].path);
		else
			fprintf(out, "null");
		fprintf(out, ",\"packets_read\":%" PRIu64 ",\"packets_indexed\":", sf->packets);
		if (sf->indexed < 0)
			fprintf(out, "null");
		else
			fprintf(out, "%" PRId64, sf->indexed);
		fprintf(out, ",\"discarded_events\":%" PRIu64 ",\"discarded_uncounted\":%s"
			",\"discarded_packets\":%" PRIu64 ",\"seq_went_back\":%s,\"absurd_records\":%" PRIu64,
			sf->discarded_events, sf->discarded_uncounted ? "true" : "false",
			sf->discarded_packets, sf->seq_back ? "true" : "false", sf->absurd);
		write_files(out, "absurd_in", &sf->absurd_in);
		write_files(out, "discarded_in", &sf->discarded_in);
		write_files(out, "short_in", &sf->short_in);
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
