/* SPDX-License-Identifier: MIT */
#ifndef LETW_BENCH_OPTS_H
#define LETW_BENCH_OPTS_H

#include "common.h"

/* getopt_long over the options every benchmark program shares. usage is
 * the program-specific head of --help. Returns 0, 1 after printing --help,
 * or -1 on a bad option (message on stderr). */
int bench_parse_opts(int argc, char **argv, struct bench_opts *o,
		     const char *usage);

/* The one operand left after options (the subcommand): 0 or -1. */
int bench_command(int argc, char **argv, const char **cmd);

#endif
