/* SPDX-License-Identifier: MIT */
/*
 * `lttng-etw jitdump` over a rotated session's chunks (or a snapshot
 * session's snapshots): after each chunk's graph wrote DIR/<chunk>/
 * jit-PID.dump, one dump per process at DIR/jit-PID.dump (the path the
 * runtime mapped, which `perf inject --jit` reads) holding every chunk's
 * records in time order, so that a `perf record` spanning rotations is
 * named in all of them.
 */
#ifndef LETW_CLI_JITDUMP_MERGE_H
#define LETW_CLI_JITDUMP_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "clock_id.h"

/* What a chunk's run wrote, as cmd_jitdump.c saw it. */
struct letw_jd_chunk_out {
	char *name;           /* the chunk's name */
	char *dir;            /* DIR/<chunk> */
	struct timespec began; /* CLOCK_REALTIME_COARSE before its run: files
				* older are not this run's */
	int written;          /* its run succeeded (its dumps are written) */
	int many_pidns;       /* its dumps are in DIR/<chunk>/pidns-INO/ */
	uint64_t pidns_only;  /* else the one pid namespace they are of (0:
			       * not known) */
	/* The clock its times are raw values of (struct letw_sink_result). */
	struct letw_clock_id clock;
	int clock_known, clocks_mixed;
};

/* Merge the dumps of the n chunks (in chunk order) into dir. What cannot be
 * merged is said (letw_note, naming the chunk) and left per chunk. Returns
 * 0; -EINTR when interrupted (the dump being written is not put in place);
 * -EIO after printing why a merged dump could not be written. *merged:
 * the processes whose merged dump is in place. */
int letw_jd_merge_chunks(const char *dir, const struct letw_jd_chunk_out *c, size_t n,
			 int *merged);

#endif /* LETW_CLI_JITDUMP_MERGE_H */
