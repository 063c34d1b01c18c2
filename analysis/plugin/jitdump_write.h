/* SPDX-License-Identifier: MIT */
/*
 * The perf jitdump file format (tools/perf/Documentation/
 * jitdump-specification.txt, read by tools/perf/util/jitdump.c for
 * `perf inject --jit`): a 40-byte header, then records, all in the host's
 * byte order. Only what lttng-etw needs is written: LOAD, DEBUG_INFO and
 * CLOSE. There is no unload record: a later LOAD over the same addresses
 * is what ends the older code for perf.
 *
 * Pure file writing (no babeltrace2 types), so it is easy to read next
 * to the specification. Records are built in one large buffer written in
 * big blocks (a dump holds ~10^5 records of many small fields, and
 * fwrite per field was a tenth of `lttng-etw jitdump`).
 */
#ifndef LETW_BT_JITDUMP_WRITE_H
#define LETW_BT_JITDUMP_WRITE_H

#include <stdint.h>
#include <stddef.h>

#define LETW_JD_HEADER_SIZE 40u

/*
 * perf writes each LOAD as an ELF file whose .text section starts after
 * the ELF header (genelf.h: GEN_ELF_TEXT_OFFSET) and resolves source lines
 * in that file. Its DWARF writer (genelf_debug.c) turns a DEBUG_INFO
 * address into an offset from the LOAD's code_addr and, since Linux 5.8,
 * adds GEN_ELF_TEXT_OFFSET itself: the addresses must then be the plain
 * code addresses (offset 0; checked with Debian 12's perf 6.1.187, whose
 * jitted-*.so put .text at 0x80). Older perfs did not add it, which is
 * why V8's perf-jit.cc adds its kElfHeaderSize (0x40): the offset is a
 * parameter for those.
 */
#define LETW_JD_ELF_TEXT_OFFSET_DEFAULT 0u

/* One DEBUG_INFO entry: a code address and its source position. */
struct letw_jd_line {
	uint64_t addr;      /* absolute code address (without the ELF offset) */
	uint32_t line;
	const char *file;   /* never NULL */
};

/* A dump being written to fd: records go through buf, written when full
 * and by letw_jd_out_close(). Functions return 0 or a negative errno, and
 * once one failed every later one fails the same. */
struct letw_jd_out {
	int fd;
	int err;
	unsigned char *buf;
	size_t len, cap;
	/* Optional, set after letw_jd_out_init(): asked before every
	 * write(2); nonzero fails the dump with -EINTR (a dump of 10^8
	 * bytes takes seconds, and a SIGTERM must not wait for its end). */
	int (*stop)(void *data);
	void *stop_data;
	/* Bytes written to fd, and how far fallocate() reserved its blocks
	 * ahead of the writes (jitdump_write.c, reserve()). prealloc: still
	 * reserving; cut: a fallocate() ran, so the file may end past the
	 * bytes written until letw_jd_out_close() cuts it there. */
	uint64_t written, reserved;
	int prealloc, cut;
};

#define LETW_JD_OUT_BUF (1u << 20)

/* fd: open for writing, owned by the caller. A new, empty regular file
 * gets its blocks reserved ahead of the writes (jitdump_write.c). */
int letw_jd_out_init(struct letw_jd_out *o, int fd);
/* Writes what is buffered and frees the buffer (fd stays open). */
int letw_jd_out_close(struct letw_jd_out *o);

/* Write the header. elf_mach: e_machine of the code (EM_X86_64...). */
int letw_jd_write_header(struct letw_jd_out *f, uint32_t elf_mach, uint32_t pid, uint64_t ts);

/*
 * A LOAD record: name, then code_size bytes of code (perf always reads
 * them and hashes them into the build id of the ELF file it makes).
 * code may be NULL: filler is written instead (int3, with the record's
 * index and pid at the end so that no two loads share bytes).
 */
int letw_jd_write_load(struct letw_jd_out *f, uint64_t ts, uint32_t pid, uint32_t tid,
		       uint64_t code_addr, uint32_t code_size,
		       uint64_t code_index, const char *name,
		       const uint8_t *code);

/* A DEBUG_INFO record for the LOAD that follows it; elf_text_offset is
 * added to every entry's address. */
int letw_jd_write_debug_info(struct letw_jd_out *f, uint64_t ts, uint64_t code_addr,
			     const struct letw_jd_line *lines, size_t n,
			     uint32_t elf_text_offset);

int letw_jd_write_close(struct letw_jd_out *f, uint64_t ts);

/* Records copied as they are (a merge of dumps: DEBUG_INFO, UNWINDING_INFO
 * and record types this writer does not make). */
int letw_jd_write_raw(struct letw_jd_out *f, const void *rec, size_t n);

/* What letw_jd_write_file() did not do, for the caller's message. */
struct letw_jd_file_err {
	const char *step; /* "name" (no memory), "create", "write", "rename" */
	char *tmp;        /* the temporary file's name (malloc()ed: the caller
			   * frees it); with kept, the file path held */
	int kept;         /* path replaced, but the file it held (now tmp)
			   * could not be removed: its errno */
};

/*
 * Write the dump at path through a temporary file (hidden, named for the
 * supervisor: replace_file.h) that replaces path once whole, so that a
 * reader never sees half a dump. fill writes every record, header to
 * CLOSE; stop (may be NULL) is asked before each write and once more
 * before the rename. Returns 0 (see e->kept), -EINTR when stop said so
 * (path left as it was), or a negative errno with e->step.
 */
int letw_jd_write_file(const char *path, int (*fill)(struct letw_jd_out *o, void *data),
		       int (*stop)(void *data), void *data, struct letw_jd_file_err *e);

/* The filler letw_jd_write_load writes for code == NULL (for tests). */
void letw_jd_filler(uint8_t *buf, uint32_t size, uint64_t code_index, uint32_t pid);

#endif /* LETW_BT_JITDUMP_WRITE_H */
