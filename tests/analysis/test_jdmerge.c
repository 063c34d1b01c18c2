/* SPDX-License-Identifier: MIT */
/* Merging a chunked trace's dumps (analysis/cli/jitdump_merge.c), on dumps
 * written by the sink's own writer: every chunk's code in time order,
 * code live across a rotation (re-enumerated by the next chunk's rundown,
 * dated "before the chunk") written once, code the next rundown finds at
 * an address the earlier chunk mapped otherwise dated at the next chunk's
 * start, code_index
 * renumbered (filler bytes made anew for it), DEBUG_INFO still right
 * before its LOAD; the placeholder's process start kept; chunks on two
 * clocks, or whose dumps disagree, left unmerged with the chunk named;
 * MOVE records naming their LOAD by its new code_index; five chunks, and
 * random traces of up to nine, merged as the rule says (a plain scan of
 * every earlier LOAD, not the merge's sorted runs). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli.h"
#include "jitdump_write.h"
#include "jdmerge_fixture.h"

Test(jdmerge, rotation_in_time_order_once_each)
{
	char *dir = jdm_tmpdir(), *p;
	struct letw_jd_chunk_out c[2];
	/* c1: early (its rundown), fn_0 and tmp loaded. */
	const struct load c1[] = {
		{ 1, 0x1000, "early", 0, 0, 0 },
		{ 1500, 0x2000, "fn_0", 1, 1, 0 },
		{ 1600, 0x3000, "tmp", 0, 0, 0 },
	};
	/* c2: its rundown re-enumerates early and fn_0 (identical), finds
	 * other where tmp was; then fn_3 replaces fn_0. */
	const struct load c2[] = {
		{ 1, 0x1000, "early", 0, 0, 0 },
		{ 1, 0x2000, "fn_0", 1, 1, 0 },
		{ 1, 0x3000, "other", 0, 1, 0 },
		{ 3500, 0x2000, "fn_3", 0, 1, 0 },
	};
	const struct { uint64_t ts, addr; const char *name; } want[] = {
		{ 1, 0x1000, "early" }, { 1500, 0x2000, "fn_0" }, { 1600, 0x3000, "tmp" },
		/* Not at tmp's load + 1: tmp's samples up to the second
		 * chunk's start are tmp's. */
		{ 3000, 0x3000, "other" }, { 3500, 0x2000, "fn_3" },
	};
	struct got g;
	size_t k = 0;
	int merged;

	jdm_two_chunks(c, dir, 62, 1000, c1, 3, 3000, c2, 4);
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0, "%s", jdm_said);
	cr_assert_eq(merged, 1, "%s", jdm_said);
	cr_assert(strstr(jdm_said, "5 LOAD record(s), 2 repeated across chunks written once"), "%s", jdm_said);
	p = jdm_dump_path(dir);
	jdm_read_dump(p, &g);
	free(p);
	cr_assert_eq(g.h.pid, JDM_PID);
	cr_assert_eq(g.h.elf_mach, 62u);
	cr_assert_eq(g.h.timestamp, 1000u, "the first chunk's start");
	for (size_t i = 0; i < g.n; i++) {
		const struct letw_jd_rec *r = &g.rec[i];

		if (r->id != LETW_JD_CODE_LOAD)
			continue;
		cr_assert(k < 5);
		cr_assert_eq(r->ts, want[k].ts, "LOAD %zu (%s) at %llu", k, r->name,
			     (unsigned long long)r->ts);
		cr_assert_eq(r->code_addr, want[k].addr);
		cr_assert_str_eq(r->name, want[k].name);
		cr_assert_eq(r->code_index, k + 1, "code_index renumbered in file order");
		if (strcmp(r->name, "fn_0") == 0) {
			cr_assert_eq(memcmp(r->code, JDM_CODE, 16), 0, "real bytes kept");
		} else {
			uint8_t fill[16];

			letw_jd_filler(fill, 16, k + 1, JDM_PID);
			cr_assert_eq(memcmp(r->code, fill, 16), 0,
				     "filler made for the new code_index (unique build id)");
		}
		/* fn_0, other and fn_3 have line tables: right before them. */
		cr_assert_eq(i > 0 && g.rec[i - 1].id == LETW_JD_CODE_DEBUG_INFO,
			     !strcmp(r->name, "fn_0") || !strcmp(r->name, "fn_3") ||
				     !strcmp(r->name, "other"),
			     "DEBUG_INFO before %s", r->name);
		k++;
	}
	cr_assert_eq(k, 5);
	/* In time order, other's DEBUG_INFO too: dated with its LOAD at the
	 * second chunk's start (it kept the placeholder's 1, before tmp). */
	for (size_t i = 1; i < g.n; i++)
		cr_assert_geq(g.rec[i].ts, g.rec[i - 1].ts, "record %zu (id %u) at %llu, before %llu",
			      i, g.rec[i].id, (unsigned long long)g.rec[i].ts,
			      (unsigned long long)g.rec[i - 1].ts);
	cr_assert_eq(g.rec[g.n - 1].id, LETW_JD_CODE_CLOSE, "one CLOSE, last");
	cr_assert_eq(g.rec[g.n - 1].ts, 8000u, "at the last chunk's CLOSE");
	jdm_rmtree(dir);
}

