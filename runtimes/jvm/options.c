/* SPDX-License-Identifier: MIT */
/*
 * Options: comma-separated items, each KEY=VALUE (or KEY:VALUE) or a bare
 * flag, e.g.
 *   -agentpath:/usr/lib/liblttng-etw-jvmti.so=sig=simple,log=/tmp/agent.log
 *   jcmd PID JVMTI.agent_load /usr/lib/liblttng-etw-jvmti.so sig:simple,log:/tmp/agent.log
 * A value cannot contain ',' (JVM option strings have no quoting).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

const char jvm_opts_help_text[] =
"liblttng-etw-jvmti: publishes HotSpot's JIT code through lttng-etw.\n"
"  java -agentpath:PATH/liblttng-etw-jvmti.so[=OPTIONS] ...\n"
"  jcmd PID JVMTI.agent_load PATH/liblttng-etw-jvmti.so [OPTIONS]\n"
"OPTIONS: comma-separated KEY=VALUE items (no ',' inside a value); KEY:VALUE\n"
"  works too, and is what jcmd needs unless the whole string is quoted\n"
"  for it ('\"log=/tmp/a.log,sig=simple\"'):\n"
"  class=dotted|simple|jvm  namespace: com.ex.Foo (default), Foo, Lcom/ex/Foo;\n"
"  sig=descriptor|java|simple|none\n"
"                           signature: (ILjava/lang/String;)J (default),\n"
"                           (int, java.lang.String), (int, String), none\n"
"  dottedclass, msig        perf-map-agent spellings of class=dotted and\n"
"                           sig=descriptor\n"
"  lines=1|0                line tables with the method (default 1)\n"
"  inline=1|0               ...including inlined frames (default 1)\n"
"  stubs=1|0                interpreter, adapters, runtime stubs (default 1)\n"
"  modules=1|0              one module per class loader (default 1)\n"
"  poll=MS                  lttng-etw control poll period, 1-10000 ms\n"
"                           (default: lttng-etw's, 5 ms; LETW_POLL_MS wins)\n"
"  instance=N               instance_id in every event, 0-65535 (default 0)\n"
"  log=stderr|FILE          diagnostics destination (default: none)\n"
"  loglevel=debug|info|warn|error  (default info)\n"
"  help                     print this and refuse to load\n"
"Environment: LETW_DISABLE=1 loads the agent but emits nothing.\n";

void jvm_opts_defaults(struct jvm_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->ns = JVM_NS_DOTTED;
	o->sig = JVM_SIG_DESCRIPTOR;
	o->lines = 1;
	o->inlining = 1;
	o->stubs = 1;
	o->modules = 1;
	o->log_level = JVM_LOG_INFO;
}

/* Index of value in names (NULL-terminated), or -1. */
static int pick(const char *value, const char *const *names)
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(value, names[i]))
			return i;
	return -1;
}

static int parse_ulong(const char *value, unsigned long lo, unsigned long hi,
		       unsigned long *out)
{
	char *end;
	unsigned long v;

	/* strtoul would skip blanks and take a sign: only digits. */
	if (*value < '0' || *value > '9')
		return -1;
	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int fail(char *err, size_t errlen, const char *what, const char *item)
{
	snprintf(err, errlen, "%s: '%s' (try help)", what, item);
	return -EINVAL;
}

static int parse_item(char *item, struct jvm_opts *o, char *err, size_t errlen)
{
	static const char *const ns_names[] = { "dotted", "simple", "jvm", NULL };
	static const char *const sig_names[] = { "descriptor", "java", "simple", "none", NULL };
	static const char *const bool_names[] = { "0", "1", NULL };
	static const char *const level_names[] = { "debug", "info", "warn", "error", NULL };
	/* KEY:VALUE too: jcmd's argument parser splits an unquoted KEY=VALUE
	 * into a named argument and hands the agent only KEY. The first of
	 * the two separators ends the key. */
	char *value = strpbrk(item, "=:");
	unsigned long v;
	int i;

	if (!value) {
		if (!strcmp(item, "help"))
			o->help = 1;
		else if (!strcmp(item, "dottedclass"))
			o->ns = JVM_NS_DOTTED;
		else if (!strcmp(item, "msig"))
			o->sig = JVM_SIG_DESCRIPTOR;
		else
			return fail(err, errlen, "unknown option", item);
		return 0;
	}
	*value++ = '\0';
	if (!strcmp(item, "class")) {
		if ((i = pick(value, ns_names)) < 0)
			return fail(err, errlen, "class= takes dotted, simple or jvm", value);
		o->ns = (enum jvm_ns_style)i;
	} else if (!strcmp(item, "sig")) {
		if ((i = pick(value, sig_names)) < 0)
			return fail(err, errlen, "sig= takes descriptor, java, simple or none", value);
		o->sig = (enum jvm_sig_style)i;
	} else if (!strcmp(item, "lines") || !strcmp(item, "inline") ||
		   !strcmp(item, "stubs") || !strcmp(item, "modules")) {
		if ((i = pick(value, bool_names)) < 0)
			return fail(err, errlen, "a switch takes 0 or 1", value);
		*(item[0] == 'l' ? &o->lines : item[0] == 'i' ? &o->inlining :
		  item[0] == 's' ? &o->stubs : &o->modules) = i;
	} else if (!strcmp(item, "poll")) {
		if (parse_ulong(value, 1, 10000, &v))
			return fail(err, errlen, "poll= takes 1-10000 (ms)", value);
		o->poll_ms = (uint32_t)v;
	} else if (!strcmp(item, "instance")) {
		if (parse_ulong(value, 0, 65535, &v))
			return fail(err, errlen, "instance= takes 0-65535", value);
		o->instance_id = (uint16_t)v;
	} else if (!strcmp(item, "log")) {
		if (!*value || strlen(value) >= sizeof(o->log))
			return fail(err, errlen, "log= takes stderr or a file path", value);
		strcpy(o->log, value);
	} else if (!strcmp(item, "loglevel")) {
		if ((i = pick(value, level_names)) < 0)
			return fail(err, errlen, "loglevel= takes debug, info, warn or error", value);
		o->log_level = (enum jvm_log_level)i;
	} else {
		return fail(err, errlen, "unknown option", item);
	}
	return 0;
}

int jvm_opts_parse(const char *options, struct jvm_opts *o, char *err, size_t errlen)
{
	char buf[JVM_LOG_PATH_MAX + 1024], *item, *save = NULL; /* a log path and the rest */
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!options || !*options)
		return 0;
	if (strlen(options) >= sizeof(buf))
		return fail(err, errlen, "options string too long", "...");
	strcpy(buf, options);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		ret = parse_item(item, o, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}
