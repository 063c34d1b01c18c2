/* SPDX-License-Identifier: MIT */
/*
 * Driver for the merge of a chunked trace's jitdumps
 * (analysis/cli/jitdump_merge.c): writes CHUNKS synthetic chunk dumps of
 * one process holding LOADS LOAD records in all, merges them into
 * DIR/jit-77.dump and prints how long the merge took. Not a test: run by
 * hand to measure, and to compare the merged bytes of two builds (the same
 * SEED writes the same chunks).
 *
 *   letw-bench-jdmerge DIR CHUNKS LOADS [SEED [rotate|snap [VERSIONS]]]
 *
 * rotate (default): each chunk's rundown re-enumerates, before the chunk,
 * half of the code live at its start (most identical: written once; some
 * other code at the same place: dated at the chunk's start), then loads
 * new code, some over live code, some large regions holding smaller ones,
 * some with line tables or real bytes, a few MOVEs. snap: overlapping
 * snapshots, each holding the previous one's loads again at their times.
 * VERSIONS (default 4): LOADs per address on average, over the whole
 * trace (the merge walks every version kept at an address).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "jitdump_format.h"
#include "jitdump_merge.h"
#include "jitdump_write.h"

/* The CLI's, here: the merge's notes go to stderr. */
volatile sig_atomic_t letw_interrupted;

void letw_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void letw_note(const char *fmt, ...) __attribute__((alias("letw_err")));

#define PID 77u

struct slot {
	char name[48];
	uint32_t size;
	int real, live;
	uint8_t code[64];
};

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static int load(struct letw_jd_out *o, uint64_t ts, uint64_t addr, const struct slot *s,
		uint64_t index)
{
	struct letw_jd_line ln[2] = { { addr, 7, "/src/a.c" }, { addr + 8, 8, "/src/a.c" } };
	int err = 0;

	if (s->real && s->size >= 16)
		err = letw_jd_write_debug_info(o, ts, addr, ln, 2, 0);
	return err ? err : letw_jd_write_load(o, ts, PID, PID, addr, s->size, index, s->name,
					      s->real ? s->code : NULL);
}

/* A MOVE of the LOAD numbered index (its code left where it is). */
static int move(struct letw_jd_out *o, uint64_t ts, uint64_t addr, uint32_t size,
		uint64_t index)
{
	uint8_t m[LETW_JD_MOVE_FIXED];
	uint32_t u32 = LETW_JD_CODE_MOVE;
	uint64_t u64[6] = { addr, addr, addr, size, index };

	memcpy(m, &u32, 4);
	u32 = sizeof(m);
	memcpy(m + 4, &u32, 4);
	memcpy(m + 8, &ts, 8);
	u32 = PID;
	memcpy(m + 16, &u32, 4);
	memcpy(m + 20, &u32, 4);
	memcpy(m + 24, u64, 40);
	return letw_jd_write_raw(o, m, sizeof(m));
}

static void new_code(struct slot *s, unsigned k, unsigned i, int big)
{
	snprintf(s->name, sizeof(s->name), "fn_%u_%u", k, i);
	s->size = big ? 64 * 8 : 16 + 8 * rnd(6);
	if (s->size > sizeof(s->code))
		s->real = 0;
	else
		s->real = rnd(4) == 0;
	for (size_t b = 0; b < sizeof(s->code); b++)
		s->code[b] = (uint8_t)rnd(256);
	s->live = 1;
}

