/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lua.h>

#include "bridge.h"

/*
 * The handler runs inside LuaJIT's VM event machinery: LuaJIT calls it
 * synchronously from the compiler, with every other VM event masked, so a
 * trace's "stop" is seen while jit.util.tracemc(tr) is valid, and "flush"
 * arrives after LuaJIT has already unmapped all machine code (the records
 * must go at once: the same addresses may come back for the next traces).
 * "start" carries the source position and, for a side trace, the parent
 * trace and exit; "stop" does not, so the handler keeps them per trace
 * number until then. An "abort" publishes nothing. A second handler, on
 * "record", notes the line and frame depth of every bytecode the
 * recorder goes through: the trace's line table (tracelines.h).
 *
 * The user handlers lists let a script attach its own "trace" or
 * "record" handler (jit.dump does) without evicting ours: LuaJIT keeps one
 * handler per event. Each runs in pcall so a failing one cannot skip the
 * next; its error is said on stderr as LuaJIT says a failed handler's.
 */
static const char prelude[] =
	"local host = ...\n"
	"local jit = require('jit')\n"
	"local jutil = require('jit.util')\n"
	"local funcinfo, tracemc, traceinfo = jutil.funcinfo, jutil.tracemc, jutil.traceinfo\n"
	"local pcall, select, unpack, next = pcall, select, unpack, next\n"
	"local pending, recs, users = {}, {}, { trace = {}, record = {} }\n"
	"local function handler(what, tr, func, pc, otr, oex)\n"
	"  if what == 'start' then\n"
	"    local fi = funcinfo(func, pc)\n"
	"    host.start(tr)\n"
	"    pending[tr] = { fi.source or '=[C]', fi.currentline or 0, otr or 0, oex or 0 }\n"
	"    recs[tr] = { n = 0, line = {}, depth = {}, file = {}, files = {}, fidx = {} }\n"
	"  elseif what == 'stop' then\n"
	"    local p, r = pending[tr], recs[tr]\n"
	"    pending[tr], recs[tr] = nil, nil\n"
	"    local code, addr, loop = tracemc(tr)\n"
	"    if code and p then\n"
	"      local ti = traceinfo(tr)\n"
	"      host.stop(tr, addr, #code, p[1], p[2], p[3], p[4], ti and ti.linktype or '',\n"
	"                loop or 0, r)\n"
	"    end\n"
	"  elseif what == 'abort' then\n"
	"    pending[tr], recs[tr] = nil, nil\n"
	"  elseif what == 'flush' then\n"
	"    pending, recs = {}, {}\n"
	"    host.flush()\n"
	"  end\n"
	"  for f in next, users.trace do\n"
	"    local ok, err = pcall(f, what, tr, func, pc, otr, oex)\n"
	"    if not ok then host.failed(err) end\n"
	"  end\n"
	"end\n"
	"local function record(tr, func, pc, depth, ...)\n"
	"  local r = recs[tr]\n"
	"  if r then\n"
	"    local fi = funcinfo(func, pc)\n"
	"    local src = fi.source or '=[C]'\n"
	"    local fx = r.fidx[src]\n"
	"    if not fx then fx = #r.files; r.files[fx + 1] = src; r.fidx[src] = fx end\n"
	"    local n = r.n + 1\n"
	"    r.n, r.line[n], r.depth[n], r.file[n] = n, fi.currentline or 0, depth or 0, fx\n"
	"  end\n"
	"  for f in next, users.record do\n"
	"    local ok, err = pcall(f, tr, func, pc, depth, ...)\n"
	"    if not ok then host.failed(err) end\n"
	"  end\n"
	"end\n"
	"local attach = jit.attach\n"
	"jit.attach = function(f, ...)\n"
	"  local n, rest = select('#', ...), {}\n"
	"  if n == 0 then users.trace[f], users.record[f] = nil, nil; return attach(f) end\n"
	"  for i = 1, n do\n"
	"    local ev = select(i, ...)\n"
	"    if users[ev] then users[ev][f] = true else rest[#rest + 1] = ev end\n"
	"  end\n"
	"  if #rest > 0 then return attach(f, unpack(rest)) end\n"
	"end\n"
	"attach(handler, 'trace')\n"
	"attach(record, 'record')\n"
	"local osexit = os.exit\n"
	"os.exit = function(...)\n"
	"  local code = ...\n"
	"  if code == nil or type(code) == 'boolean' or tonumber(code) then host.exit() end\n"
	"  return osexit(...)\n"
	"end\n"
	"return function() attach(handler); attach(record) end\n";

/* The prelude's detach function: it calls the jit.attach the prelude
 * saw, so a script that replaced jit or jit.attach cannot keep our
 * handlers attached to a closed map. */
#define LH_DETACH_KEY "letw-luajit.detach"

struct lh_bridge {
	struct lh_tracemap *map;
	void (*before_exit)(void *ctx);
	void *ctx;
};

static struct lh_tracemap *map_of(lua_State *L)
{
	return ((struct lh_bridge *)lua_touserdata(L, lua_upvalueindex(1)))->map;
}

static unsigned int uint_arg(lua_State *L, int i)
{
	lua_Integer v = luaL_optinteger(L, i, 0);

	return v > 0 ? (unsigned int)v : 0;
}

static int host_start(lua_State *L)
{
	lh_tracemap_start(map_of(L), uint_arg(L, 1));
	return 0;
}

