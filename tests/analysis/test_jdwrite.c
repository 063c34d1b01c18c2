/* SPDX-License-Identifier: MIT */
/* The jitdump writer (analysis/plugin/jitdump_write.c): a dump written
 * into a regular file, whose blocks it reserves with fallocate() ahead of
 * the writes, holds exactly the bytes of the same dump written where
 * nothing is reserved (a memfd, on tmpfs): the reservation's zeros past
 * the dump's end are cut, whatever step the dump's size ends in. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "jitdump_write.h"

/* A dump of nloads LOADs of size bytes of filler each, into fd; returns
 * whether the writer reserved blocks (o.cut). */
static int write_dump(int fd, unsigned nloads, uint32_t size)
{
	struct letw_jd_out o;

	cr_assert_eq(letw_jd_out_init(&o, fd), 0);
	cr_assert_eq(letw_jd_write_header(&o, 62, 1234, 1), 0);
	for (unsigned i = 0; i < nloads; i++) {
		char name[32];

		snprintf(name, sizeof(name), "fn_%u", i);
		cr_assert_eq(letw_jd_write_load(&o, 10 + i, 1234, 1234, 0x1000 + (uint64_t)i * size,
						size, i + 1, name, NULL), 0);
	}
	cr_assert_eq(letw_jd_write_close(&o, 99), 0);
	/* A small dump is written by the close, its reservation with it. */
	cr_assert_eq(letw_jd_out_close(&o), 0);
	return o.cut;
}

static void *contents(int fd, off_t *size)
{
	struct stat st;
	void *p;

	cr_assert_eq(fstat(fd, &st), 0);
	*size = st.st_size;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	cr_assert_neq(p, MAP_FAILED);
	return p;
}

/* reserved: whether the writer must have reserved blocks in the file
 * (else it must not have). */
static void same_dump_as(unsigned nloads, uint32_t size, int reserved)
{
	char path[] = "jdwrite.XXXXXX";
	int file = mkstemp(path), mem = memfd_create("jdwrite", 0);
	off_t fsize, msize;
	void *f, *m;

	cr_assert_geq(file, 0, "mkstemp in the test's directory");
	cr_assert_geq(mem, 0);
	unlink(path);
	if (reserved && !write_dump(file, nloads, size))
		cr_skip_test("the test's directory is on a filesystem the writer does not reserve on");
	if (!reserved)
		cr_assert_eq(write_dump(file, nloads, size), 0, "blocks reserved under a file-size limit");
	cr_assert_eq(write_dump(mem, nloads, size), 0, "nothing reserved on tmpfs");
	f = contents(file, &fsize);
	m = contents(mem, &msize);
	cr_assert_eq(fsize, msize, "%lld bytes in the file, %lld written",
		     (long long)fsize, (long long)msize);
	cr_assert_eq(memcmp(f, m, (size_t)fsize), 0);
	munmap(f, (size_t)fsize);
	munmap(m, (size_t)msize);
	close(file);
	close(mem);
}

static void same_dump(unsigned nloads, uint32_t size)
{
	same_dump_as(nloads, size, 1);
}

/* Less than one reservation step (16 MiB). */
Test(jdwrite, small_dump_cut_to_its_size)
{
	same_dump(3, 1000);
}

/* Several steps, the last one partly used. */
Test(jdwrite, large_dump_cut_to_its_size)
{
	same_dump(41, 1u << 20);
}

/* Under a file-size limit (ulimit -f) a reservation past it raised
 * SIGXFSZ and killed the writer, though the dump fitted: none is made
 * then. Criterion runs each test in a process of its own. */
Test(jdwrite, dump_under_file_size_limit)
{
	struct rlimit rl = { 4u << 20, 4u << 20 };

	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	same_dump_as(3, 1000, 0);
}
