/* SPDX-License-Identifier: MIT */
/*
 * Putting a finished output file (a perf map, a jitdump) in place of the
 * previous one under its final name, atomically: a reader sees the whole
 * old file or the whole new one, never a half-written one; and making the
 * temporary file that holds it until then.
 */
#ifndef LETW_BT_REPLACE_FILE_H
#define LETW_BT_REPLACE_FILE_H

#include <stdio.h>
#include <sys/types.h>

/* Move tmp (a regular file, written and closed) to path, replacing what
 * is there. Returns 0; or a negative errno when path was not replaced
 * (tmp still holds the new file, for the caller to remove); or a
 * positive errno when path holds the new file but the old one, now named
 * tmp, could not be removed (the caller warns; the output is in place). */
int letw_replace_file(const char *tmp, const char *path);

/* Create and open for writing a new file named tmpl, its last six
 * characters ("XXXXXX") replaced by random ones (tmpl is updated). The
 * name is not predictable and the file must not exist (O_EXCL, no symlink
 * followed): in a directory another user can write to, root never writes
 * through a link planted at the name it will use. Mode 0666 less the
 * umask. Locked (flock) until closed: the writer is alive. Returns the
 * descriptor (close-on-exec) or a negative errno. */
int letw_create_temp(char *tmpl);

/* *tmp = "PATH.tmp.PID.XXXXXX" (malloc()ed; PATH's last component cut
 * to keep that one within NAME_MAX), the template of the
 * temporary name of the output path, for letw_create_temp(): the writer's
 * pid in it lets the process that supervises it remove what it left
 * should it die before putting the file in place (letw_remove_temps()).
 * Returns 0, or -ENAMETOOLONG (the whole is PATH_MAX or longer) or
 * -ENOMEM (*tmp NULL). */
int letw_temp_path(const char *path, char **tmp);

/* What to say of letw_temp_path()'s error err (PATH_MAX named, not only
 * "File name too long"). */
const char *letw_temp_path_why(int err);

/* Remove, in dir and in its pidns-* subdirectories, the temporary files
 * process pid left (every sink's output): regular files of the caller's
 * named by letw_temp_path() with that pid.
 * For a supervisor, after its child died by a signal: a live writer's
 * file must not go. Links are neither followed nor removed. Returns the
 * number removed, or the negative errno of the first that could not be
 * (the others are still removed). */
int letw_remove_temps(const char *dir, pid_t pid);

/* Remove the temporary files that writers gone left (a SIGTERM or
 * SIGKILL of babeltrace2 while a sink wrote, where no supervisor cleans
 * up; a CLI killed with its reader): regular files of the caller's,
 * named by letw_temp_path() with a pid that is no process here, and
 * that no process holds the lock on (letw_create_temp(): a live writer
 * in another pid namespace holds it). Of tmpl's NAME only
 * ("DIR/NAME.tmp.PID.XXXXXX", a template of letw_temp_path()'s), in its
 * directory: the report's. Returns the number removed, or a negative
 * errno (-EINVAL: tmpl is no template). */
int letw_remove_stale_temps(const char *tmpl);

/* The same for the names perfmap and jitdump write (perf-PID.map,
 * .jit-PID.dump, and the output directory's probe), in dir and its
 * pidns-* subdirectories; another program's "x.tmp.PID.XXXXXX" is left
 * alone. */
int letw_remove_stale_temps_in(const char *dir);

/* A directory we create our outputs in (pidns-INO/) and find in place is
 * used only if it is a directory (not a symlink: lstat) of ours or root's:
 * in an output directory others can write to (a /tmp), another user's
 * directory or link would have root write its files wherever that user
 * chose. 0, or -1 with the message to print in why (naming dir). */
int letw_own_dir_check(const char *dir, char *why, size_t len);

/* Is path written into in place rather than replaced: a character or
 * block device, a FIFO or a socket (`-o /dev/null`: replaced, the device
 * node would become a file), or a symbolic link, of root's or the
 * caller's, to one; and /proc/self/fd/N, /dev/fd/N and a link of root's or
 * the caller's to them (`-o /dev/stdout`), whatever they reach: an open
 * file of the caller's, replacing the link would break it for everyone.
 * A link of another user's is
 * replaced as any link is, never followed. Returns 1; 0 for a regular
 * file, a link to one or to nothing, or no such file (replace it); or a
 * negative errno (-EISDIR for a directory). */
int letw_output_in_place(const char *path);

/* The file a regular output replaces: path, or when path is a symbolic
 * link of root's or the caller's, the file it leads to, existing or not
 * (`-o latest`, latest -> store/report.txt: store/report.txt is replaced,
 * as a shell's `>` writes through the link; replacing the link itself
 * left the file it names stale). Links are followed up to 40 deep; a
 * link of another user's is not followed (it is replaced, as
 * letw_output_in_place() says). Returns a malloc()ed path, or NULL with
 * errno (ELOOP, ENOMEM, readlink's). */
char *letw_output_target(const char *path);

/* Flush f (and fclose it if close): 0, or the errno of the first write
 * that failed, earlier ones included (a stream's error flag outlives the
 * buffer it failed to write: a later flush of an empty buffer succeeds).
 * Zero errno before writing to f: an earlier failure's errno is read from
 * it. */
int letw_close_output(FILE *f, int close);

#endif /* LETW_BT_REPLACE_FILE_H */
