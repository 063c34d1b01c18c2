/* SPDX-License-Identifier: MIT */
/*
 * Reading back a perf jitdump (the format jitdump_write.h writes, per
 * tools/perf/util/jitdump.h): its header, and its records one by one,
 * checked against the file's size so that a damaged or foreign file is
 * refused rather than read past. For the placeholder's header (jitdump.c)
 * and for merging the dumps of a rotated session's chunks (the CLI).
 */
#ifndef LETW_BT_JITDUMP_READ_H
#define LETW_BT_JITDUMP_READ_H

#include <stddef.h>
#include <stdint.h>

#include "jitdump_format.h"

struct letw_jd_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

/* When process vpid began, from the header of the dump or placeholder at
 * path (the runtime's DIR/jit-PID.dump), if earlier than first_ns (its
 * first event in the trace); else 0. Code the trace saw no load for is
 * dated just after it (jitdump.c says why). */
uint64_t letw_jd_process_since(const char *path, long long vpid, uint64_t first_ns);

/* One record of a dump in memory. */
struct letw_jd_rec {
	uint32_t id, size;   /* size: the whole record's */
	uint64_t ts;
	const uint8_t *p;    /* the record's first byte */
	/* LOAD and MOVE: */
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
	const char *name;    /* LOAD: NUL-terminated inside the record */
	const uint8_t *code; /* LOAD: code_size bytes */
};

/* Walks the records of a dump held in buf[0..len) (its header checked
 * first: magic in host order, version 1). */
struct letw_jd_reader {
	const uint8_t *buf;
	size_t len, at;
	struct letw_jd_header h;
};

/* 0, or -EINVAL with *why saying what is wrong with the header. */
int letw_jd_reader_init(struct letw_jd_reader *r, const uint8_t *buf, size_t len,
			const char **why);
/* 1 with *rec filled, 0 at the end, -EINVAL (*why) for a record that does
 * not fit the file or its own size. */
int letw_jd_reader_next(struct letw_jd_reader *r, struct letw_jd_rec *rec, const char **why);

#endif /* LETW_BT_JITDUMP_READ_H */
