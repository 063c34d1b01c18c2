/* SPDX-License-Identifier: MIT */
/*
 * Shared by trace_facts.c (the messages and the verdict) and
 * trace_files.c (the stream files on disk); not for the sinks.
 */
#ifndef LETW_BT_TRACE_FACTS_INT_H
#define LETW_BT_TRACE_FACTS_INT_H

#include "trace_facts.h"

/* Append "; "-separated text to *dst (a stream's problems, its notes).
 * Returns 0 or -ENOMEM. */
int letw_facts_say(char **dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, separated by sep (", " between files in a problem). */
int letw_facts_say_sep(char **dst, const char *sep, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A new entry for stream (referenced; NULL for an unread file) named by
 * path, or NULL without memory. */
struct letw_stream_facts *letw_facts_add(struct letw_trace_facts *f,
					 const bt_stream *stream, const char *path);

/* A read stream's first file against its index. Returns 0 or -ENOMEM. */
int letw_facts_check_read(struct letw_trace_facts *f, struct letw_stream_facts *sf);
/* first_known, first_seq, first_discarded from the stream's first file. */
void letw_facts_read_first_packet(struct letw_stream_facts *sf);
/* Every index file of dir whose stream file no stream came from: lost, or
 * a later file of a rotated stream, checked against its own index.
 * Returns 0 or -ENOMEM. */
int letw_facts_scan_dir(struct letw_trace_facts *f, const char *dir);

/* After the above: where the stream's sequence numbers skip or go back
 * (LETW_LOCATE_SEQ), or its discarded-events count goes back
 * (LETW_LOCATE_DISCARDED), file by file: babeltrace2 says it of the
 * stream, named by its first file. *where is NULL when its files do not
 * say (no index 1.1). Returns 0 or -ENOMEM. */
enum letw_facts_locate_what { LETW_LOCATE_SEQ, LETW_LOCATE_DISCARDED };
int letw_facts_locate(const struct letw_trace_facts *f, const struct letw_stream_facts *sf,
		      enum letw_facts_locate_what what, char **where);
/* After the above: the files of sf's rotated stream holding its absurd
 * records (LETW_FILES_ABSURD, from sf->absurd_at, into sf->absurd_in), or
 * where its discarded-events counter rose (LETW_FILES_DISCARDED, into
 * sf->discarded_in), and *where = "`FILE`, `FILE`" (NULL, and no file,
 * when the stream is one file or its files do not say: no index 1.1).
 * Returns 0 or -ENOMEM. */
enum letw_facts_files_what { LETW_FILES_ABSURD, LETW_FILES_DISCARDED };
int letw_facts_locate_files(const struct letw_trace_facts *f, struct letw_stream_facts *sf,
			    enum letw_facts_files_what what, char **where);
/* After the above: a read stream's packets against its index, file by
 * file for a rotated stream (into sf->short_in): the reader counts the
 * whole stream, each file's index lists its own. Appends to sf->problem;
 * returns 0 or -ENOMEM. */
int letw_facts_check_packets_read(const struct letw_trace_facts *f,
				  struct letw_stream_facts *sf);
/* An unread file holding packets of a stream that was read: a later file
 * of a rotated stream (1 + that stream's index), or 0. */
size_t letw_facts_part_of(const struct letw_trace_facts *f, const char *path);

#endif /* LETW_BT_TRACE_FACTS_INT_H */
