/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_OPTIONS_H
#define LETW_JVM_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "naming.h"

#define JVM_LOG_PATH_MAX 4096 /* PATH_MAX */

enum jvm_log_level {
	JVM_LOG_DEBUG = 0,
	JVM_LOG_INFO = 1,
	JVM_LOG_WARN = 2,
	JVM_LOG_ERROR = 3,
};

/* The agent's options string: -agentpath:LIB=OPTIONS or
 * jcmd PID JVMTI.agent_load LIB OPTIONS. Syntax in options.c / README. */
struct jvm_opts {
	enum jvm_ns_style ns;
	enum jvm_sig_style sig;
	int lines;          /* publish line tables (LINES events) */
	int inlining;       /* ...with the inlined frames */
	int stubs;          /* DynamicCodeGenerated -> stubs */
	int modules;        /* one module per class loader */
	uint32_t poll_ms;   /* lttng-etw control poll period; 0: its default */
	uint16_t instance_id;
	enum jvm_log_level log_level;
	char log[JVM_LOG_PATH_MAX]; /* "" (none), "stderr", or a file path */
	int help;
};

void jvm_opts_defaults(struct jvm_opts *o);

/* Parse options into o (which holds the defaults). Returns 0, or -EINVAL
 * with a message in err (errlen bytes). */
int jvm_opts_parse(const char *options, struct jvm_opts *o, char *err, size_t errlen);

/* The help text (what `help` prints). */
extern const char jvm_opts_help_text[];

#endif
