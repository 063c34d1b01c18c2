/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fallocate */
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "jitdump_format.h"
#include "jitdump_write.h"

#define DEBUG_ENTRY_FIXED 16u /* addr, lineno, discrim */

/* How far ahead of the writes blocks are reserved, one fallocate() a
 * step: a few calls for a dump of 10^8 bytes. */
#define RESERVE_STEP ((uint64_t)16 << 20)

/*
 * Whether to reserve the dump's blocks with fallocate() before writing
 * them. A dump is large (77 MB for the bench trace's 2*10^5 regions, most
 * of it filler code bytes), and on ext4 a buffered write into blocks not
 * yet allocated does the delayed allocation's bookkeeping per 4 KiB block
 * (reservation, quota, extent status tree): 77 MB in 1 MiB writes took
 * 19-27 ms into a new file, 12-14 ms after one fallocate(). `lttng-etw
 * jitdump` of the bench trace (bench/analysis.sh) spent a median 43 ms in
 * the kernel instead of 55 (64 runs alternating with the writer without
 * it). Not on tmpfs or ramfs, where fallocate() allocates and clears the
 * pages the writes then fill: memory touched twice.
 */
static int can_reserve(int fd)
{
	struct statfs fs;
	struct stat st;
	struct rlimit rl;

	/* fallocate() past RLIMIT_FSIZE raises SIGXFSZ, as a write there
	 * does: reserving 16 MiB ahead killed a run whose 650 KB dump fitted
	 * under `ulimit -f 4096` (a re-audit). Under a limit, no reserving:
	 * the writes alone meet it, as before. */
	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY)
		return 0;

	/* Offsets below count from 0: a new, empty regular file (the dump's
	 * temporary file), nothing else. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0 ||
	    lseek(fd, 0, SEEK_CUR) != 0 || fstatfs(fd, &fs) != 0)
		return 0;
	return fs.f_type != TMPFS_MAGIC && fs.f_type != RAMFS_MAGIC;
}

/* Blocks for the n bytes about to be written, reserved a step at a time.
 * A failure (a filesystem or file without fallocate(), a full disk) only
 * ends the reserving: the writes tell what is wrong, if anything. */
static void reserve(struct letw_jd_out *o, size_t n)
{
	if (!o->prealloc || o->written + n <= o->reserved)
		return;
	/* Even a failed fallocate() may have allocated part of the range
	 * and moved the file's end. */
	o->cut = 1;
	if (fallocate(o->fd, 0, (off_t)o->reserved, (off_t)RESERVE_STEP) != 0) {
		o->prealloc = 0;
		return;
	}
	o->reserved += RESERVE_STEP;
}

