-- SPDX-License-Identifier: MIT
-- Compiles a few traces, throws them all away with jit.flush(), again and
-- again. Every flush unmaps LuaJIT's machine code and the next traces land
-- in a freshly mapped area, placed at a pseudo-random 64 KB step of
-- LuaJIT's +-1 GB jump range: over a few thousand flushes some areas come
-- back where an earlier one was (birthday odds: no repeat in 3000 flushes
-- has a probability far below 1e-50). The loops run in an order rotating
-- with the round, so a reused address usually holds *different* code (a
-- different trace), which is what the perf map must report as reuse.
-- usage: flushes.lua MIN_FLUSHES GO_FIFO STOP_FILE
-- Blocks until a line arrives on GO_FIFO (so the test can set up its
-- session for this pid first), runs at least MIN_FLUSHES flushes and
-- keeps going until STOP_FILE exists.
local min_flushes, go, stop = tonumber(arg[1]), arg[2], arg[3]
assert(min_flushes and go and stop, "usage: flushes.lua MIN_FLUSHES GO_FIFO STOP_FILE")

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

local loops = {
  function(n) local s = 0; for i = 1, n do s = s + i % 7 end; return s end,
  function(n)
    local t = 0
    for i = 1, n do
      if i % 3 == 0 then t = t + 1 else t = t - 1 end
    end
    return t
  end,
  function(n)
    local x = 0.5
    for i = 1, n do x = x * 0.999 + i * 1e-9 end
    return x
  end,
}

local fifo = assert(io.open(go, "r"))
fifo:read("*l")
fifo:close()

local sink, flushes = 0, 0
while flushes < min_flushes or not exists(stop) do
  local first = flushes % #loops
  for k = 0, #loops - 1 do
    sink = sink + loops[(first + k) % #loops + 1](1000)
  end
  jit.flush()
  flushes = flushes + 1
end
print(flushes, sink)
