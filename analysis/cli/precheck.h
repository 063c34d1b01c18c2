/* SPDX-License-Identifier: MIT */
/*
 * Cheap checks of a CTF trace directory before babeltrace2 reads it, for
 * damage its 2.0 reader does not survive (it aborts, divides by zero or
 * loops forever rather than failing): metadata packets past the end of
 * their file, clocks without a frequency, names declared twice, stream
 * packets whose sizes run past their file or hold 2^64-1 in a sequence
 * number or a timestamp, a packet ending before it begins or of another
 * stream class than its file's first, LTTng index files that disagree
 * with their stream files (precheck_index.c), and a metadata or index
 * file that is not a regular file (a FIFO there made the reader wait
 * forever). Each refusal
 * says which file and why. Checks
 * that need to decode packets only run when the metadata declares the
 * packet layout LTTng writes; the supervisor (supervise.c) catches the
 * rest.
 */
#ifndef LETW_CLI_PRECHECK_H
#define LETW_CLI_PRECHECK_H

/* Returns 0 when the trace directory may be read, 1 when it holds no
 * event and the reader would refuse it (a per-process trace whose
 * metadata declares no stream: leave it out), -1 after printing why not. */
int letw_precheck_trace(const char *dir, int verbose);

#endif /* LETW_CLI_PRECHECK_H */
