/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* renameat2 */
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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

/* Six letters from the kernel's random pool; if that fails (a seccomp
 * filter, a kernel before 3.17), from the clock, the pid and a counter:
 * still not known in advance, and O_EXCL keeps even a guess harmless. */
static void random_letters(char *at)
{
	static const char set[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned long calls;
	unsigned char r[6];

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		unsigned long long v;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)ts.tv_sec ^
		    ((unsigned long long)getpid() << 40) ^ ++calls * 0x9e3779b97f4a7c15ull;
		for (size_t i = 0; i < sizeof(r); i++, v >>= 8)
			r[i] = (unsigned char)v;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		at[i] = set[r[i] % (sizeof(set) - 1)];
}

int letw_create_temp(char *tmpl)
{
	size_t len = strlen(tmpl);

	if (len < 6 || strcmp(tmpl + len - 6, "XXXXXX") != 0)
		return -EINVAL;
	/* Not mkostemp(): it creates the file 0600, and the outputs were
	 * always 0666 less the umask (perf inject and perf report may run
	 * as another user); mode 0666 here lets the kernel apply the umask
	 * and a default ACL exactly as before. */
	for (int tries = 0; tries < 100; tries++) {
		int fd;

		random_letters(tmpl + len - 6);
		fd = open(tmpl, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0) {
			/* Held until the file is closed, by the kernel for
			 * us should we die (SIGKILL included): a later run
			 * tells a live writer's file from one left by a
			 * writer gone (letw_remove_stale_temps()). A new
			 * file of our own: nothing else holds it. */
			(void)flock(fd, LOCK_EX | LOCK_NB);
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int letw_temp_path(const char *path, char **tmp)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash + 1 - path) : 0, blen = strlen(path + dlen);
	char suffix[48];
	size_t slen = (size_t)snprintf(suffix, sizeof(suffix), ".tmp.%ld.XXXXXX", (long)getpid());

	/* The name cut, not the suffix letw_remove_temps() looks for: a
	 * file name of up to NAME_MAX bytes (a report's) failed to be
	 * written with ENAMETOOLONG, its temporary name longer. */
	if (blen + slen > NAME_MAX)
		blen = NAME_MAX - slen;
	/* The whole path is bounded too (open() fails with ENAMETOOLONG):
	 * said for what it is, not as the create's failure. */
	if (dlen + blen + slen >= PATH_MAX) {
		*tmp = NULL;
		return -ENAMETOOLONG;
	}
	if (asprintf(tmp, "%.*s%s", (int)(dlen + blen), path, suffix) < 0) {
		*tmp = NULL;
		return -ENOMEM;
	}
	return 0;
}

const char *letw_temp_path_why(int err)
{
	return err == -ENAMETOOLONG ?
		"its path with the temporary file's suffix (.tmp.PID.XXXXXX) is longer than PATH_MAX" :
		strerror(-err);
}

/* Whether name is "NAME.tmp.PID.XXXXXX" (letw_temp_path), the random
 * part as letw_create_temp() makes it: then *pid and *nlen, NAME's
 * length. */
static int temp_name(const char *name, long *pid, size_t *nlen)
{
	size_t len = strlen(name), d, dot;

	if (len < 13)
		return 0;
	for (size_t i = len - 6; i < len; i++)
		if (!isalnum((unsigned char)name[i]))
			return 0;
	dot = len - 7;
	for (d = dot; d > 0 && isdigit((unsigned char)name[d - 1]); d--)
		;
	if (name[dot] != '.' || d == dot || dot - d > 10 || d < 5 ||
	    memcmp(name + d - 5, ".tmp.", 5) != 0)
		return 0;
	*pid = strtol(name + d, NULL, 10);
	*nlen = d - 5;
	return 1;
}

/* Which temporary files remove_temps_at() removes. */
struct temps_sel {
	pid_t pid;          /* that writer's; 0: those of writers gone */
	const char *prefix; /* pid 0: NAME (NULL: the sinks' names) */
	size_t plen;
};

/* A NAME of ours: the report's own (sel->prefix), else perfmap's
 * perf-PID.map, jitdump's .jit-PID.dump and the directory probe's. In a
 * /tmp, another program's "x.tmp.PID.XXXXXX" is not ours to judge. */
static int ours(const struct temps_sel *sel, const char *name, size_t nlen)
{
	if (sel->prefix)
		return nlen == sel->plen && !memcmp(name, sel->prefix, nlen);
	return (nlen > 9 && !strncmp(name, "perf-", 5) && !memcmp(name + nlen - 4, ".map", 4)) ||
	       (nlen > 10 && !strncmp(name, ".jit-", 5) && !memcmp(name + nlen - 5, ".dump", 5)) ||
	       (nlen == 11 && !strncmp(name, ".letw-probe", 11));
}

/* The writer of the temporary file name (pid: the one its name gives) is
 * gone: no such process, and no lock on the file. A live writer holds
 * its lock (letw_create_temp()) until it closes the file; the pid alone
 * could be another pid namespace's, whose writer is alive. */
static int writer_gone(int dfd, const char *name, long pid)
{
	int fd, gone;

	if (pid <= 0 || pid > INT_MAX || pid == (long)getpid() ||
	    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return gone;
}

/* letw_remove_temps() or letw_remove_stale_temps() in the directory open
 * as dfd (closed here); its pidns-* subdirectories too when sub. */
static int remove_temps_at(int dfd, const struct temps_sel *sel, int sub, int *err)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int removed = 0;

	if (!d) {
		if (!*err)
			*err = -errno;
		close(dfd);
		return 0;
	}
	/* Names relative to the directory's descriptor, and no link
	 * followed: the directory may be one others write to. */
	while ((de = readdir(d))) {
		struct stat st;
		size_t nlen;
		long pid;
		int fd;

		if (sub && strncmp(de->d_name, "pidns-", 6) == 0) {
			fd = openat(dirfd(d), de->d_name,
				    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				removed += remove_temps_at(fd, sel, 0, err);
			continue;
		}
		if (!temp_name(de->d_name, &pid, &nlen) ||
		    (sel->pid ? pid != (long)sel->pid : !ours(sel, de->d_name, nlen)) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    (!sel->pid && !writer_gone(dirfd(d), de->d_name, pid)))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			removed++;
		else if (errno != ENOENT && !*err)
			*err = -errno;
	}
	closedir(d);
	return removed;
}

static int remove_temps(const char *dir, const struct temps_sel *sel, int sub)
{
	int err = 0, removed, fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	removed = remove_temps_at(fd, sel, sub, &err);
	return err ? err : removed;
}

int letw_remove_temps(const char *dir, pid_t pid)
{
	struct temps_sel sel = { .pid = pid };

	return remove_temps(dir, &sel, 1);
}

int letw_remove_stale_temps(const char *tmpl)
{
	const char *slash = strrchr(tmpl, '/');
	char *dir = slash ? strndup(tmpl, (size_t)(slash == tmpl ? 1 : slash - tmpl)) : strdup(".");
	struct temps_sel sel = { 0 };
	size_t nlen;
	long pid;
	int r;

	if (!dir)
		return -ENOMEM;
	/* Not a template: nothing to match. */
	if (temp_name(slash ? slash + 1 : tmpl, &pid, &nlen)) {
		sel.prefix = slash ? slash + 1 : tmpl;
		sel.plen = nlen;
	}
	r = sel.prefix ? remove_temps(dir, &sel, 0) : -EINVAL;
	free(dir);
	return r;
}

int letw_remove_stale_temps_in(const char *dir)
{
	struct temps_sel sel = { 0 };

	return remove_temps(dir, &sel, 1);
}

/* /proc/self/fd/N or /dev/fd/N: one of the caller's open files. */
static int names_own_fd(const char *p)
{
	return !strncmp(p, "/proc/self/fd/", 14) || !strncmp(p, "/dev/fd/", 8);
}

/* A link of root's or the caller's is followed; one of another user's
 * (planted in a directory it can write to) never is. */
static int link_trusted(const struct stat *l)
{
	return l->st_uid == 0 || l->st_uid == geteuid();
}

int letw_output_in_place(const char *path)
{
	struct stat l, t;

	if (lstat(path, &l) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(l.st_mode)) {
		char to[32];
		ssize_t n;

		if (stat(path, &t) != 0)
			return errno == ENOENT ? 0 : -errno;
		if (S_ISDIR(t.st_mode))
			return -EISDIR;
		/* /dev/stdout and its kin (a link of root's to
		 * /proc/self/fd/N): an open file of the caller's, written
		 * into whatever it is. Replacing the link would break it for
		 * every program on the machine. */
		if (names_own_fd(path))
			return 1;
		n = readlink(path, to, sizeof(to) - 1);
		if (n > 0) {
			to[n] = '\0';
			if (names_own_fd(to) && link_trusted(&l))
				return 1;
		}
		/* A link planted by another user (in a directory it can
		 * write to) is not followed, whatever it points at. */
		if (S_ISREG(t.st_mode) || !link_trusted(&l))
			return 0;
		return 1;
	}
	if (S_ISDIR(l.st_mode))
		return -EISDIR;
	return !S_ISREG(l.st_mode);
}

char *letw_output_target(const char *path)
{
	char *cur = strdup(path), *next = NULL, to[PATH_MAX];
	struct stat l;

	for (int depth = 0; cur && depth < 40; depth++) {
		const char *slash;
		ssize_t n;

		if (lstat(cur, &l) != 0 || !S_ISLNK(l.st_mode) || !link_trusted(&l))
			return cur;
		n = readlink(cur, to, sizeof(to) - 1);
		if (n < 0) {
			free(cur);
			return NULL;
		}
		to[n] = '\0';
		/* A relative target is relative to the link's directory. */
		slash = strrchr(cur, '/');
		if (to[0] == '/' || !slash)
			next = strdup(to);
		else if (asprintf(&next, "%.*s/%s", (int)(slash - cur), cur, to) < 0)
			next = NULL;
		free(cur);
		cur = next;
	}
	if (cur) {
		free(cur);
		errno = ELOOP;
	}
	return NULL;
}

int letw_close_output(FILE *f, int close)
{
	/* A write that failed earlier left the error flag and its errno
	 * (stdio keeps no other record of it); the caller zeroed errno
	 * before writing. */
	int e = ferror(f) ? (errno ? errno : EIO) : 0;

	errno = 0;
	if (fflush(f) != 0 && !e)
		e = errno ? errno : EIO;
	errno = 0;
	if (close && fclose(f) != 0 && !e)
		e = errno ? errno : EIO;
	return e;
}

int letw_own_dir_check(const char *dir, char *why, size_t len)
{
	struct stat st;

	if (lstat(dir, &st)) {
		snprintf(why, len, "cannot use `%s`: %s", dir, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, len, "refusing to use `%s`: it is a symbolic link, not a directory (remove it)", dir);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "cannot use `%s`: not a directory", dir);
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, len, "refusing to use `%s`: it belongs to another user (uid %u; remove it)",
			 dir, (unsigned)st.st_uid);
		return -1;
	}
	return 0;
}
