/* SPDX-License-Identifier: MIT */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jitdump_mark.h"
#include "clock.h"
#include "log.h"

#if defined(__x86_64__)
#define MARK_ELF_MACH EM_X86_64
#elif defined(__aarch64__)
#define MARK_ELF_MACH EM_AARCH64
#elif defined(__i386__)
#define MARK_ELF_MACH EM_386
#else
#define MARK_ELF_MACH EM_NONE
#endif

static struct {
	char dir[PATH_MAX];
	void *addr;  /* the mapping; NULL when none */
	size_t len;
} mark;

/* The jitdump header (tools/perf/util/jitdump.h: struct jitheader),
 * version 1, 40 bytes, no flags: timestamps are CLOCK_MONOTONIC. */
struct mark_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

_Static_assert(sizeof(struct mark_header) == 40, "jitdump header is 40 bytes");

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The header's timestamp, which perf does not read: when this process
 * began (its fork), on CLOCK_MONOTONIC, rounded up to the next clock tick,
 * else now. `lttng-etw jitdump` dates code the trace knows only from a
 * rundown just after it (analysis/plugin/jitdump.c, process_since): after
 * the fork, so perf keeps the mapping when perf.data holds the fork (a
 * mapping dated before it is dropped by it), and from the process's start,
 * so samples perf took before letw_init ran (a JVM agent attached late)
 * are named too. /proc/self/stat gives the start in clock ticks of
 * CLOCK_BOOTTIME; the two clocks differ by the time suspended.
 */
static uint64_t process_start_ns(void)
{
	char buf[1024], *p;
	unsigned long long ticks;
	uint64_t boot, mono, start, tick;
	long hz = sysconf(_SC_CLK_TCK);
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), i;
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	mono = letw_clock_ns(CLOCK_MONOTONIC);
	if (fd >= 0)
		close(fd);
	if (n <= 0 || hz <= 0)
		return mono;
	buf[n] = '\0';
	/* "pid (comm) state ...": comm may hold spaces; starttime is the
	 * 22nd field, the 20th after the comm. */
	if (!(p = strrchr(buf, ')')))
		return mono;
	for (i = 0, p++; i < 19 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &ticks) != 1)
		return mono;
	tick = 1000000000ull / (uint64_t)hz;
	boot = letw_clock_ns(CLOCK_BOOTTIME);
	start = (uint64_t)ticks * tick + tick;
	if (start > boot || boot - start > mono)
		return mono;
	return mono - (boot - start);
}

static void mark_create(void)
{
	struct mark_header h = {
		.magic = 0x4A695444u, .version = 1, .total_size = sizeof(h),
		.elf_mach = MARK_ELF_MACH, .pid = (uint32_t)getpid(),
	};
	long page = sysconf(_SC_PAGESIZE);
	char path[PATH_MAX + 32];
	void *addr;
	int fd;

	if (snprintf(path, sizeof(path), "%s/jit-%d.dump", mark.dir, (int)getpid()) >=
	    (int)sizeof(path)) {
		letw_warn("jitdump placeholder: directory name too long: %s", mark.dir);
		return;
	}
	h.timestamp = process_start_ns();
	(void)mkdir(mark.dir, 0755); /* one level, as perf's JVMTI agent does */
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		letw_warn("jitdump placeholder: cannot create %s: %s", path, strerror(errno));
		return;
	}
	if (write_all(fd, &h, sizeof(h))) {
		letw_warn("jitdump placeholder: cannot write %s: %s", path, strerror(errno));
		close(fd);
		return;
	}
	/* Executable, or perf record does not note it (a noexec mount makes
	 * this fail: choose another directory). */
	addr = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (addr == MAP_FAILED) {
		letw_warn("jitdump placeholder: cannot map %s executable: %s", path,
			  strerror(errno));
		return;
	}
	mark.addr = addr;
	mark.len = (size_t)page;
	letw_info("jitdump placeholder %s mapped at %p: record with `perf record -k mono`, then `lttng-etw jitdump TRACE -o %s`",
		  path, addr, mark.dir);
}

void letw_jitdump_mark_init(const struct letw_config *cfg)
{
	const char *env = getenv("LETW_JITDUMP_DIR"), *dir = NULL;
	int flag = cfg && (cfg->flags & LETW_CONFIG_JITDUMP);

	if (mark.addr)
		return;
	if (env && *env)
		dir = env;
	else if (!flag)
		return;
	else if (cfg->size >= offsetof(struct letw_config, jitdump_dir) + sizeof(cfg->jitdump_dir) &&
		 cfg->jitdump_dir && *cfg->jitdump_dir)
		dir = cfg->jitdump_dir;
	else
		dir = "/tmp";
	if (strlen(dir) >= sizeof(mark.dir)) {
		letw_warn("jitdump placeholder: directory name too long: %s", dir);
		return;
	}
	strcpy(mark.dir, dir);
	mark_create();
}

void letw_jitdump_mark_fork_child(void)
{
	if (!mark.addr)
		return;
	/* perf matches jit-<pid>.dump against the mapping process's pid:
	 * the inherited mapping names the parent. */
	munmap(mark.addr, mark.len);
	mark.addr = NULL;
	mark_create();
}
