/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"

/* PID's pid in its own pid namespace: the last field of NSpid, and in
 * *levels how many namespaces deep it is seen from ours (1: ours). */
static int ns_vpid(pid_t pid, pid_t *vpid, int *levels)
{
	char path[40], *line = NULL;
	size_t cap = 0;
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *p, *end;
		long v = 0;
		int n = 0;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (p = line + 6;; p = end, n++) {
			long x = strtol(p, &end, 10);

			if (end == p)
				break;
			v = x;
		}
		if (v > 0) {
			*vpid = (pid_t)v;
			*levels = n;
			ret = 0;
		}
		break;
	}
	free(line);
	fclose(f);
	return ret;
}

/* The name of PID's control socket. A process seen one NSpid level deep
 * shares our pid namespace, so ours is used: reading /proc/PID/ns needs
 * ptrace access, and a client without it (another user) must still reach
 * the provider and be refused by it (-EACCES, SO_PEERCRED). */
static int sockaddr_of(pid_t pid, struct sockaddr_un *sa, socklen_t *len)
{
	int64_t pidns;
	pid_t vpid;
	int levels, ret = ns_vpid(pid, &vpid, &levels);

	if (ret)
		return ret;
	pidns = letw_ctl_pidns(levels == 1 ? 0 : pid);
	if (pidns < 0)
		return (int)pidns;
	*len = letw_ctl_sockaddr(sa, (uint64_t)pidns, vpid);
	return 0;
}

/*
 * Abstract socket names are first come, first served: any user can bind
 * the name of another process's socket (one without lttng-etw, or one that
 * has not bound it yet). The server's credentials, taken by the kernel
 * when it called listen() and given in our pid namespace, must name the
 * process we asked for; else its answers would be taken for that
 * process's.
 *
 * The provider accepts between passes only, and a request whose reply we
 * stopped waiting for stays queued until then: during a long pass (a
 * blocking channel paced by the consumer) the listen backlog fills, and a
 * blocking connect() would wait for the pass's end whatever the caller's
 * timeout. So the connect is non-blocking (a full backlog answers EAGAIN
 * at once on AF_UNIX) and retried until the deadline (0: none).
 */
static int connect_to(pid_t pid, double deadline)
{
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t len = 0, clen = sizeof(cred);
	int fd, e, ret = sockaddr_of(pid, &sa, &len);

	if (ret)
		return ret;
	for (;;) {
		if (letw_interrupted)
			return -EINTR;
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (struct sockaddr *)&sa, len) == 0)
			break;
		e = errno;
		close(fd);
		if (e != EAGAIN)
			return -e;
		if (deadline > 0 && letw_now_s() >= deadline)
			return -ETIMEDOUT;
		letw_sleep_ms(10);
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.pid != pid) {
		close(fd);
		return -EADDRINUSE;
	}
	/* The provider serves root and its own user only (ctlsock.c), and
	 * says so only once it accepts us: a request sent without waiting
	 * for the reply would be refused unseen. Its uid is the one it
	 * listened with, the uid it compares ours with. */
	if (geteuid() != 0 && cred.uid != geteuid()) {
		close(fd);
		return -EACCES;
	}
	/* Connected: the request and the reply as before (poll bounds the
	 * wait for the reply). */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int letw_ctl_vpid(pid_t pid, pid_t *vpid)
{
	int levels;

	return ns_vpid(pid, vpid, &levels);
}

/* The longest poll() between two looks at letw_interrupted. */
#define POLL_SLICE_MS 100

int letw_ctl_call(pid_t pid, uint16_t type, uint64_t mask, int wait_reply,
		  int timeout_ms, struct letw_ctl_reply *out)
{
	static uint64_t next_id = 1;
	struct letw_ctl_request req = {
		.magic = LETW_CTL_MAGIC, .version = LETW_CTL_VERSION,
		.type = type, .match_any_keyword = mask,
		.request_id = ((uint64_t)getpid() << 32) | next_id++,
	};
	double deadline = timeout_ms > 0 ? letw_now_s() + timeout_ms / 1000.0 : 0;
	struct pollfd pfd;
	ssize_t n;
	int fd, ret;

	if (letw_interrupted)
		return -EINTR;
	fd = connect_to(pid, deadline);
	if (fd < 0)
		return fd;
	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req)) {
		ret = -errno;
		/* The provider refuses a connection when it accepts it (another
		 * user: -EACCES; too many clients: -EBUSY), before reading any
		 * request: its reply is queued for us and the connection
		 * closed, so a request sent after that fails (EPIPE). The
		 * refusal is the answer, not the broken pipe. */
		if ((ret == -EPIPE || ret == -ECONNRESET) && out &&
		    recv(fd, out, sizeof(*out), MSG_DONTWAIT | MSG_TRUNC) == (ssize_t)sizeof(*out) &&
		    out->magic == LETW_CTL_MAGIC && out->version == LETW_CTL_VERSION &&
		    out->status < 0)
			ret = 0;
		goto out;
	}
	if (!wait_reply) {
		ret = 0;
		goto out;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	/* In slices of POLL_SLICE_MS: an interrupt that lands between the
	 * check below and poll() would not cut poll short, and the command
	 * would wait out the whole timeout (30 s for capture-state --wait)
	 * before saying it was interrupted. */
	for (;;) {
		int left = POLL_SLICE_MS;

		if (letw_interrupted) {
			ret = -EINPROGRESS; /* sent: the provider runs it all the same */
			goto out;
		}
		if (deadline > 0) {
			double s = deadline - letw_now_s();

			if (s <= 0) {
				ret = -ETIMEDOUT;
				goto out;
			}
			if (s * 1000 < left)
				left = (int)(s * 1000) + 1;
		}
		ret = poll(&pfd, 1, left);
		if (ret > 0)
			break;
		if (ret < 0 && errno != EINTR) {
			ret = -errno; /* not read: recv() would block */
			goto out;
		}
	}
	n = recv(fd, out, sizeof(*out), MSG_TRUNC);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	/* A reply of the wrong size, version or id is a provider from
	 * another version of lttng-etw, or not lttng-etw at all. */
	if (n == 0)
		ret = -ECONNRESET;
	else if ((size_t)n != sizeof(*out) || out->magic != LETW_CTL_MAGIC ||
		 out->version != LETW_CTL_VERSION ||
		 (out->request_id != req.request_id && out->status == 0))
		ret = -EPROTO;
	else
		ret = 0;
out:
	close(fd);
	return ret;
}

