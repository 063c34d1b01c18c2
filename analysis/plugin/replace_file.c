/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* renameat2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replace_file.h"

int letw_replace_file(const char *tmp, const char *path)
{
#ifdef RENAME_EXCHANGE
	struct stat st;

	/*
	 * rename() over an existing file makes ext4 start writing the new
	 * file's data back at once, in the caller (its auto_da_alloc
	 * heuristic for programs that replace files without fsync): for a
	 * 77 MB dump on the bench machine that was 0.2 s of waiting for the
	 * disk, on every run into the same directory. Swapping the two
	 * names (as atomic for readers of path) and then removing the old
	 * file leaves writeback to the kernel's flusher. These files are
	 * made again from the trace at will, so the narrower crash window
	 * of the heuristic (which never promised durability: no fsync)
	 * is not worth the wait. Only over a regular file: a swap with a
	 * directory would succeed where rename() rightly fails.
	 */
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
		/* tmp now names the old file; path has the new one
		 * whatever happens next, so a failed unlink is only a
		 * leftover for the caller to name, not a failure: its
		 * errno comes back positive (the caller's logging may
		 * clobber errno before reading it). */
		return unlink(tmp) == 0 ? 0 : (errno ? errno : EIO);
	}
	/* No file there yet (nothing to flush), or no swap on this
	 * filesystem or kernel: rename() says what is wrong, if anything. */
#endif
	return rename(tmp, path) == 0 ? 0 : -errno;
}