int letw_jd_out_init(struct letw_jd_out *o, int fd)
{
	o->fd = fd;
	o->err = 0;
	o->len = 0;
	o->cap = LETW_JD_OUT_BUF;
	o->stop = NULL;
	o->stop_data = NULL;
	o->written = o->reserved = 0;
	o->prealloc = can_reserve(fd);
	o->cut = 0;
	o->buf = malloc(o->cap);
	if (!o->buf) {
		o->err = -ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

static int write_all(struct letw_jd_out *o, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n && !o->err) {
		ssize_t w;

		/* Per write of up to a buffer (1 MiB): often enough to stop
		 * within milliseconds, rare enough to cost nothing. Retried
		 * EINTRs below never return -EINTR, so it means this. */
		if (o->stop && o->stop(o->stop_data)) {
			o->err = -EINTR;
			break;
		}
		reserve(o, n);
		w = write(o->fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? -errno : -EIO;
			break;
		}
		o->written += (uint64_t)w;
		c += w;
		n -= (size_t)w;
	}
	return o->err;
}

static int flush(struct letw_jd_out *o)
{
	int ret = write_all(o, o->buf, o->len);

	o->len = 0;
	return ret;
}

int letw_jd_out_close(struct letw_jd_out *o)
{
	int ret = o->err ? o->err : flush(o);

	/* The reservation's zeros past the dump's end go (the file is still
	 * under its temporary name: no reader saw them). After a failure
	 * the caller removes the file anyway. */
	if (!ret && o->cut && ftruncate(o->fd, (off_t)o->written) != 0)
		ret = -errno;

	free(o->buf);
	o->buf = NULL;
	return ret;
}

/* Room for n more bytes in the buffer (n <= cap), or NULL on a failure. */
static unsigned char *room(struct letw_jd_out *o, size_t n)
{
	unsigned char *at;

	if (o->err || (o->cap - o->len < n && flush(o)))
		return NULL;
	at = o->buf + o->len;
	o->len += n;
	return at;
}

/* What to return once a put() chain failed: the failed write's errno
 * (ENOSPC for a full disk), not a made-up EIO. */
static int failure(const struct letw_jd_out *f)
{
	return f->err ? f->err : -EIO;
}

/* Every field is copied one by one in host order (the format is the
 * writer's byte order; perf swaps on a magic mismatch), so no struct
 * padding can slip into the file. */
static int put(struct letw_jd_out *f, const void *p, size_t n)
{
	unsigned char *at;

	if (n > f->cap / 2) /* large code: straight from the caller */
		return f->err || flush(f) ? f->err : write_all(f, p, n);
	at = room(f, n);
	if (!at)
		return failure(f);
	memcpy(at, p, n);
	return 0;
}

static int put32(struct letw_jd_out *f, uint32_t v)
{
	return put(f, &v, sizeof(v));
}

static int put64(struct letw_jd_out *f, uint64_t v)
{
	return put(f, &v, sizeof(v));
}

/* Host-order fields into a record being laid out; returns past them. */
static unsigned char *fill32(unsigned char *at, uint32_t v)
{
	memcpy(at, &v, sizeof(v));
	return at + sizeof(v);
}

static unsigned char *fill64(unsigned char *at, uint64_t v)
{
	memcpy(at, &v, sizeof(v));
	return at + sizeof(v);
}

static int put_prefix(struct letw_jd_out *f, uint32_t id, uint32_t total, uint64_t ts)
{
	return put32(f, id) || put32(f, total) || put64(f, ts) ? failure(f) : 0;
}

int letw_jd_write_header(struct letw_jd_out *f, uint32_t elf_mach, uint32_t pid, uint64_t ts)
{
	if (put32(f, LETW_JD_MAGIC) || put32(f, LETW_JD_VERSION) ||
	    put32(f, LETW_JD_HEADER_SIZE) || put32(f, elf_mach) ||
	    put32(f, 0) /* pad1 */ || put32(f, pid) || put64(f, ts) ||
	    put64(f, 0) /* flags: timestamps are CLOCK_MONOTONIC ns */)
		return failure(f);
	return 0;
}

void letw_jd_filler(uint8_t *buf, uint32_t size, uint64_t code_index, uint32_t pid)
{
	uint8_t tail[12];
	uint32_t n = size < sizeof(tail) ? size : (uint32_t)sizeof(tail);

	/* int3 everywhere, so an annotation of filler shows traps, not
	 * plausible instructions; the tail makes the bytes (and so perf's
	 * build id of the ELF file made from them) unique per load. */
	memset(buf, 0xcc, size);
	memcpy(tail, &code_index, 8);
	memcpy(tail + 8, &pid, 4);
	memcpy(buf + size - n, tail + sizeof(tail) - n, n);
}

int letw_jd_write_load(struct letw_jd_out *f, uint64_t ts, uint32_t pid, uint32_t tid,
		       uint64_t code_addr, uint32_t code_size,
		       uint64_t code_index, const char *name,
		       const uint8_t *code)
{
	size_t name_len = strlen(name) + 1;
	uint64_t total = LETW_JD_LOAD_FIXED + name_len + code_size;

	unsigned char fixed[LETW_JD_LOAD_FIXED], *at = fixed;

	if (total > UINT32_MAX)
		return -E2BIG;
	/* The fixed part laid out here and copied once: a LOAD per region,
	 * 10^5 of them in a large trace, and put()'s buffer check per field
	 * showed in the profile (4% of `lttng-etw jitdump`). */
	at = fill32(at, LETW_JD_CODE_LOAD);
	at = fill32(at, (uint32_t)total);
	at = fill64(at, ts);
	at = fill32(at, pid);
	at = fill32(at, tid);
	at = fill64(at, code_addr); /* vma: perf uses code_addr */
	at = fill64(at, code_addr);
	at = fill64(at, code_size);
	fill64(at, code_index);
	if (put(f, fixed, sizeof(fixed)) || put(f, name, name_len))
		return failure(f);
	if (code)
		return put(f, code, code_size);
	/* Filler made in place in the buffer, in pieces of at most 4 KiB:
	 * only the last piece carries the unique tail. */
	for (uint32_t done = 0; done < code_size;) {
		uint32_t n = code_size - done;
		unsigned char *piece;

		if (n > 4096)
			n = 4096;
		piece = room(f, n);
		if (!piece)
			return failure(f);
		if (done + n == code_size)
			letw_jd_filler(piece, n, code_index, pid);
		else
			memset(piece, 0xcc, n);
		done += n;
	}
	return 0;
}

int letw_jd_write_debug_info(struct letw_jd_out *f, uint64_t ts, uint64_t code_addr,
			     const struct letw_jd_line *lines, size_t n,
			     uint32_t elf_text_offset)
{
	static const uint8_t zeros[8];
	uint64_t total = LETW_JD_DEBUG_FIXED;
	size_t pad;

	for (size_t i = 0; i < n; i++)
		total += DEBUG_ENTRY_FIXED + strlen(lines[i].file) + 1;
	/* Padded to 8 bytes like perf's own JVMTI agent does; perf reads
	 * nr_entry entries and ignores what follows. */
	pad = (size_t)((8 - total % 8) % 8);
	total += pad;
	if (total > UINT32_MAX)
		return -E2BIG;
	if (put_prefix(f, LETW_JD_CODE_DEBUG_INFO, (uint32_t)total, ts) ||
	    put64(f, code_addr) || put64(f, n))
		return failure(f);
	for (size_t i = 0; i < n; i++) {
		/* The full file name every time: perf 6.1's DWARF writer
		 * (genelf_debug.c) compares names and does not implement the
		 * specification's "\xff\0 = same as previous" shorthand. */
		if (put64(f, lines[i].addr + elf_text_offset) ||
		    put32(f, lines[i].line) || put32(f, 0) /* discrim */ ||
		    put(f, lines[i].file, strlen(lines[i].file) + 1))
			return failure(f);
	}
	return put(f, zeros, pad);
}

int letw_jd_write_raw(struct letw_jd_out *f, const void *rec, size_t n)
{
	return put(f, rec, n) ? failure(f) : 0;
}

int letw_jd_write_close(struct letw_jd_out *f, uint64_t ts)
{
	return put_prefix(f, LETW_JD_CODE_CLOSE, LETW_JD_PREFIX_SIZE, ts);
}
