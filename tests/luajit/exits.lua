-- SPDX-License-Identifier: MIT
-- Compiles a few traces and leaves through os.exit, never returning to the
-- host's main: os.exit(CODE, true) closes the lua_State (LuaJIT unmaps
-- the machine code there), os.exit(CODE) ends the process as it is.
-- usage: exits.lua GO_FIFO CODE [close]
-- Blocks until a line arrives on GO_FIFO (the test's session is then
-- recording this pid).
local go, code, close = arg[1], tonumber(arg[2]), arg[3] == "close"
assert(go and code, "usage: exits.lua GO_FIFO CODE [close]")
local f = assert(io.open(go, "r"))
f:read("*l")
f:close()

local s = 0
for i = 1, 2e5 do s = s + i % 7 end
for i = 1, 2e5 do if i % 3 == 0 then s = s + 1 else s = s - 1 end end
local t = {}
for i = 1, 2e5 do t[i % 64 + 1] = (t[i % 64 + 1] or 0) + i end
io.stdout:write(("sum %d\n"):format(s))
os.exit(code, close)