int main(int argc, char **argv)
{
	unsigned chunks, loads, snap, versions;
	struct letw_jd_chunk_out *c;
	struct slot *slot;
	uint64_t *prev_ts = NULL, *ts_of;
	size_t nslots;
	struct timespec began, t0, t1;
	int merged, r;

	if (argc < 4 || atoi(argv[2]) < 1 || atoi(argv[3]) < atoi(argv[2])) {
		fprintf(stderr, "usage: %s DIR CHUNKS LOADS [SEED [rotate|snap [VERSIONS]]]\n",
			argv[0]);
		return 2;
	}
	chunks = (unsigned)atoi(argv[2]);
	loads = (unsigned)atoi(argv[3]);
	rng = argc > 4 ? strtoull(argv[4], NULL, 0) | 1 : 88172645463325252ull;
	snap = argc > 5 && strcmp(argv[5], "snap") == 0;
	versions = argc > 6 && atoi(argv[6]) > 0 ? (unsigned)atoi(argv[6]) : 4;
	nslots = loads / versions + 16;
	slot = calloc(nslots, sizeof(*slot));
	ts_of = calloc(nslots, sizeof(*ts_of));
	prev_ts = calloc(nslots, sizeof(*prev_ts));
	c = calloc(chunks, sizeof(*c));
	if (!slot || !ts_of || !prev_ts || !c || mkdir(argv[1], 0755) != 0) {
		perror(argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &began);
	for (unsigned k = 0; k < chunks; k++) {
		uint64_t start = 1000 + (uint64_t)k * 100000, index = 1, ts = start + 1;
		unsigned quota = loads / chunks + (k < loads % chunks), wrote = 0;
		struct letw_jd_out o;
		char *path;
		int fd;

		c[k].written = c[k].clock_known = 1;
		c[k].began = began;
		strcpy(c[k].clock.name, "monotonic");
		if (asprintf(&c[k].name, "c%u", k) < 0 ||
		    asprintf(&c[k].dir, "%s/c%u", argv[1], k) < 0 || mkdir(c[k].dir, 0755) ||
		    asprintf(&path, "%s/jit-%u.dump", c[k].dir, PID) < 0) {
			perror("chunk");
			return 1;
		}
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || letw_jd_out_init(&o, fd) ||
		    letw_jd_write_header(&o, 62, PID, start)) {
			perror(path);
			return 1;
		}
		/* The rundown (or the snapshot's repeat of the last one). */
		for (size_t s = 0; k && s < nslots && wrote < quota / 2; s++) {
			uint64_t at = snap ? prev_ts[s] : 1;

			if (!slot[s].live || (snap ? !prev_ts[s] : rnd(2)))
				continue;
			if (!snap && rnd(16) == 0)
				new_code(&slot[s], k, (unsigned)(1000000 + s), 0);
			if (load(&o, at, 0x10000 + s * 64, &slot[s], index++)) {
				perror(path);
				return 1;
			}
			wrote++;
		}
		memset(ts_of, 0, nslots * sizeof(*ts_of));
		for (unsigned i = 0; wrote < quota; i++, wrote++) {
			/* One region in 512 spans 8 slots (holding smaller ones). */
			int big = rnd(512) == 0;
			size_t s = rnd((unsigned)nslots - (big ? 8 : 0));

			new_code(&slot[s], k, i, big);
			ts += 1 + rnd(8);
			ts_of[s] = ts;
			if (load(&o, ts, 0x10000 + s * 64, &slot[s], index++) ||
			    (rnd(64) == 0 && move(&o, ts + 1, 0x10000 + s * 64, slot[s].size,
						  index - 1))) {
				perror(path);
				return 1;
			}
		}
		memcpy(prev_ts, ts_of, nslots * sizeof(*ts_of));
		if (letw_jd_write_close(&o, start + 90000) || letw_jd_out_close(&o) || close(fd)) {
			perror(path);
			return 1;
		}
		free(path);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = letw_jd_merge_chunks(argv[1], c, chunks, &merged);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%u chunks, %u LOADs (%s, %u per address): merge %.3f s, returned %d, %d merged\n",
	       chunks, loads, snap ? "snap" : "rotate", versions,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, r,
	       merged);
	for (unsigned k = 0; k < chunks; k++) {
		free(c[k].name);
		free(c[k].dir);
	}
	free(c);
	free(slot);
	free(ts_of);
	free(prev_ts);
	return r || merged != 1;
}
