/* SPDX-License-Identifier: MIT */
/*
 * The bridge from LuaJIT's trace events into the trace map: C functions
 * registered into the lua_State and a small Lua handler, attached with
 * jit.attach(handler, "trace"), that gathers each trace's address, size
 * and source position through jit.util and passes them down.
 */
#ifndef LETW_LUAJIT_BRIDGE_H
#define LETW_LUAJIT_BRIDGE_H

#include <lua.h>

#include "tracemap.h"

/*
 * Install the trace handler in L. The map must outlive every trace event,
 * i.e. stay alive until lua_close(L) has returned or the handler has been
 * detached. Scripts that call jit.attach(f, "trace") themselves (e.g.
 * -jdump) are chained behind the host's handler instead of replacing it.
 * os.exit is wrapped to call before_exit(ctx) first: the host's teardown
 * (detach, close the map), which must be idempotent since main runs it
 * again when the script returns.
 * Returns 0, or -1 with the Lua error message left on the stack.
 */
int lh_bridge_install(lua_State *L, struct lh_tracemap *map,
		      void (*before_exit)(void *ctx), void *ctx);

/* Detach the handler (before the map is closed), through the jit.attach
 * the script found at install time; a no-op once done. */
void lh_bridge_detach(lua_State *L);

#endif /* LETW_LUAJIT_BRIDGE_H */
