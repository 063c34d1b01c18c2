/* SPDX-License-Identifier: MIT */
/* Finding the CTF traces under a directory (every directory holding a
 * `metadata` file), the way babeltrace2's src.ctf.fs would be given them. */
#ifndef LETW_CLI_TRACES_H
#define LETW_CLI_TRACES_H

#include <stddef.h>

struct letw_traces {
	char **dir;
	size_t n, cap;
};

/* Returns 0 with at least one trace, -1 after printing why not (the root
 * or a directory under it cannot be read, or holds no trace). */
int letw_traces_find(const char *root, struct letw_traces *t);
void letw_traces_fini(struct letw_traces *t);

#endif /* LETW_CLI_TRACES_H */
