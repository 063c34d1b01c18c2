/* SPDX-License-Identifier: MIT */
#include <stdint.h>

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
 * number until then. An "abort" publishes nothing.
 *
 * The user handlers list lets a script attach its own "trace" handler
 * (jit.dump does) without evicting ours: LuaJIT keeps one handler per
 * event. Each runs in pcall so a failing one cannot skip the next.
 */
static const char prelude[] =
	"local host = ...\n"
	"local jit = require('jit')\n"
	"local jutil = require('jit.util')\n"
	"local funcinfo, tracemc, traceinfo = jutil.funcinfo, jutil.tracemc, jutil.traceinfo\n"
	"local pcall, select, unpack, next = pcall, select, unpack, next\n"
	"local pending, users = {}, {}\n"
	"local function handler(what, tr, func, pc, otr, oex)\n"
	"  if what == 'start' then\n"
	"    local fi = funcinfo(func, pc)\n"
	"    host.start(tr)\n"
	"    pending[tr] = { fi.source or '=[C]', fi.currentline or 0, otr or 0, oex or 0 }\n"
	"  elseif what == 'stop' then\n"
	"    local p = pending[tr]\n"
	"    pending[tr] = nil\n"
	"    local code, addr = tracemc(tr)\n"
	"    if code and p then\n"
	"      local ti = traceinfo(tr)\n"
	"      host.stop(tr, addr, #code, p[1], p[2], p[3], p[4], ti and ti.linktype or '')\n"
	"    end\n"
	"  elseif what == 'abort' then\n"
	"    pending[tr] = nil\n"
	"  elseif what == 'flush' then\n"
	"    pending = {}\n"
	"    host.flush()\n"
	"  end\n"
	"  for f in next, users do pcall(f, what, tr, func, pc, otr, oex) end\n"
	"end\n"
	"local attach = jit.attach\n"
	"jit.attach = function(f, ...)\n"
	"  local n, rest = select('#', ...), {}\n"
	"  if n == 0 then users[f] = nil; return attach(f) end\n"
	"  for i = 1, n do\n"
	"    local ev = select(i, ...)\n"
	"    if ev == 'trace' then users[f] = true else rest[#rest + 1] = ev end\n"
	"  end\n"
	"  if #rest > 0 then return attach(f, unpack(rest)) end\n"
	"end\n"
	"attach(handler, 'trace')\n"
	"return handler\n";

#define LH_HANDLER_KEY "letw-luajit.handler"

static struct lh_tracemap *map_of(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
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

static int host_stop(lua_State *L)
{
	struct lh_trace_info t;
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
	if (t.traceno == 0 || t.code_size == 0)
		return 0;
	lh_tracemap_stop(map_of(L), &t);
	return 0;
}

static int host_flush(lua_State *L)
{
	lh_tracemap_flush(map_of(L));
	return 0;
}

int lh_bridge_install(lua_State *L, struct lh_tracemap *map)
{
	static const luaL_Reg fns[] = {
		{ "start", host_start },
		{ "stop", host_stop },
		{ "flush", host_flush },
		{ NULL, NULL },
	};
	const luaL_Reg *r;

	if (luaL_loadbuffer(L, prelude, sizeof(prelude) - 1, "=letw-luajit"))
		return -1;
	lua_newtable(L);
	for (r = fns; r->name; r++) {
		lua_pushlightuserdata(L, map);
		lua_pushcclosure(L, r->func, 1);
		lua_setfield(L, -2, r->name);
	}
	if (lua_pcall(L, 1, 1, 0))
		return -1;
	/* Kept so lh_bridge_detach can hand the same function to jit.attach. */
	lua_setfield(L, LUA_REGISTRYINDEX, LH_HANDLER_KEY);
	return 0;
}

void lh_bridge_detach(lua_State *L)
{
	int top = lua_gettop(L);

	lua_getglobal(L, "jit");
	lua_getfield(L, LUA_REGISTRYINDEX, LH_HANDLER_KEY);
	if (lua_istable(L, -2) && lua_isfunction(L, -1)) {
		/* jit.attach(f) with no event detaches f: our wrapper passes
		 * it to the original. */
		lua_getfield(L, -2, "attach");
		lua_pushvalue(L, -2);
		lua_pcall(L, 1, 0, 0);
	}
	lua_settop(L, top);
}