struct ctl_name {
	uint64_t pidns;
	pid_t vpid;
};

static int cmp_name(const void *a, const void *b)
{
	const struct ctl_name *x = a, *y = b;

	if (x->pidns != y->pidns)
		return x->pidns < y->pidns ? -1 : 1;
	return x->vpid < y->vpid ? -1 : x->vpid > y->vpid;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* Room for element n of *v (capacity *cap elements of elem bytes),
 * doubling: 0, or -ENOMEM with *v untouched. */
static int room_for(void **v, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 16;
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, c * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

/* The control sockets' names in /proc/net/unix (our network namespace),
 * sorted, without repeats (a listening socket and its accepted connections
 * share the name). Returns the count, or a negative errno. */
static int list_names(struct ctl_name **out)
{
	FILE *f = fopen("/proc/net/unix", "re");
	static const char tag[] = "@" LETW_CTL_ABSTRACT_PREFIX;
	struct ctl_name *v = NULL;
	void *vp = NULL;
	size_t n = 0, cap = 0, i, k;
	char *line = NULL;
	size_t lcap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		char *p = strstr(line, tag), *end, *end2;
		unsigned long long ns;
		long vpid;

		if (!p)
			continue;
		p += sizeof(tag) - 1;
		errno = 0;
		ns = strtoull(p, &end, 10);
		if (end == p || *end != '/' || errno)
			continue;
		vpid = strtol(end + 1, &end2, 10);
		/* The path is the last column: nothing may follow the pid. */
		if (end2 == end + 1 || (*end2 && *end2 != '\n') || vpid <= 0)
			continue;
		if (room_for(&vp, &cap, n, sizeof(*v))) {
			free(v);
			free(line);
			fclose(f);
			return -ENOMEM;
		}
		v = vp;
		v[n++] = (struct ctl_name){ .pidns = ns, .vpid = (pid_t)vpid };
	}
	free(line);
	fclose(f);
	if (n)
		qsort(v, n, sizeof(*v), cmp_name);
	for (i = 0, k = 0; i < n; i++)
		if (!k || cmp_name(&v[k - 1], &v[i]))
			v[k++] = v[i];
	*out = v;
	return (int)k;
}

/*
 * A socket's name says which process of which pid namespace; the pid we
 * report and talk to is the one we see. So walk our /proc and keep each
 * process whose (pid namespace, NSpid) pair names a socket. A socket whose
 * process we cannot see (a pid namespace that is not ours nor below it, or
 * a process not ours to inspect) is not asked, and we say so: `stop` would
 * otherwise seem to have waited for every process.
 */
int letw_ctl_list(pid_t **pids_out)
{
	struct ctl_name *names = NULL;
	pid_t *pids = NULL;
	void *pp = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int nnames;
	DIR *d = NULL;

	nnames = list_names(&names);
	if (nnames < 0)
		return nnames;
	if (nnames && !(d = opendir("/proc"))) {
		int e = -errno;

		free(names);
		return e;
	}
	while (d && (de = readdir(d))) {
		struct ctl_name key;
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		int64_t ns;
		int levels;

		if (*end || end == de->d_name || pid <= 0)
			continue;
		if (ns_vpid((pid_t)pid, &key.vpid, &levels))
			continue; /* exited meanwhile */
		ns = letw_ctl_pidns(levels == 1 ? 0 : (pid_t)pid);
		if (ns < 0)
			continue; /* not ours to inspect */
		key.pidns = (uint64_t)ns;
		if (!bsearch(&key, names, (size_t)nnames, sizeof(*names), cmp_name))
			continue;
		if (room_for(&pp, &cap, n, sizeof(*pids))) {
			free(pids);
			free(names);
			closedir(d);
			return -ENOMEM;
		}
		pids = pp;
		pids[n++] = (pid_t)pid;
	}
	if (d)
		closedir(d);
	free(names);
	if (n)
		qsort(pids, n, sizeof(*pids), cmp_pid);
	if (nnames > (int)n)
		letw_note("%d lttng-etw control socket(s) belong to processes not visible here "
			  "(another pid namespace, or not yours to inspect); not asked",
			  nnames - (int)n);
	*pids_out = pids;
	return (int)n;
}
