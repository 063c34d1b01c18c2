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
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli.h"
#include "jitdump_merge.h"
#include "jitdump_read.h"
#include "jitdump_write.h"

/* The CLI's own, here: what the merge says is kept to be checked. */
volatile sig_atomic_t letw_interrupted;
static char said[4096];

static void say(const char *fmt, va_list ap)
{
	size_t n = strlen(said);

	vsnprintf(said + n, sizeof(said) - n, fmt, ap);
	n = strlen(said);
	if (n + 1 < sizeof(said))
		strcat(said, "\n");
}

void letw_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

void letw_note(const char *fmt, ...) __attribute__((alias("letw_err")));

#define PID 77u
static const uint8_t CODE[16] = { 0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x5d, 0xc3,
				  0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3 };

struct load {
	uint64_t ts, addr;
	const char *name;
	int real;  /* CODE's bytes (1), or other bytes (2, 3...: code_of), else filler */
	int lines; /* a DEBUG_INFO before it */
	uint32_t size; /* 0: 16 */
};

#define MAX_CODE 256u

static uint32_t size_of(const struct load *l)
{
	return l->size ? l->size : 16;
}

/* The bytes l is written with: NULL for filler. */
static const uint8_t *code_of(const struct load *l, uint8_t *buf)
{
	uint32_t n = size_of(l);

	if (!l->real)
		return NULL;
	cr_assert_leq(n, MAX_CODE);
	for (uint32_t i = 0; i < n; i++)
		buf[i] = CODE[i % sizeof(CODE)];
	buf[0] ^= (uint8_t)(l->real - 1);
	return buf;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) != 0;
}

/* The test's directory goes with it (and is freed). */
static void rmtree(char *dir)
{
	cr_assert_eq(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0, "cannot remove %s", dir);
	free(dir);
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/letw-jdmerge.XXXXXX");

	cr_assert(mkdtemp(d));
	return d;
}

static void write_dump(const char *path, uint32_t mach, uint64_t start,
		       const struct load *l, size_t n)
{
	struct letw_jd_out o;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert(fd >= 0);
	cr_assert_eq(letw_jd_out_init(&o, fd), 0);
	cr_assert_eq(letw_jd_write_header(&o, mach, PID, start), 0);
	for (size_t i = 0; i < n; i++) {
		struct letw_jd_line ln[2] = { { l[i].addr, 7, "/src/a.c" },
					      { l[i].addr + 16, 8, "/src/a.c" } };
		uint8_t code[MAX_CODE];

		if (l[i].lines)
			cr_assert_eq(letw_jd_write_debug_info(&o, l[i].ts, l[i].addr, ln, 2, 0), 0);
		cr_assert_eq(letw_jd_write_load(&o, l[i].ts, PID, PID, l[i].addr, size_of(&l[i]),
						i + 1, l[i].name, code_of(&l[i], code)), 0);
	}
	cr_assert_eq(letw_jd_write_close(&o, start + 5000), 0);
	cr_assert_eq(letw_jd_out_close(&o), 0);
	close(fd);
}

/* Chunk i of n named c<i+1>, in dir/c<i+1>/, on clock "monotonic". */
static void chunk(struct letw_jd_chunk_out *c, const char *dir, int i)
{
	memset(c, 0, sizeof(*c));
	cr_assert(asprintf(&c->name, "c%d", i + 1) > 0);
	cr_assert(asprintf(&c->dir, "%s/c%d", dir, i + 1) > 0);
	cr_assert_eq(mkdir(c->dir, 0755), 0);
	c->written = 1;
	c->clock_known = 1;
	strcpy(c->clock.name, "monotonic");
}

static char *dump_path(const char *dir)
{
	char *p;

	cr_assert(asprintf(&p, "%s/jit-%u.dump", dir, PID) > 0);
	return p;
}

/* One chunk's dump of PID: its machine, start (header time) and LOADs. */
struct in {
	uint32_t mach;
	uint64_t start;
	const struct load *l;
	size_t n;
};

/* n chunks, c1..cn, in dir, their dumps of PID as in[]. */
static void chunks(struct letw_jd_chunk_out *c, const char *dir, const struct in *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *p;

		chunk(&c[i], dir, (int)i);
		p = dump_path(c[i].dir);
		write_dump(p, in[i].mach, in[i].start, in[i].l, in[i].n);
		free(p);
	}
	said[0] = '\0';
}

