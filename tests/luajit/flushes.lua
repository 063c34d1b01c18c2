-- SPDX-License-Identifier: MIT
-- Compiles a few traces, throws them all away with jit.flush(), again and
-- again. Every flush unmaps LuaJIT's machine code and the next traces land
-- in a freshly mapped area, placed at a pseudo-random 64 KB step of
-- LuaJIT's +-1 GB jump range: over a few thousand flushes some areas come
-- back where an earlier one was (birthday odds: no repeat in 3000 flushes
-- has a probability far below 1e-50). The loops run in an order rotating
-- with the round, so a reused address usually holds *different* code (a
-- different trace), which is what the perf map must report as reuse.
-- Every tenth round flushes a single function instead, so trace numbers
-- are also reused without a full flush.
-- usage: flushes.lua MIN_FLUSHES GO_FIFO STOP_FILE [HOLD_FILE]
-- Blocks until a line arrives on GO_FIFO (so the test can set up its
-- session for this pid first), runs at least MIN_FLUSHES flushes and
-- keeps going until STOP_FILE exists. While HOLD_FILE exists, it stops
-- between running its loops and flushing them — their traces live — and
-- says so by creating HOLD_FILE.held, so a rundown is sure to see them.
local min_flushes, go, stop, hold = tonumber(arg[1]), arg[2], arg[3], arg[4]
assert(min_flushes and go and stop, "usage: flushes.lua MIN_FLUSHES GO_FIFO STOP_FILE [HOLD_FILE]")

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

local sink, rounds, flushes = 0, 0, 0
while flushes < min_flushes or not exists(stop) do
  local first = rounds % #loops
  for k = 0, #loops - 1 do
    sink = sink + loops[(first + k) % #loops + 1](1000)
  end
  rounds = rounds + 1
  if hold and exists(hold) then
    local f = assert(io.open(hold .. ".held", "w"))
    f:close()
    while exists(hold) do os.execute("sleep 0.01") end
    os.remove(hold .. ".held")
  end
  if rounds % 10 == 5 then
    -- Only unlink one function's root traces: once collected, their trace
    -- numbers go to the next traces, whose records must replace theirs.
    jit.flush(loops[first + 1])
    collectgarbage()
  else
    jit.flush()
    flushes = flushes + 1
  end
end
print(flushes, sink)
