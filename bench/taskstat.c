/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "taskstat.h"

pid_t bench_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int slurp(const char *path, char *buf, size_t len);

pid_t bench_find_thread(const char *comm)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char path[300], name[64];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (slurp(path, name, sizeof(name)))
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (!strcmp(name, comm))
			found = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return found;
}

/* The whole of a small /proc file into buf (NUL-terminated): 0 or -1. */
static int slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static uint64_t field(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

int bench_task_read(pid_t tid, struct bench_task *out)
{
	char path[64], buf[4096];
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->wall_ns = bench_now_ns();
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	if (!slurp(path, buf, sizeof(buf))) {
		out->vol_cs = field(buf, "\nvoluntary_ctxt_switches:");
		out->invol_cs = field(buf, "\nnonvoluntary_ctxt_switches:");
	} else {
		ret = -1;
	}
	/* stat: "pid (comm) state ppid ... minflt(10) cminflt majflt(12)";
	 * comm may hold spaces, so count fields after the last ')'. */
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (!slurp(path, buf, sizeof(buf))) {
		char *p = strrchr(buf, ')');
		unsigned long long v[10] = { 0 };

		if (!p || sscanf(p + 2, "%*c %llu %llu %llu %llu %llu %llu %llu %llu %llu",
				 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
				 &v[7], &v[8]) != 9)
			ret = -1;
		/* After state: ppid pgrp session tty tpgid flags minflt cminflt majflt. */
		out->minflt = v[6];
		out->majflt = v[8];
	} else {
		ret = -1;
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	if (!slurp(path, buf, sizeof(buf))) {
		unsigned long long cpu, delay;

		if (sscanf(buf, "%llu %llu", &cpu, &delay) == 2) {
			out->cpu_ns = cpu;
			out->run_delay_ns = delay;
		} else {
			ret = -1;
		}
	} else {
		ret = -1;
	}
	return ret;
}

void bench_task_delta(const struct bench_task *a, const struct bench_task *b,
		      struct bench_task *d)
{
	d->wall_ns = b->wall_ns - a->wall_ns;
	d->vol_cs = b->vol_cs - a->vol_cs;
	d->invol_cs = b->invol_cs - a->invol_cs;
	d->minflt = b->minflt - a->minflt;
	d->majflt = b->majflt - a->majflt;
	d->cpu_ns = b->cpu_ns - a->cpu_ns;
	d->run_delay_ns = b->run_delay_ns - a->run_delay_ns;
}

void bench_task_add(struct bench_task *sum, const struct bench_task *d)
{
	sum->wall_ns += d->wall_ns;
	sum->vol_cs += d->vol_cs;
	sum->invol_cs += d->invol_cs;
	sum->minflt += d->minflt;
	sum->majflt += d->majflt;
	sum->cpu_ns += d->cpu_ns;
	sum->run_delay_ns += d->run_delay_ns;
}

uint64_t bench_rss_bytes(void)
{
	static int fd = -1;
	char buf[128];
	unsigned long long size, rss;
	ssize_t n;

	if (fd < 0)
		fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &size, &rss) != 2)
		return 0;
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}