/* Two chunks, c1 and c2, in dir, their dumps of PID holding a and b. */
static void two_chunks(struct letw_jd_chunk_out *c, const char *dir,
		       uint32_t mach2, uint64_t start1, const struct load *a, size_t na,
		       uint64_t start2, const struct load *b, size_t nb)
{
	const struct in in[2] = { { 62, start1, a, na }, { mach2, start2, b, nb } };

	chunks(c, dir, in, 2);
}

struct got {
	struct letw_jd_header h;
	struct letw_jd_rec rec[256];
	size_t n;
	uint8_t buf[65536];
};

static void read_dump(const char *path, struct got *g)
{
	struct letw_jd_reader rd;
	const char *why = NULL;
	int fd = open(path, O_RDONLY);
	ssize_t len;

	cr_assert(fd >= 0, "no %s", path);
	len = read(fd, g->buf, sizeof(g->buf));
	close(fd);
	cr_assert(len > 0 && (size_t)len < sizeof(g->buf), "%zd bytes", len);
	cr_assert_eq(letw_jd_reader_init(&rd, g->buf, (size_t)len, &why), 0, "%s", why);
	g->h = rd.h;
	g->n = 0;
	while (g->n < 256 && letw_jd_reader_next(&rd, &g->rec[g->n], &why) == 1)
		g->n++;
	cr_assert_eq(rd.at, (size_t)len, "the whole dump read back");
}

Test(jdmerge, rotation_in_time_order_once_each)
{
	char *dir = tmpdir(), *p;
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

	two_chunks(c, dir, 62, 1000, c1, 3, 3000, c2, 4);
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0, "%s", said);
	cr_assert_eq(merged, 1, "%s", said);
	cr_assert(strstr(said, "5 LOAD record(s), 2 repeated across chunks written once"), "%s", said);
	p = dump_path(dir);
	read_dump(p, &g);
	free(p);
	cr_assert_eq(g.h.pid, PID);
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
			cr_assert_eq(memcmp(r->code, CODE, 16), 0, "real bytes kept");
		} else {
			uint8_t fill[16];

			letw_jd_filler(fill, 16, k + 1, PID);
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
	rmtree(dir);
}

Test(jdmerge, snapshots_overlapping_not_doubled_placeholder_start_kept)
{
	char *dir = tmpdir(), *p;
	struct letw_jd_chunk_out c[2];
	const struct load s1[] = { { 1, 0x1000, "early", 0, 0, 0 }, { 1500, 0x2000, "fn_0", 1, 0, 0 } };
	const struct load s2[] = { { 1, 0x1000, "early", 0, 0, 0 }, { 1500, 0x2000, "fn_0", 1, 0, 0 },
				   { 2500, 0x4000, "late", 0, 0, 0 } };
	struct got g;
	int merged;

	two_chunks(c, dir, 62, 1000, s1, 2, 1200, s2, 3);
	/* The runtime's placeholder: the process began at 400. */
	p = dump_path(dir);
	write_dump(p, 62, 400, NULL, 0);
	said[0] = '\0';
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0, "%s", said);
	cr_assert_eq(merged, 1, "%s", said);
	read_dump(p, &g);
	free(p);
	cr_assert_eq(g.h.timestamp, 400u, "the process's start, from the placeholder");
	cr_assert_eq(g.n, 4u, "early, fn_0, late, CLOSE: the overlap once");
	cr_assert_str_eq(g.rec[0].name, "early");
	cr_assert_eq(g.rec[0].ts, 401u, "code there before the trace: from the process's start");
	cr_assert_str_eq(g.rec[1].name, "fn_0");
	cr_assert_str_eq(g.rec[2].name, "late");
	rmtree(dir);
}

Test(jdmerge, refused_with_the_chunk_named)
{
	char *dir = tmpdir(), *p;
	struct letw_jd_chunk_out c[2];
	const struct load l[] = { { 1500, 0x2000, "fn_0", 1, 0, 0 } };
	int merged;

	two_chunks(c, dir, 183, 1000, l, 1, 3000, l, 1);
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0);
	cr_assert_eq(merged, 0);
	cr_assert(strstr(said, "chunk c2's dump") && strstr(said, "ELF machine differs"), "%s", said);
	p = dump_path(dir);
	cr_assert_neq(access(p, F_OK), 0, "no merged dump");

	/* Another clock: nothing merged, both chunks named. */
	c[1].written = 1;
	strcpy(c[1].clock.name, "realtime");
	said[0] = '\0';
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0);
	cr_assert_eq(merged, 0);
	cr_assert(strstr(said, "chunk c1 dates its events with clock `monotonic` and chunk c2 with another (`realtime`"),
		  "%s", said);
	cr_assert_neq(access(p, F_OK), 0, "no merged dump");
	free(p);
	rmtree(dir);
}

