/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "watch_hold.h"

/* A pass's size in a chunk: the payload bytes its process counted
 * (LETW_CTL_STATUS_EMITTED: fields, strings, line tables, code bytes), plus
 * for each record what the session adds, at most this: measured 95.5 bytes
 * a method_dcstart with the vpid/vtid context (letw-minijit, 20,000
 * functions: 1,904,640 bytes of stream for 19,943 records, packet headers
 * included) of which 82 are payload, i.e. ~14 of header and context; 64
 * leaves room for a large event header and a few more contexts. */
#define PASS_RECORD_OVERHEAD 64ull
/* ... and its init and complete, for each flavour, with their overhead. */
#define PASS_EXTRA_BYTES (4ull * 128ull)
/* A pass whose bound reaches this share of the rotation size could have
 * filled the chunk with what the runtime wrote besides; one below it
 * cannot rotate by itself, and the next rotation's pass lands in a chunk
 * with at least half of it left. */
#define PASS_SIZE_SHARE_DIV 2ull

const char *letw_watch_held_back(double since_s, uint64_t size, const struct letw_proc *v,
				 int n, char *reason, size_t len)
{
	uint64_t records = 0, bytes = 0;
	int busy = 0, unknown = !v;

	if (since_s >= LETW_WATCH_OWN_PASS_BUSY_S)
		return NULL;
	/* Every listed process counts, traced by this session or not (not
	 * known here): a bound, not the chunk's share. */
	for (int i = 0; v && i < n; i++) {
		if (!v[i].alive)
			continue;
		busy += v[i].busy;
		if (!v[i].busy && !v[i].sized)
			unknown = 1;
		if (!v[i].last_records)
			continue;
		records += v[i].last_records;
		bytes += v[i].last_bytes + v[i].last_records * PASS_RECORD_OVERHEAD +
			 PASS_EXTRA_BYTES;
	}
	if (busy) {
		snprintf(reason, len, "its pass, likely what filled the chunk, goes on into "
			 "this one; a rotation size smaller than a pass would rotate for ever: "
			 "raise it");
		return "while a process was busy in a pass, after watch's statedump for the "
		       "previous chunk";
	}
	if (since_s >= LETW_WATCH_OWN_PASS_S)
		return NULL;
	if (unknown || !size) {
		snprintf(reason, len, "the size of its pass is unknown%s, and it may be what "
			 "filled the chunk; a rotation size smaller than a pass would rotate "
			 "for ever", v ? " (an lttng-etw process from before it was told)" : "");
		return "within 5 s of watch's statedump for the previous chunk";
	}
	if (bytes >= size / PASS_SIZE_SHARE_DIV) {
		snprintf(reason, len, "its passes wrote %llu records, up to %llu bytes, at "
			 "least half the rotation size of %llu bytes: they may be what filled "
			 "the chunk, and a rotation size smaller than a pass would rotate for "
			 "ever: raise it", (unsigned long long)records, (unsigned long long)bytes,
			 (unsigned long long)size);
		return "within 5 s of watch's statedump for the previous chunk";
	}
	return NULL;
}