Test(jdmerge, snapshots_overlapping_not_doubled_placeholder_start_kept)
{
	char *dir = jdm_tmpdir(), *p;
	struct letw_jd_chunk_out c[2];
	const struct load s1[] = { { 1, 0x1000, "early", 0, 0, 0 }, { 1500, 0x2000, "fn_0", 1, 0, 0 } };
	const struct load s2[] = { { 1, 0x1000, "early", 0, 0, 0 }, { 1500, 0x2000, "fn_0", 1, 0, 0 },
				   { 2500, 0x4000, "late", 0, 0, 0 } };
	struct got g;
	int merged;

	jdm_two_chunks(c, dir, 62, 1000, s1, 2, 1200, s2, 3);
	/* The runtime's placeholder: the process began at 400. */
	p = jdm_dump_path(dir);
	jdm_write_dump(p, 62, 400, NULL, 0);
	jdm_said[0] = '\0';
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0, "%s", jdm_said);
	cr_assert_eq(merged, 1, "%s", jdm_said);
	jdm_read_dump(p, &g);
	free(p);
	cr_assert_eq(g.h.timestamp, 400u, "the process's start, from the placeholder");
	cr_assert_eq(g.n, 4u, "early, fn_0, late, CLOSE: the overlap once");
	cr_assert_str_eq(g.rec[0].name, "early");
	cr_assert_eq(g.rec[0].ts, 401u, "code there before the trace: from the process's start");
	cr_assert_str_eq(g.rec[1].name, "fn_0");
	cr_assert_str_eq(g.rec[2].name, "late");
	jdm_rmtree(dir);
}

Test(jdmerge, refused_with_the_chunk_named)
{
	char *dir = jdm_tmpdir(), *p;
	struct letw_jd_chunk_out c[2];
	const struct load l[] = { { 1500, 0x2000, "fn_0", 1, 0, 0 } };
	int merged;

	jdm_two_chunks(c, dir, 183, 1000, l, 1, 3000, l, 1);
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0);
	cr_assert_eq(merged, 0);
	cr_assert(strstr(jdm_said, "chunk c2's dump") && strstr(jdm_said, "ELF machine differs"), "%s", jdm_said);
	p = jdm_dump_path(dir);
	cr_assert_neq(access(p, F_OK), 0, "no merged dump");

	/* Another clock: nothing merged, both chunks named. */
	c[1].written = 1;
	strcpy(c[1].clock.name, "realtime");
	jdm_said[0] = '\0';
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0);
	cr_assert_eq(merged, 0);
	cr_assert(strstr(jdm_said, "chunk c1 dates its events with clock `monotonic` and chunk c2 with another (`realtime`"),
		  "%s", jdm_said);
	cr_assert_neq(access(p, F_OK), 0, "no merged dump");
	free(p);
	jdm_rmtree(dir);
}