/* One process whose merged dump cannot be written (its pidns-INO a file)
 * costs the others nothing: every later one was left unmerged. */
Test(jdmerge, a_process_that_fails_does_not_stop_the_others)
{
	char *dir = tmpdir(), *p, *f;
	struct letw_jd_chunk_out c[2];
	const struct load l[] = { { 1500, 0x2000, "fn_0", 1, 0, 0 } };
	int merged, fd;

	for (int i = 0; i < 2; i++) {
		chunk(&c[i], dir, i);
		c[i].many_pidns = 1;
		for (int ns = 1; ns <= 2; ns++) {
			char *sub;

			cr_assert(asprintf(&sub, "%s/pidns-%d", c[i].dir, ns) > 0);
			cr_assert_eq(mkdir(sub, 0755), 0);
			p = dump_path(sub);
			write_dump(p, 62, 1000 + 2000 * (uint64_t)i, l, 1);
			free(p);
			free(sub);
		}
	}
	cr_assert(asprintf(&f, "%s/pidns-1", dir) > 0);
	fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0644);
	cr_assert(fd >= 0);
	close(fd);
	said[0] = '\0';
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), -EIO, "%s", said);
	cr_assert_eq(merged, 1, "the other namespace's process merged: %s", said);
	cr_assert(strstr(said, "pidns-1"), "the failing one named: %s", said);
	cr_assert(asprintf(&p, "%s/pidns-2/jit-%u.dump", dir, PID) > 0);
	cr_assert_eq(access(p, F_OK), 0, "%s: %s", p, said);
	free(p);
	free(f);
	rmtree(dir);
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
		char *dir = tmpdir(), *p;
		struct letw_jd_chunk_out c[2];
		struct timespec now, t[2];
		int merged;

		two_chunks(c, dir, 62, 1000, c1, 1, 3000, c2, 1);
		clock_gettime(CLOCK_REALTIME, &now);
		c[0].began = c[1].began = now;
		c[0].began.tv_sec -= 1;
		c[1].began.tv_sec -= 1;
		t[0] = t[1] = now;
		t[0].tv_sec += shift[k];
		t[1].tv_sec += shift[k];
		p = dump_path(c[1].dir);
		cr_assert_eq(utimensat(AT_FDCWD, p, t, 0), 0);
		free(p);
		cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0, "%s", said);
		cr_assert_eq(merged, 1, "%s", said);
		cr_assert(strstr(said, k ? "1 LOAD record(s)" : "2 LOAD record(s)"),
			  "mtime shifted %ld s: %s", shift[k], said);
		rmtree(dir);
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
	cr_assert_eq(letw_jd_write_header(&o, 62, PID, start), 0);
	for (size_t i = 0; i < n; i++) {
		uint8_t m[LETW_JD_MOVE_FIXED];
		uint32_t u32[4] = { LETW_JD_CODE_MOVE, sizeof(m), PID, PID };
		/* vma, old_code_addr, new_code_addr, code_size, code_index */
		uint64_t u64[5] = { r[i].addr, r[i].addr, r[i].addr, 16, r[i].index };

		if (!r[i].move) {
			cr_assert_eq(letw_jd_write_load(&o, r[i].ts, PID, PID, r[i].addr, 16,
							r[i].index, r[i].name, CODE), 0);
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
	char *dir = tmpdir(), *p;
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
		chunk(&c[i], dir, i);
		p = dump_path(c[i].dir);
		write_moves(p, 1000 + 2000 * (uint64_t)i, i ? c2 : c1, i ? 4 : 3);
		free(p);
	}
	said[0] = '\0';
	cr_assert_eq(letw_jd_merge_chunks(dir, c, 2, &merged), 0, "%s", said);
	cr_assert_eq(merged, 1, "%s", said);
	p = dump_path(dir);
	read_dump(p, &g);
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
	rmtree(dir);
}

/*
 * More than two chunks: the dedup keeps the earlier chunks' LOADs in sorted
 * runs that merge as chunks come (jitdump_units.c), which two chunks never
 * make happen before a query. Checked against the rule itself, below, as a
 * scan of every earlier LOAD for each (no runs).
 */
