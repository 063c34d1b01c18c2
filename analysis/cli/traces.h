/* SPDX-License-Identifier: MIT */
/* Finding the CTF traces under a directory (every directory holding a
 * `metadata` file), the way babeltrace2's src.ctf.fs would be given them,
 * and the chunks of a rotated session directory. */
#ifndef LETW_CLI_TRACES_H
#define LETW_CLI_TRACES_H

#include <stddef.h>

struct letw_traces {
	char **dir;
	size_t n, cap;
};

/* Returns 0 with at least one trace, -1 after printing why not (the root
 * or a directory under it cannot be read, or holds no trace). */
int letw_traces_find(const char *root, struct letw_traces *t);
void letw_traces_fini(struct letw_traces *t);

/* 1 when TRACE names a live session (net://, net4://), not a directory. */
int letw_trace_is_live(const char *trace);

/* The chunks of a session directory that was rotated: each directory
 * ROOT/archives/<chunk> is a trace of its own (own metadata, own rundown
 * passes), read on its own, in chunk (name) order; then the chunk a
 * session stopped but not destroyed still records into, beside archives/
 * (ROOT/BEGIN-N, LTTng's name for it). Other directories beside archives/
 * are not read (said when they hold a trace), files are skipped (the
 * CLI's own output). Likewise the snapshots of a snapshot session, when
 * ROOT holds nothing but two or more of LTTng's snapshot outputs
 * (NAME-YYYYMMDD-HHMMSS-N): each is a copy of the same ring buffers at
 * another time (the same trace UUID, overlapping packets), read on its
 * own, in snapshot-number (N) order. Fills t->dir with each chunk's path
 * relative to ROOT ("archives/NAME", "NAME"). Returns 0 (t->n == 0 when
 * ROOT is a live URL or neither), -1 after printing why (archives/ or ROOT
 * unreadable, archives/ holding something other than a directory, out of
 * memory). */
int letw_trace_chunks(const char *root, struct letw_traces *t);

/* The name of a chunk (its last component) from its path in t->dir. */
const char *letw_trace_chunk_name(const char *rel);

#endif /* LETW_CLI_TRACES_H */
