/* SPDX-License-Identifier: MIT */
/* test_jdmerge's fixture: see jdmerge_fixture.h. */
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
#include "jdmerge_fixture.h"

/* The CLI's own, here: what the merge says is kept to be checked. */
volatile sig_atomic_t letw_interrupted;
char jdm_said[4096];

static void say(const char *fmt, va_list ap)
{
	size_t n = strlen(jdm_said);

	vsnprintf(jdm_said + n, sizeof(jdm_said) - n, fmt, ap);
	n = strlen(jdm_said);
	if (n + 1 < sizeof(jdm_said))
		strcat(jdm_said, "\n");
}

void letw_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

void letw_note(const char *fmt, ...) __attribute__((alias("letw_err")));

const uint8_t JDM_CODE[16] = { 0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x5d, 0xc3,
				  0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3 };



uint32_t jdm_size_of(const struct load *l)
{
	return l->size ? l->size : 16;
}

/* The bytes l is written with: NULL for filler. */
const uint8_t *jdm_code_of(const struct load *l, uint8_t *buf)
{
	uint32_t n = jdm_size_of(l);

	if (!l->real)
		return NULL;
	cr_assert_leq(n, MAX_CODE);
	for (uint32_t i = 0; i < n; i++)
		buf[i] = JDM_CODE[i % sizeof(JDM_CODE)];
	buf[0] ^= (uint8_t)(l->real - 1);
	return buf;
}

int jdm_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) != 0;
}

/* The test's directory goes with it (and is freed). */
void jdm_rmtree(char *dir)
{
	cr_assert_eq(nftw(dir, jdm_rm_one, 16, FTW_DEPTH | FTW_PHYS), 0, "cannot remove %s", dir);
	free(dir);
}

char *jdm_tmpdir(void)
{
	char *d = strdup("/tmp/letw-jdmerge.XXXXXX");

	cr_assert(mkdtemp(d));
	return d;
}

void jdm_write_dump(const char *path, uint32_t mach, uint64_t start,
		       const struct load *l, size_t n)
{
	struct letw_jd_out o;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert(fd >= 0);
	cr_assert_eq(letw_jd_out_init(&o, fd), 0);
	cr_assert_eq(letw_jd_write_header(&o, mach, JDM_PID, start), 0);
	for (size_t i = 0; i < n; i++) {
		struct letw_jd_line ln[2] = { { l[i].addr, 7, "/src/a.c" },
					      { l[i].addr + 16, 8, "/src/a.c" } };
		uint8_t code[MAX_CODE];

		if (l[i].lines)
			cr_assert_eq(letw_jd_write_debug_info(&o, l[i].ts, l[i].addr, ln, 2, 0), 0);
		cr_assert_eq(letw_jd_write_load(&o, l[i].ts, JDM_PID, JDM_PID, l[i].addr, jdm_size_of(&l[i]),
						i + 1, l[i].name, jdm_code_of(&l[i], code)), 0);
	}
	cr_assert_eq(letw_jd_write_close(&o, start + 5000), 0);
	cr_assert_eq(letw_jd_out_close(&o), 0);
	close(fd);
}

/* Chunk i of n named c<i+1>, in dir/c<i+1>/, on clock "monotonic". */
void jdm_chunk(struct letw_jd_chunk_out *c, const char *dir, int i)
{
	memset(c, 0, sizeof(*c));
	cr_assert(asprintf(&c->name, "c%d", i + 1) > 0);
	cr_assert(asprintf(&c->dir, "%s/c%d", dir, i + 1) > 0);
	cr_assert_eq(mkdir(c->dir, 0755), 0);
	c->written = 1;
	c->clock_known = 1;
	strcpy(c->clock.name, "monotonic");
}

char *jdm_dump_path(const char *dir)
{
	char *p;

	cr_assert(asprintf(&p, "%s/jit-%u.dump", dir, JDM_PID) > 0);
	return p;
}


/* n chunks, c1..cn, in dir, their dumps of JDM_PID as in[]. */
void jdm_chunks(struct letw_jd_chunk_out *c, const char *dir, const struct in *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *p;

		jdm_chunk(&c[i], dir, (int)i);
		p = jdm_dump_path(c[i].dir);
		jdm_write_dump(p, in[i].mach, in[i].start, in[i].l, in[i].n);
		free(p);
	}
	jdm_said[0] = '\0';
}

/* Two chunks, c1 and c2, in dir, their dumps of JDM_PID holding a and b. */
void jdm_two_chunks(struct letw_jd_chunk_out *c, const char *dir,
		       uint32_t mach2, uint64_t start1, const struct load *a, size_t na,
		       uint64_t start2, const struct load *b, size_t nb)
{
	const struct in in[2] = { { 62, start1, a, na }, { mach2, start2, b, nb } };

	jdm_chunks(c, dir, in, 2);
}


void jdm_read_dump(const char *path, struct got *g)
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
