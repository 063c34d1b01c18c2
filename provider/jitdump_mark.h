/* SPDX-License-Identifier: MIT */
/*
 * The perf jitdump placeholder (LETW_CONFIG_JITDUMP / LETW_JITDUMP_DIR):
 * DIR/jit-<pid>.dump, a valid jitdump header with no records, mapped
 * PROT_READ|PROT_EXEC for the life of the process. perf records executable
 * mappings only; `perf inject --jit` finds a jitdump through that mapping's
 * path and reads the file at inject time, so the dump `lttng-etw jitdump`
 * later writes at the same path (by rename: the mapping keeps the old
 * inode) is the one perf uses.
 *
 * Called with the library's lifecycle lock held (letw_init) or in a
 * freshly forked child (single-threaded there): the state needs no lock.
 * Never called from a publish path; errors go to the log callback.
 */
#ifndef LETW_JITDUMP_MARK_H
#define LETW_JITDUMP_MARK_H

#include <lttng-etw/lttng-etw.h>

/* Make and map the placeholder if asked (flag or environment). Once per
 * process: a later letw_init after letw_shutdown keeps the first one. */
void letw_jitdump_mark_init(const struct letw_config *cfg);

/* In a forked child: drop the parent's mapping, make and map the
 * child's own jit-<childpid>.dump in the same directory. */
void letw_jitdump_mark_fork_child(void);

#endif