#define MAX_LOADS 128

/* A LOAD of the input, as the rule sees it. */
struct ref {
	const struct load *l;
	uint32_t chunk, seq;
	uint64_t ts;
	int before, dropped;
};

/* The merged order: (ts, chunk, seq). */
static int ref_later(const struct ref *x, const struct ref *y)
{
	return x->ts != y->ts ? x->ts > y->ts :
	       x->chunk != y->chunk ? x->chunk > y->chunk : x->seq > y->seq;
}

static int ref_overlaps(const struct ref *a, const struct ref *b)
{
	return a->l->addr < b->l->addr + size_of(b->l) && b->l->addr < a->l->addr + size_of(a->l);
}

/* Same place, size, name, and bytes unless either is filler. */
static int ref_same(const struct ref *a, const struct ref *b)
{
	return a->l->addr == b->l->addr && size_of(a->l) == size_of(b->l) &&
	       !strcmp(a->l->name, b->l->name) &&
	       (!a->l->real || !b->l->real || a->l->real == b->l->real);
}

/*
 * The LOADs the merge writes, in its order, into r (its count returned):
 * every LOAD of a chunk after the first is compared, as of its time (or its
 * chunk's start when dated before it), with the latest LOAD overlapping it
 * then among the earlier chunks' written ones and its own chunk's earlier
 * ones: the same code is a repeat, dropped; code there before its chunk
 * that differs is dated after the earlier chunks' latest there, and not
 * before its chunk's start (jitdump_merge.c).
 */
static size_t reference(const struct in *in, size_t n, struct ref *r, size_t *repeats)
{
	size_t m = 0, w = 0;

	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < in[k].n; i++) {
			cr_assert_lt(m, MAX_LOADS);
			r[m++] = (struct ref){ &in[k].l[i], (uint32_t)k, (uint32_t)i, in[k].l[i].ts,
					       in[k].l[i].ts < in[k].start, 0 };
		}
	*repeats = 0;
	for (size_t i = 0; i < m; i++) {
		struct ref *x = &r[i];
		uint64_t start = in[x->chunk].start, eff = x->before ? start : x->ts;
		uint64_t prev_end = 0;
		const struct ref *last = NULL;
		int prev = 0;

		/* r is in (chunk, seq) order: r[0..i) is what came before x. */
		for (size_t j = 0; x->chunk && j < i; j++) {
			const struct ref *u = &r[j];
			int earlier = u->chunk < x->chunk;

			if ((earlier && u->dropped) || !ref_overlaps(u, x) || u->ts > eff)
				continue;
			if (!last || ref_later(u, last))
				last = u;
			if (earlier && (!prev || u->ts > prev_end)) {
				prev_end = u->ts;
				prev = 1;
			}
		}
		if (last && ref_same(last, x)) {
			x->dropped = 1;
			++*repeats;
		} else if (x->before && prev && prev_end >= x->ts) {
			x->ts = prev_end + 1 > start ? prev_end + 1 : start;
		}
	}
	for (size_t i = 0; i < m; i++)
		if (!r[i].dropped)
			r[w++] = r[i];
	for (size_t i = 1; i < w; i++) /* insertion sort: by (ts, chunk, seq) */
		for (size_t j = i; j > 0 && ref_later(&r[j - 1], &r[j]); j--) {
			struct ref t = r[j];

			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	return w;
}

/* The test's directory, removed by drop_dir even when an assertion fails. */
static char *cur_dir;