static unsigned int field_uint(lua_State *L, int tab, const char *arr, lua_Integer i)
{
	lua_Integer v;

	lua_getfield(L, tab, arr);
	lua_rawgeti(L, -1, (int)i);
	v = lua_tointeger(L, -1);
	lua_pop(L, 2);
	return v > 0 ? (unsigned int)v : 0;
}

/* The "record" handler's notes of one trace (table at index tab):
 * n, line[1..n], depth[1..n], file[1..n] (0-based), files[1..]. Strings
 * stay owned by the table, which outlives the call. Allocation failure
 * leaves the trace without a line table. */
struct recs {
	struct lh_rec *v;
	const char **files;
	uint32_t n, nfiles;
};

static void read_recs(lua_State *L, int tab, struct recs *t)
{
	lua_Integer n, nf;

	lua_getfield(L, tab, "n");
	n = lua_tointeger(L, -1);
	lua_pop(L, 1);
	lua_getfield(L, tab, "files");
	nf = lua_istable(L, -1) ? (lua_Integer)lua_objlen(L, -1) : 0;
	lua_pop(L, 1);
	if (n <= 0 || nf <= 0 || n > 1000000 || nf > 1000)
		return;
	t->v = calloc((size_t)n, sizeof(*t->v));
	t->files = calloc((size_t)nf, sizeof(*t->files));
	if (!t->v || !t->files) {
		free(t->v);
		free(t->files);
		t->v = NULL;
		t->files = NULL;
		return;
	}
	for (lua_Integer i = 0; i < n; i++) {
		t->v[i].line = field_uint(L, tab, "line", i + 1);
		t->v[i].depth = field_uint(L, tab, "depth", i + 1);
		t->v[i].file = field_uint(L, tab, "file", i + 1);
		if (t->v[i].file >= (uint32_t)nf)
			t->v[i].line = 0; /* unusable: skipped */
	}
	lua_getfield(L, tab, "files");
	for (lua_Integer i = 0; i < nf; i++) {
		lua_rawgeti(L, -1, (int)(i + 1));
		t->files[i] = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	t->n = (uint32_t)n;
	t->nfiles = (uint32_t)nf;
}

static int host_stop(lua_State *L)
{
	struct lh_trace_info t;
	struct recs r = { 0 };
	lua_Number addr = luaL_checknumber(L, 2);

	t.traceno = uint_arg(L, 1);
	/* tracemc reports the address as a double: exact below 2^53, which
	 * covers every user-space address on the 64-bit targets LuaJIT has. */
	t.code_start = (uint64_t)addr;
	t.code_size = (uint32_t)uint_arg(L, 3);
	t.source = luaL_checkstring(L, 4);
	t.line = uint_arg(L, 5);
	t.parent = uint_arg(L, 6);
	t.exitno = uint_arg(L, 7);
	t.linktype = luaL_optstring(L, 8, "");
	t.loop_offset = uint_arg(L, 9);
	if (t.traceno == 0 || t.code_size == 0)
		return 0;
	if (lua_istable(L, 10))
		read_recs(L, 10, &r);
	t.recs = r.v;
	t.nrecs = r.n;
	t.files = r.files;
	t.nfiles = r.nfiles;
	lh_tracemap_stop(map_of(L), &t);
	free(r.v);
	free(r.files);
	return 0;
}

static int host_flush(lua_State *L)
{
	lh_tracemap_flush(map_of(L));
	return 0;
}

/* A script's own handler failed: LuaJIT's words for it (lj_vmevent_call),
 * where LuaJIT would have said them had ours not been in front. */
static int host_failed(lua_State *L)
{
	const char *msg = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : "?";

	fprintf(stderr, "VM handler failed: %s\n", msg);
	return 0;
}

/* os.exit(code, true) closes the lua_State, unmapping the machine code,
 * and os.exit(code) ends the process without returning to main: either
 * way the host's teardown (unpublish everything, counters) must run
 * first. */
static int host_exit(lua_State *L)
{
	struct lh_bridge *b = lua_touserdata(L, lua_upvalueindex(1));

	b->before_exit(b->ctx);
	return 0;
}

int lh_bridge_install(lua_State *L, struct lh_tracemap *map,
		      void (*before_exit)(void *ctx), void *ctx)
{
	static const luaL_Reg fns[] = {
		{ "start", host_start },
		{ "stop", host_stop },
		{ "flush", host_flush },
		{ "exit", host_exit },
		{ "failed", host_failed },
		{ NULL, NULL },
	};
	const luaL_Reg *r;
	struct lh_bridge *b;

	if (luaL_loadbuffer(L, prelude, sizeof(prelude) - 1, "=letw-luajit"))
		return -1;
	/* Full userdata, owned by the lua_State: it lives as long as the
	 * closures that point at it. */
	b = lua_newuserdata(L, sizeof(*b));
	b->map = map;
	b->before_exit = before_exit;
	b->ctx = ctx;
	lua_setfield(L, LUA_REGISTRYINDEX, "letw-luajit.bridge");
	lua_newtable(L);
	for (r = fns; r->name; r++) {
		lua_pushlightuserdata(L, b);
		lua_pushcclosure(L, r->func, 1);
		lua_setfield(L, -2, r->name);
	}
	if (lua_pcall(L, 1, 1, 0))
		return -1;
	lua_setfield(L, LUA_REGISTRYINDEX, LH_DETACH_KEY);
	return 0;
}

void lh_bridge_detach(lua_State *L)
{
	int top = lua_gettop(L);

	lua_getfield(L, LUA_REGISTRYINDEX, LH_DETACH_KEY);
	if (lua_isfunction(L, -1))
		lua_pcall(L, 0, 0, 0);
	lua_settop(L, top);
}
