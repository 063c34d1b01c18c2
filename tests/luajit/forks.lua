-- SPDX-License-Identifier: MIT
-- Forks through LuaJIT's FFI (no lttng-etw call of its own): the child
-- compiles a trace of its own, writes its pid to PID_FILE, waits for a
-- line on GO_FIFO and returns; the parent waits for it and exits with its
-- status.
-- usage: forks.lua PID_FILE GO_FIFO
local pidfile, go = arg[1], arg[2]
assert(pidfile and go, "usage: forks.lua PID_FILE GO_FIFO")
local ffi = require('ffi')
ffi.cdef[[
int fork(void);
int getpid(void);
int waitpid(int pid, int *status, int options);
]]

local s = 0
for i = 1, 2e5 do s = s + i % 7 end
local pid = ffi.C.fork()
assert(pid >= 0, "fork failed")
if pid == 0 then
  local t = {}
  for i = 1, 2e5 do t[i % 64 + 1] = (t[i % 64 + 1] or 0) + i end -- CHILD LOOP
  local f = assert(io.open(pidfile .. ".tmp", "w"))
  f:write(ffi.C.getpid(), "\n")
  f:close()
  assert(os.rename(pidfile .. ".tmp", pidfile))
  f = assert(io.open(go, "r"))
  f:read("*l")
  f:close()
  return
end
local st = ffi.new("int[1]")
assert(ffi.C.waitpid(pid, st, 0) == pid, "waitpid failed")
-- WIFEXITED and WEXITSTATUS, by hand.
os.exit(st[0] % 128 == 0 and math.floor(st[0] / 256) or 100)