/* One process whose merged dump cannot be written (its pidns-INO a file)
 * costs the others nothing: every later one was left unmerged. */
Test(jdmerge, a_process_that_fails_does_not_stop_the_others)
{
	char *dir = jdm_tmpdir(), *p, *f;
	struct letw_jd_chunk_out c[2];
	const struct load l[] = { { 1500, 0x2000, "fn_0", 1, 0, 0 } };
	int merged, fd;

	for (int i = 0; i < 2; i++) {
		jdm_chunk(&c[i], dir, i);
		c[i].many_pidns = 1;
		for (int ns = 1; ns <= 2; ns++) {
			char *sub;

			cr_assert(asprintf(&sub, "%s/pidns-%d", c[i].dir, ns) > 0);
			cr_assert_eq(mkdir(sub, 0755), 0);
			p = jdm_dump_path(sub);
			jdm_write_dump(p, 62, 1000 + 2000 * (uint64_t)i, l, 1);
			free(p);
			free(sub);
		}
	}
	cr_assert(asprintf(&f, "%s/pidns-1", dir) > 0);
	fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0644);
	cr_assert(fd >= 0);
	close(fd);
	jdm_said[0] = '\0';
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), -EIO, "%s", jdm_said);
	cr_assert_eq(merged, 1, "the other namespace's process merged: %s", jdm_said);
	cr_assert(strstr(jdm_said, "pidns-1"), "the failing one named: %s", jdm_said);
	cr_assert(asprintf(&p, "%s/pidns-2/jit-%u.dump", dir, JDM_PID) > 0);
	cr_assert_eq(access(p, F_OK), 0, "%s: %s", p, jdm_said);
	free(p);
	free(f);
	jdm_rmtree(dir);
}

/* Only this run's dumps are merged: one older than the chunk's run (a
 * dump of an earlier run, of a process this chunk no longer holds), or
 * dated in the future (copied, planted), is left out; an untouched one,
 * the control, is in. */
Test(jdmerge, dumps_not_of_this_run_left_out)
{
	static const long shift[] = { 0, -3600, 3600 };
	const struct load c1[] = { { 1500, 0x2000, "fn_0", 0, 0, 0 } };
	const struct load c2[] = { { 3500, 0x4000, "fn_9", 0, 0, 0 } };

	for (size_t k = 0; k < sizeof(shift) / sizeof(shift[0]); k++) {
		char *dir = jdm_tmpdir(), *p;
		struct letw_jd_chunk_out c[2];
		struct timespec now, t[2];
		int merged;

		jdm_two_chunks(c, dir, 62, 1000, c1, 1, 3000, c2, 1);
		clock_gettime(CLOCK_REALTIME, &now);
		c[0].began = c[1].began = now;
		c[0].began.tv_sec -= 1;
		c[1].began.tv_sec -= 1;
		t[0] = t[1] = now;
		t[0].tv_sec += shift[k];
		t[1].tv_sec += shift[k];
		p = jdm_dump_path(c[1].dir);
		cr_assert_eq(utimensat(AT_FDCWD, p, t, 0), 0);
		free(p);
		cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0, "%s", jdm_said);
		cr_assert_eq(merged, 1, "%s", jdm_said);
		cr_assert(strstr(jdm_said, k ? "1 LOAD record(s)" : "2 LOAD record(s)"),
			  "mtime shifted %ld s: %s", shift[k], jdm_said);
		jdm_rmtree(dir);
	}
}

/* A dump of LOADs (with their own code_index) and MOVEs naming them. */
struct rec {
	int move;
	uint64_t ts, addr, index;
	const char *name; /* LOAD */
};

