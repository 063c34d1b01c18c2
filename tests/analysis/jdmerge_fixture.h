/* SPDX-License-Identifier: MIT */
/* test_jdmerge's fixture (jdmerge_fixture.c): chunk dumps of one process
 * written by the sink's own writer, the merged dump read back, and what
 * the merge said (the CLI's letw_err/letw_note, kept here). */
#ifndef LETW_TEST_JDMERGE_FIXTURE_H
#define LETW_TEST_JDMERGE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "jitdump_merge.h"
#include "jitdump_read.h"

#define JDM_PID 77u
#define MAX_CODE 256u

extern const uint8_t JDM_CODE[16];
/* Every line the merge said since the chunks were written. */
extern char jdm_said[4096];

struct load {
	uint64_t ts, addr;
	const char *name;
	int real;  /* JDM_CODE's bytes (1), or other bytes (2, 3...: code_of), else filler */
	int lines; /* a DEBUG_INFO before it */
	uint32_t size; /* 0: 16 */
};

/* One chunk's dump of JDM_PID: its machine, start (header time) and LOADs. */
struct in {
	uint32_t mach;
	uint64_t start;
	const struct load *l;
	size_t n;
};

struct got {
	struct letw_jd_header h;
	struct letw_jd_rec rec[256];
	size_t n;
	uint8_t buf[65536];
};

uint32_t jdm_size_of(const struct load *l);
/* The bytes l is written with: NULL for filler. */
const uint8_t *jdm_code_of(const struct load *l, uint8_t *buf);
struct FTW;
struct stat;
/* nftw()'s callback removing each entry (for a cleanup without asserts). */
int jdm_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw);
/* dir and all it holds removed (asserted), dir freed. */
void jdm_rmtree(char *dir);
char *jdm_tmpdir(void);
void jdm_write_dump(const char *path, uint32_t mach, uint64_t start,
		    const struct load *l, size_t n);
void jdm_chunk(struct letw_jd_chunk_out *c, const char *dir, int i);
char *jdm_dump_path(const char *dir);
/* n chunks, c1..cn, in dir, their dumps of JDM_PID as in[]. */
void jdm_chunks(struct letw_jd_chunk_out *c, const char *dir, const struct in *in, size_t n);
/* Two chunks, c1 and c2, in dir, their dumps of JDM_PID holding a and b. */
void jdm_two_chunks(struct letw_jd_chunk_out *c, const char *dir, uint32_t mach2, uint64_t start1,
		    const struct load *a, size_t na, uint64_t start2, const struct load *b,
		    size_t nb);
void jdm_read_dump(const char *path, struct got *g);

#endif
