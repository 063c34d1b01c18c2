/* SPDX-License-Identifier: MIT */
/* The reader's child process as /proc shows it to the supervisor
 * (readerproc.c): how far it got, and what it waits on. */
#ifndef LETW_CLI_READERPROC_H
#define LETW_CLI_READERPROC_H

#include <stddef.h>
#include <sys/types.h>

struct letw_child_stat {
	unsigned long long cpu_ticks, faults, rchar, wchar;
	unsigned long long start_ticks; /* since boot (field 22): with the pid,
					 * one process of this boot */
	char state;                     /* 'R', 'S', ..., 'Z' */
};

/* /proc/PID/stat alone: state, start time, CPU time and page faults.
 * 0; -ENOENT when there is no such file (gone, or hidden by hidepid);
 * -EIO when it cannot be read or parsed. */
int letw_proc_stat(pid_t pid, struct letw_child_stat *cs);

/* letw_proc_stat(), and bytes read and written (rchar, wchar; 0 when
 * /proc/PID/io is not readable). 0, or -1 when the process is gone. */
int letw_child_stat(pid_t pid, struct letw_child_stat *cs);

/* The trace files (under one of dirs) the child has open, as a
 * comma-separated list of `path`s in out ("" for none). */
void letw_child_open_files(pid_t pid, char **dirs, size_t ndirs, char *out, size_t len);

/* 1 when the child sleeps in an open() or read() of a trace file (under
 * one of dirs), with that file's path in out; else 0. */
int letw_child_waits_on_input(pid_t pid, char **dirs, size_t ndirs, char *out, size_t len);

#endif /* LETW_CLI_READERPROC_H */