static void write_moves(const char *path, uint64_t start, const struct rec *r, size_t n)
{
	struct letw_jd_out o;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert(fd >= 0);
	cr_assert_eq(letw_jd_out_init(&o, fd), 0);
	cr_assert_eq(letw_jd_write_header(&o, 62, JDM_PID, start), 0);
	for (size_t i = 0; i < n; i++) {
		uint8_t m[LETW_JD_MOVE_FIXED];
		uint32_t u32[4] = { LETW_JD_CODE_MOVE, sizeof(m), JDM_PID, JDM_PID };
		/* vma, old_code_addr, new_code_addr, code_size, code_index */
		uint64_t u64[5] = { r[i].addr, r[i].addr, r[i].addr, 16, r[i].index };

		if (!r[i].move) {
			cr_assert_eq(letw_jd_write_load(&o, r[i].ts, JDM_PID, JDM_PID, r[i].addr, 16,
							r[i].index, r[i].name, JDM_CODE), 0);
			continue;
		}
		memcpy(m, u32, 8);
		memcpy(m + 8, &r[i].ts, 8);
		memcpy(m + 16, u32 + 2, 8);
		memcpy(m + 24, u64, sizeof(u64));
		cr_assert_eq(letw_jd_write_raw(&o, m, sizeof(m)), 0);
	}
	cr_assert_eq(letw_jd_write_close(&o, start + 5000), 0);
	cr_assert_eq(letw_jd_out_close(&o), 0);
	close(fd);
}

/* Every LOAD gets a new code_index in the merged file: a MOVE must name
 * its LOAD by the new one (perf looks the code up by it), also when its
 * LOAD was a repeat written once (the one written in its place). The
 * chunks' own numbers are chosen unlike the merged ones, so that a MOVE
 * keeping its old index is seen. */
Test(jdmerge, moves_name_their_load_by_its_new_index)
{
	char *dir = jdm_tmpdir(), *p;
	struct letw_jd_chunk_out c[2];
	const struct rec c1[] = {
		{ 0, 1500, 0x1000, 7, "fn_a" },
		{ 0, 1600, 0x2000, 9, "fn_b" },
		{ 1, 1700, 0x2000, 9, NULL },
	};
	/* Its rundown's fn_b is c1's, written once: its MOVE names c1's. */
	const struct rec c2[] = {
		{ 0, 1, 0x2000, 4, "fn_b" },
		{ 0, 3500, 0x3000, 5, "fn_c" },
		{ 1, 3600, 0x2000, 4, NULL },
		{ 1, 3700, 0x3000, 5, NULL },
	};
	/* (id, code_index) in the merged file's order */
	const uint64_t want[][2] = {
		{ LETW_JD_CODE_LOAD, 1 }, { LETW_JD_CODE_LOAD, 2 }, { LETW_JD_CODE_MOVE, 2 },
		{ LETW_JD_CODE_LOAD, 3 }, { LETW_JD_CODE_MOVE, 2 }, { LETW_JD_CODE_MOVE, 3 },
		{ LETW_JD_CODE_CLOSE, 0 },
	};
	struct got g;
	int merged;

	for (int i = 0; i < 2; i++) {
		jdm_chunk(&c[i], dir, i);
		p = jdm_dump_path(c[i].dir);
		write_moves(p, 1000 + 2000 * (uint64_t)i, i ? c2 : c1, i ? 4 : 3);
		free(p);
	}
	jdm_said[0] = '\0';
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0, "%s", jdm_said);
	cr_assert_eq(merged, 1, "%s", jdm_said);
	p = jdm_dump_path(dir);
	jdm_read_dump(p, &g);
	free(p);
	cr_assert_eq(g.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < g.n; i++) {
		cr_assert_eq(g.rec[i].id, want[i][0], "record %zu", i);
		if (g.rec[i].id != LETW_JD_CODE_CLOSE)
			cr_assert_eq(g.rec[i].code_index, want[i][1],
				     "record %zu (%s at %llu): code_index %llu, not %llu", i,
				     g.rec[i].id ? "MOVE" : "LOAD", (unsigned long long)g.rec[i].ts,
				     (unsigned long long)g.rec[i].code_index,
				     (unsigned long long)want[i][1]);
	}
	jdm_rmtree(dir);
}
