/* SPDX-License-Identifier: MIT */
/* LTTng index files as the analysis reads them (analysis/plugin/ctf_index.c):
 * what is refused before anything is read into memory, and why. */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "ctf_index.h"

static char path[] = "ctfidx.XXXXXX";

/* An index of n entries of elen bytes, entry i a packet of 4 KiB at
 * 4096 * i; size: the file's size (sparse past the entries written). */
static void make_index(uint32_t elen, unsigned n, uint64_t size)
{
	uint32_t hdr[4] = { htobe32(0xC1F1DCC1u), htobe32(1), htobe32(1), htobe32(elen) };
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	for (unsigned i = 0; i < n; i++) {
		uint64_t e[7] = { htobe64(4096ull * i), htobe64(4096 * 8), htobe64(4096 * 8),
				  htobe64(10 * i), htobe64(10 * i + 5), 0, 0 };

		cr_assert_eq(pwrite(fd, e, sizeof(e), 16 + (off_t)i * elen), (ssize_t)sizeof(e));
	}
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static void fini(void)
{
	unlink(path);
}

Test(ctf_index, whole_index_read, .fini = fini)
{
	struct letw_idx idx;
	const char *why;

	make_index(72, 3, 16 + 3 * 72);
	cr_assert_eq(letw_idx_read(path, &idx, &why), 0, "%s", why ? why : "");
	cr_assert_eq(idx.n, 3);
	cr_assert_eq(idx.bytes, 3 * 4096);
	cr_assert_eq(idx.entry_len, 72);
	letw_idx_fini(&idx);
}

/* A damaged entry length of 1 GiB over a sparse 3 GiB file: refused
 * before reading, by either reader (a re-audit: 48 s and 3 GB of memory
 * each, or "out of memory" under a limit, for an index LTTng never wrote).
 * The address space is bounded so that reading it fails loudly. */
Test(ctf_index, huge_entries_refused_unread, .fini = fini)
{
	struct rlimit rl = { 1ull << 30, 1ull << 30 };
	struct letw_idx_raw raw;
	struct letw_idx idx;
	const char *why;

	make_index(1u << 30, 3, 16 + 3 * (1ull << 30));
	cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
	cr_assert_eq(letw_idx_load(path, 0, &raw, &why), -EINVAL);
	cr_assert_str_eq(why, "implausibly large");
	cr_assert_eq(letw_idx_read(path, &idx, &why), -EINVAL);
	cr_assert_str_eq(why, "bad entry size");
}

/* Entry sizes LTTng never writes are "bad entry size" to the report's
 * cross-check, whatever the file's length; the pre-check, which judges an
 * index as babeltrace2 reads it, takes any from CTF index 1.0's up. */
Test(ctf_index, entry_sizes_lttng_never_writes, .fini = fini)
{
	struct letw_idx_raw raw;
	struct letw_idx idx;
	const char *why;

	make_index(60, 2, 16 + 2 * 60 + 7);
	cr_assert_eq(letw_idx_read(path, &idx, &why), -EINVAL);
	cr_assert_str_eq(why, "bad entry size");
	unlink(path);
	strcpy(path, "ctfidx.XXXXXX");
	make_index(60, 2, 16 + 2 * 60);
	cr_assert_eq(letw_idx_load(path, 0, &raw, &why), 0);
	cr_assert_eq(raw.n, 2);
	cr_assert_eq(letw_idx_get(&raw, 1, LETW_IDX_OFFSET), 4096);
	letw_idx_raw_fini(&raw);
	cr_assert_eq(letw_idx_read(path, &idx, &why), -EINVAL);
	cr_assert_str_eq(why, "bad entry size");
}
