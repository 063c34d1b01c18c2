/* SPDX-License-Identifier: MIT */
/*
 * Fault injector for faults.sh's fork_in_resize (LD_PRELOAD, plain builds
 * only: a sanitizer runtime owns calloc there). The first calloc that
 * liburcu-cds makes on the library's control thread — a bucket table for
 * the cds_lfht_resize that letw_table_maintain calls, made with the
 * table's resize mutex held — creates $LETW_STALL_DIR/stalled and waits
 * for $LETW_STALL_DIR/go. It only delays the real allocation: everything
 * else is the real library and the real liburcu.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_calloc(size_t nmemb, size_t size);

static int armed = 1; /* the control thread only: no race */

static int called_from_urcu_cds(const void *ret)
{
	Dl_info info;

	return dladdr(ret, &info) && info.dli_fname &&
	       strstr(info.dli_fname, "liburcu-cds");
}

void *calloc(size_t nmemb, size_t size)
{
	const char *dir = getenv("LETW_STALL_DIR");
	char name[16] = "", path[PATH_MAX];

	if (armed && dir &&
	    !pthread_getname_np(pthread_self(), name, sizeof(name)) &&
	    !strcmp(name, "letw-control") &&
	    called_from_urcu_cds(__builtin_return_address(0))) {
		armed = 0;
		snprintf(path, sizeof(path), "%s/stalled", dir);
		close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
		snprintf(path, sizeof(path), "%s/go", dir);
		while (access(path, F_OK))
			usleep(1000);
	}
	return __libc_calloc(nmemb, size);
}