static void drop_dir(void)
{
	if (cur_dir)
		nftw(cur_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(cur_dir);
	cur_dir = NULL;
}

/* Merges in[] (n chunks, in a new cur_dir) into *g, and checks every LOAD
 * written against reference(): time, place, size, name, new code_index,
 * bytes, line table before it; and the repeats counted. */
static void merge_checked(const struct in *in, size_t n, struct got *g, const char *what)
{
	struct letw_jd_chunk_out c[16];
	struct ref r[MAX_LOADS];
	size_t want, repeats, k = 0;
	char count[96], *p;
	int merged;

	cr_assert_leq(n, 16u);
	cur_dir = tmpdir();
	chunks(c, cur_dir, in, n);
	cr_assert_eq(letw_jd_merge_chunks(cur_dir, c, n, &merged), 0, "%s: %s", what, said);
	cr_assert_eq(merged, 1, "%s: %s", what, said);
	want = reference(in, n, r, &repeats);
	snprintf(count, sizeof(count), "%zu LOAD record(s), %zu repeated across", want, repeats);
	cr_assert(strstr(said, count), "%s: want `%s`: %s", what, count, said);
	p = dump_path(cur_dir);
	read_dump(p, g);
	free(p);
	for (size_t i = 0; i < g->n; i++) {
		const struct letw_jd_rec *rec = &g->rec[i];
		const struct load *l;
		uint8_t code[MAX_CODE];

		if (rec->id != LETW_JD_CODE_LOAD)
			continue;
		cr_assert_lt(k, want, "%s: LOAD %zu (%s at %llu) more than the rule's %zu", what, k,
			     rec->name, (unsigned long long)rec->ts, want);
		l = r[k].l;
		cr_assert(rec->ts == r[k].ts && rec->code_addr == l->addr && !strcmp(rec->name, l->name),
			  "%s: LOAD %zu is %s at %#llx, %llu; the rule: %s at %#llx, %llu (chunk %u)",
			  what, k, rec->name, (unsigned long long)rec->code_addr,
			  (unsigned long long)rec->ts, l->name, (unsigned long long)l->addr,
			  (unsigned long long)r[k].ts, r[k].chunk + 1);
		cr_assert_eq(rec->code_size, size_of(l), "%s: LOAD %zu's size", what, k);
		cr_assert_eq(rec->code_index, k + 1, "%s: code_index renumbered in file order", what);
		if (!code_of(l, code))
			letw_jd_filler(code, size_of(l), k + 1, PID);
		cr_assert_eq(memcmp(rec->code, code, size_of(l)), 0, "%s: LOAD %zu's bytes", what, k);
		cr_assert_eq(i > 0 && g->rec[i - 1].id == LETW_JD_CODE_DEBUG_INFO, l->lines,
			     "%s: DEBUG_INFO before LOAD %zu (%s)", what, k, l->name);
		k++;
	}
	cr_assert_eq(k, want, "%s: %zu LOADs written, the rule's %zu", what, k, want);
}

/* Five chunks of four or five LOADs: the runs of what was seen merge after
 * c2 (4 + 4) and after c4 (3 + 3), so c3 and c4 query a merged run and
 * two runs, and c5 two merged ones. */
Test(jdmerge, five_chunks_repeats_replacements_and_a_region_holding_others, .fini = drop_dir)
{
	const struct load c1[] = {
		{ 1100, 0x1000, "rep", 1, 1, 0 },
		{ 1200, 0x2000, "old", 0, 0, 0 },
		{ 1300, 0x5040, "s1", 1, 0, 0 },
		{ 1400, 0x5100, "s2", 0, 0, 0 },
	};
	const struct load c2[] = {
		{ 1, 0x2000, "old", 0, 0, 0 }, /* its rundown: old, a repeat */
		{ 2200, 0x5000, "big", 0, 0, 0x200 }, /* over s1 and s2 */
		{ 2500, 0x3000, "tmp", 0, 0, 32 },
		{ 2600, 0x6000, "c2a", 1, 0, 0 },
		{ 2700, 0x6100, "c2b", 0, 1, 0 },
	};
	const struct load c3[] = {
		{ 1, 0x1000, "rep", 1, 1, 0 }, /* c1's rep: a repeat */
		{ 1, 0x5180, "s4", 0, 0, 0 },  /* in big, met past s1 and s2 */
		{ 3300, 0x2000, "new", 1, 0, 0 }, /* replaces old */
		{ 4000, 0x3800, "edge", 0, 0, 0 }, /* at c4's start */
	};
	const struct load c4[] = {
		{ 1, 0x2000, "new", 1, 0, 0 },   /* a repeat of c3's */
		{ 1, 0x3010, "other", 0, 1, 0 }, /* where tmp was: c4's start */
		{ 1, 0x3808, "other2", 0, 0, 0 }, /* where edge was, at c4's start */
		{ 4500, 0x5080, "s3", 0, 0, 0 }, /* in big */
	};
	const struct load c5[] = {
		{ 1, 0x1000, "rep", 1, 1, 0 },   /* still c1's */
		{ 1, 0x2000, "new", 1, 0, 0 },   /* c3's */
		{ 1, 0x3010, "other", 0, 1, 0 }, /* c4's, re-dated there */
		{ 1, 0x5000, "big", 0, 0, 0x200 }, /* s3 came over part of it */
		{ 5500, 0x6000, "c2a", 2, 0, 0 }, /* other bytes: new code */
		{ 5600, 0x6100, "c2b", 0, 0, 0 }, /* filler: c2's */
	};
	const struct in in[] = {
		{ 62, 1000, c1, 4 }, { 62, 2000, c2, 5 }, { 62, 3000, c3, 4 },
		{ 62, 4000, c4, 4 }, { 62, 5000, c5, 6 },
	};
	const struct { uint64_t ts, addr; const char *name; } want[] = {
		{ 1100, 0x1000, "rep" }, { 1200, 0x2000, "old" }, { 1300, 0x5040, "s1" },
		{ 1400, 0x5100, "s2" }, { 2200, 0x5000, "big" }, { 2500, 0x3000, "tmp" },
		{ 2600, 0x6000, "c2a" }, { 2700, 0x6100, "c2b" }, { 3000, 0x5180, "s4" },
		{ 3300, 0x2000, "new" }, { 4000, 0x3800, "edge" }, { 4000, 0x3010, "other" },
		{ 4001, 0x3808, "other2" }, { 4500, 0x5080, "s3" }, { 5000, 0x5000, "big" },
		{ 5500, 0x6000, "c2a" },
	};
	struct got g;
	size_t k = 0;

	merge_checked(in, 5, &g, "five chunks");
	cr_assert(strstr(said, "16 LOAD record(s), 7 repeated"), "%s", said);
	for (size_t i = 0; i < g.n; i++) {
		const struct letw_jd_rec *r = &g.rec[i];

		if (r->id != LETW_JD_CODE_LOAD)
			continue;
		cr_assert_lt(k, 16u);
		cr_assert(r->ts == want[k].ts && r->code_addr == want[k].addr &&
				  !strcmp(r->name, want[k].name),
			  "LOAD %zu: %s at %#llx, %llu; want %s at %#llx, %llu", k, r->name,
			  (unsigned long long)r->code_addr, (unsigned long long)r->ts, want[k].name,
			  (unsigned long long)want[k].addr, (unsigned long long)want[k].ts);
		cr_assert_eq(r->code_index, k + 1);
		k++;
	}
	cr_assert_eq(k, 16u);
}

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

/* A random LOAD at one of 24 places 16 bytes apart, some larger, over
 * others; or a copy of an earlier one (so that repeats are many). */
static void random_load(uint64_t *s, struct load *l, const struct load *pool, size_t n, uint64_t ts)
{
	static const char *const names[] = { "a", "b", "c" };
	static const uint32_t sizes[] = { 0, 0, 0, 0, 0, 48, 0x100 };

	if (n && rnd(s) % 2) {
		*l = pool[rnd(s) % n];
	} else {
		l->addr = 0x1000 + 0x10 * (rnd(s) % 24);
		l->name = names[rnd(s) % 3];
		l->real = (int)(rnd(s) % 3);
		l->size = sizes[rnd(s) % 7];
	}
	l->lines = (int)(rnd(s) % 2);
	l->ts = ts;
}

/* 20 traces of 4 to 9 chunks 1000 apart, each chunk's rundown (before its
 * start) then its loads (up to 2500 after its start: the next chunk may
 * begin before them, as snapshots do), times on a 250 grid so that some
 * fall on a later chunk's start (code re-dated after it, not at it): the
 * merge is the rule's. */
Test(jdmerge, random_chunks_merged_as_the_rule_says, .fini = drop_dir)
{
	uint64_t s = 20261207;

	for (int t = 0; t < 20; t++) {
		struct load l[MAX_LOADS];
		struct in in[9];
		size_t n = 4 + rnd(&s) % 6, m = 0;
		struct got g;
		char what[32];

		for (size_t k = 0; k < n; k++) {
			size_t before = rnd(&s) % 5, loads = rnd(&s) % 6;
			uint64_t start = 1000 * (k + 1), ts = start;

			in[k] = (struct in){ 62, start, &l[m], before + loads };
			for (size_t i = 0; i < before; i++, m++)
				random_load(&s, &l[m], l, m, 1 + rnd(&s) % 2);
			for (size_t i = 0; i < loads; i++, m++) {
				ts += 250 * (rnd(&s) % 3);
				random_load(&s, &l[m], l, m, ts);
			}
		}
		snprintf(what, sizeof(what), "trace %d (%zu chunks)", t, n);
		merge_checked(in, n, &g, what);
		drop_dir();
	}
}
