/* SPDX-License-Identifier: MIT */
/*
 * letw-luajit: run a Lua script under LuaJIT with every compiled trace
 * published to lttng-etw, so a trace recorded with LTTng (loads, or a
 * DCStart rundown when the session starts late) names the JIT'd code for
 * perf. See README.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <lttng-etw/lttng-etw.h>

#include "bridge.h"
#include "fork.h"
#include "tracemap.h"

struct options {
	int verbose;
	int stats;
	unsigned int instance_id;
	const char *script; /* NULL: read the script from stdin */
	int script_index;   /* argv index of the script */
};

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s [OPTIONS] SCRIPT.lua [ARGS...]\n"
		"Run a Lua script under LuaJIT, publishing every compiled trace\n"
		"(its machine code, source line and trace number) to lttng-etw.\n"
		"SCRIPT '-' reads the script from stdin; ARGS go to the script's\n"
		"'arg' table as with the luajit command.\n"
		"\n"
		"  -i, --instance-id=N  instance id reported in every event (default 0)\n"
		"  -s, --stats          print trace counters to stderr at exit\n"
		"  -v, --verbose        narrate every publish/unpublish and the\n"
		"                       library's diagnostics on stderr\n"
		"  -h, --help           show this help\n"
		"\n"
		"Environment: LETW_DISABLE=1 runs untraced; LETW_STATEDUMP=0 turns\n"
		"lttng-ust's statedump hook off (sessions are then found by polling, every\n"
		"LETW_POLL_MS); the library's other variables are in its README.\n",
		prog);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "instance-id", required_argument, NULL, 'i' },
		{ "stats", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	unsigned long v;
	int c;

	memset(o, 0, sizeof(*o));
	/* '+': stop at the script name, so its own options stay its own. */
	while ((c = getopt_long(argc, argv, "+i:svh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			errno = 0;
			v = strtoul(optarg, &end, 0);
			if (errno || *end || end == optarg || v > UINT16_MAX) {
				fprintf(stderr, "%s: --instance-id wants 0..65535, got '%s'\n",
					argv[0], optarg);
				return -1;
			}
			o->instance_id = (unsigned int)v;
			break;
		case 's':
			o->stats = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			usage(stdout, argv[0]);
			exit(0);
		default:
			usage(stderr, argv[0]);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no script given (try --help)\n", argv[0]);
		return -1;
	}
	o->script_index = optind;
	o->script = strcmp(argv[optind], "-") == 0 ? NULL : argv[optind];
	return 0;
}

static void log_to_stderr(enum letw_log_level level, const char *msg, void *ctx)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };

	(void)ctx;
	fprintf(stderr, "letw-luajit: lttng-etw %s: %s\n",
		(unsigned int)level < 4 ? names[level] : "?", msg);
}

/* The 'arg' table the luajit command builds: arg[0] the script, positive
 * indices its arguments, negative ones the interpreter and our options. */
static void set_arg_table(lua_State *L, int argc, char **argv, int script_index)
{
	int i;

	lua_createtable(L, argc - script_index, script_index + 1);
	for (i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - script_index);
	}
	lua_setglobal(L, "arg");
}

static int traceback(lua_State *L)
{
	const char *msg;

	/* A non-string error object: its __tostring, as luajit does. */
	if (!lua_isstring(L, 1) && !lua_isnoneornil(L, 1) && luaL_callmeta(L, 1, "__tostring") &&
	    lua_isstring(L, -1))
		lua_replace(L, 1);
	msg = lua_tostring(L, 1);
	if (!msg)
		msg = "(error object is not a string)";
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* Load and run the script with its arguments; 0 on success. */
static int run_script(lua_State *L, const struct options *o, int argc, char **argv)
{
	int nargs = argc - o->script_index - 1;
	int base, i, err;

	lua_pushcfunction(L, traceback);
	base = lua_gettop(L);
	if (luaL_loadfile(L, o->script)) {
		fprintf(stderr, "letw-luajit: %s\n", lua_tostring(L, -1));
		return -1;
	}
	/* lua_checkstack, not luaL_checkstack: outside a protected call
	 * the latter's error is a PANIC (over ~8000 arguments). */
	if (!lua_checkstack(L, nargs)) {
		fprintf(stderr, "letw-luajit: too many script arguments (%d): Lua's stack takes fewer; pass them in a file\n",
			nargs);
		return -1;
	}
	for (i = 0; i < nargs; i++)
		lua_pushstring(L, argv[o->script_index + 1 + i]);
	err = lua_pcall(L, nargs, 0, base);
	if (err) {
		fprintf(stderr, "letw-luajit: %s\n", lua_tostring(L, -1));
		return -1;
	}
	lua_settop(L, base - 1);
	return 0;
}

/* What must happen before the machine code goes away: on return from the
 * script, and from the os.exit wrapper (bridge.h), whichever comes
 * first. */
struct teardown {
	lua_State *L;
	struct lh_tracemap *map; /* NULL once closed */
	int stats;
};

static void teardown(void *ctx)
{
	struct teardown *t = ctx;
	struct lh_counters cnt;

	if (!t->map)
		return;
	/* lua_close unmaps the machine code: retire every record before, and
	 * stop listening first so no event reaches a closed map. */
	lh_bridge_detach(t->L);
	lh_tracemap_close(t->map, &cnt);
	t->map = NULL;
	if (t->stats)
		fprintf(stderr,
			"letw-luajit: traces published %" PRIu64 ", unpublished %" PRIu64
			", replaced %" PRIu64 ", flushes %" PRIu64 ", errors %" PRIu64 "\n",
			cnt.published, cnt.unpublished, cnt.replaced, cnt.flushes,
			cnt.errors);
}

int main(int argc, char **argv)
{
	struct letw_config cfg;
	struct lh_tracemap *map;
	struct teardown td;
	struct options o;
	lua_State *L;
	int err, status = 0;

	if (parse_args(argc, argv, &o))
		return 2;

	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.instance_id = (uint16_t)o.instance_id;
	cfg.log_fn = o.verbose ? log_to_stderr : NULL;
	err = letw_init(&cfg);
	if (err)
		/* Not fatal: the script runs, its traces just go unnamed. */
		fprintf(stderr, "letw-luajit: letw_init: %s (running untraced)\n",
			strerror(-err));
	else
		lh_fork_hooks_on(); /* a script's fork() (fork.c) */

	map = lh_tracemap_new(o.verbose ? stderr : NULL);
	L = luaL_newstate();
	if (!map || !L) {
		fprintf(stderr, "letw-luajit: out of memory\n");
		return 1;
	}
	luaL_openlibs(L);
	td.L = L;
	td.map = map;
	td.stats = o.stats;
	if (lh_bridge_install(L, map, teardown, &td)) {
		fprintf(stderr, "letw-luajit: cannot attach the trace handler: %s\n",
			lua_tostring(L, -1));
		status = 1;
	} else {
		set_arg_table(L, argc, argv, o.script_index);
		if (run_script(L, &o, argc, argv))
			status = 1;
	}

	teardown(&td);
	lua_close(L);
	if (!err)
		letw_shutdown();
	return status;
}
