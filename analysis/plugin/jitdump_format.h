/* SPDX-License-Identifier: MIT */
/* The perf jitdump format's constants (tools/perf/util/jitdump.h), one
 * definition for the writer (jitdump_write.c) and the reader
 * (jitdump_read.c). */
#ifndef LETW_BT_JITDUMP_FORMAT_H
#define LETW_BT_JITDUMP_FORMAT_H

/* Record ids (perf's enum jit_record_type). */
enum {
	LETW_JD_CODE_LOAD = 0,
	LETW_JD_CODE_MOVE = 1,
	LETW_JD_CODE_DEBUG_INFO = 2,
	LETW_JD_CODE_CLOSE = 3,
	LETW_JD_CODE_UNWINDING_INFO = 4,
};

#define LETW_JD_MAGIC 0x4A695444u      /* "JiTD" read as a host-order u32 */
#define LETW_JD_MAGIC_SWAPPED 0x4454694Au
#define LETW_JD_VERSION 1u
#define LETW_JD_PREFIX_SIZE 16u        /* id, total_size, timestamp */
#define LETW_JD_LOAD_FIXED 56u         /* prefix .. code_index */
#define LETW_JD_MOVE_FIXED 64u         /* prefix .. code_index */
#define LETW_JD_DEBUG_FIXED 32u        /* prefix, code_addr, nr_entry */

#endif /* LETW_BT_JITDUMP_FORMAT_H */
