/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"

static int connect_to(pid_t pid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd, n;

	/* Abstract name: a leading NUL, and the length covers only the
	 * bytes of the name (no terminating NUL). */
	n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%s%d",
		     LETW_CTL_ABSTRACT_PREFIX, (int)pid);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, len) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int letw_ctl_call(pid_t pid, uint16_t type, uint64_t mask, int wait_reply,
		  int timeout_ms, struct letw_ctl_reply *out)
{
	static uint64_t next_id = 1;
	struct letw_ctl_request req = {
		.magic = LETW_CTL_MAGIC, .version = LETW_CTL_VERSION,
		.type = type, .match_any_keyword = mask,
		.request_id = ((uint64_t)getpid() << 32) | next_id++,
	};
	struct pollfd pfd;
	ssize_t n;
	int fd, ret;

	fd = connect_to(pid);
	if (fd < 0)
		return fd;
	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req)) {
		ret = -errno;
		goto out;
	}
	if (!wait_reply) {
		ret = 0;
		goto out;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	do
		ret = poll(&pfd, 1, timeout_ms > 0 ? timeout_ms : -1);
	while (ret < 0 && errno == EINTR);
	if (ret == 0) {
		ret = -ETIMEDOUT;
		goto out;
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

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int letw_ctl_list(pid_t **pids_out)
{
	FILE *f = fopen("/proc/net/unix", "r");
	static const char tag[] = "@" LETW_CTL_ABSTRACT_PREFIX;
	pid_t *pids = NULL, *np;
	size_t n = 0, cap = 0, i, k;
	char *line = NULL;
	size_t lcap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		char *p = strstr(line, tag), *end;
		long v;

		if (!p)
			continue;
		v = strtol(p + sizeof(tag) - 1, &end, 10);
		/* The path is the last column: nothing may follow the pid. */
		if (end == p + sizeof(tag) - 1 || (*end && *end != '\n') || v <= 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			np = realloc(pids, cap * sizeof(*np));
			if (!np) {
				free(pids);
				free(line);
				fclose(f);
				return -ENOMEM;
			}
			pids = np;
		}
		pids[n++] = (pid_t)v;
	}
	free(line);
	fclose(f);
	if (n)
		qsort(pids, n, sizeof(*pids), cmp_pid);
	/* A listening socket and its accepted connections share the name. */
	for (i = 0, k = 0; i < n; i++)
		if (!k || pids[k - 1] != pids[i])
			pids[k++] = pids[i];
	*pids_out = pids;
	return (int)k;
}
