/* SPDX-License-Identifier: MIT */
/*
 * Why a cap: babeltrace2 2.0's CTF reader sizes a dynamic array from the
 * length it reads in the stream and creates one field object per element
 * before it reads any (bt_field_array_dynamic_set_length). A damaged
 * length (a field declared wider than it is written, a flipped bit)
 * makes it allocate gigabytes; every page it touches is a page fault,
 * which the stall watch counts as progress (the reader maps stream
 * files), so without a cap the child grows until the kernel's OOM killer
 * picks a process — not necessarily ours. With RLIMIT_DATA the
 * allocation fails, glib aborts the child, and the parent reports the
 * limit (supervise.c). RLIMIT_DATA rather than RLIMIT_AS: it counts heap
 * and private anonymous memory only, not the stream files the reader
 * maps or thread stacks, so a big trace needs no bigger limit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "memlimit.h"
#include "sanitizer.h"

#define MIN_DEFAULT_MIB 1024u

/* No cap under ASan or TSan (LETW_OWN_MALLOC): their shadow memory is
 * private anonymous memory that RLIMIT_DATA counts, terabytes reserved
 * at startup, so any cap is already exceeded. Under TSan, which this
 * used not to cover (ASan only), every reader of a TSan-built CLI ran
 * out of memory at once (e2e.test_sessions' report, "limit 12052 MiB"). */
#ifdef LETW_OWN_MALLOC
#define LETW_NO_CAP 1
#endif

uint64_t letw_memory_limit_mib(uint64_t opt_mib)
{
	const char *env = getenv("LETW_MEMORY_LIMIT");
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t half;
	char *end;

	if (opt_mib > 0)
		return opt_mib;
	if (env && *env) {
		unsigned long long v;

		errno = 0;
		v = strtoull(env, &end, 10);
		if (!*end && v > 0 && errno == 0 && *env != '-')
			return v;
		letw_err("ignoring LETW_MEMORY_LIMIT=`%s` (not a positive number of MiB)", env);
	}
	half = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 2 / (1024 * 1024) : 0;
	return half > MIN_DEFAULT_MIB ? half : MIN_DEFAULT_MIB;
}

#ifndef LETW_NO_CAP
/* What RLIMIT_DATA counts of this process now, in bytes (0 if unknown). */
static uint64_t data_in_use(void)
{
	char line[128];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmData: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}
#endif

int letw_memory_limit_apply(uint64_t mib)
{
#ifdef LETW_NO_CAP
	(void)mib;
	return 0;
#else
	struct rlimit rl;
	/* A limit past what rlim_t counts is no limit (not a wrapped one). */
	rlim_t want = mib > RLIM_INFINITY / (1024 * 1024) ? RLIM_INFINITY
							  : (rlim_t)mib * 1024 * 1024;

	if (getrlimit(RLIMIT_DATA, &rl) != 0)
		return -errno;
	/* Only ever lower: a limit the user set already stands. */
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
		want = rl.rlim_max;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
		return 0;
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_DATA, &rl) != 0)
		return -errno;
	/* The heap inherited from the parent counts: it is reserved in
	 * 2 MiB steps (hugeheap.c), so a limit of a few MiB can be below it,
	 * and then the reader's first mappings (its plugins' data) fail
	 * before any allocation glib would report. */
	return data_in_use() >= (uint64_t)want ? -ENOMEM : 0;
#endif
}
