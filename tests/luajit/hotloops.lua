-- SPDX-License-Identifier: MIT
-- Several distinct hot loops, each marked "HOT <name>" on its first line
-- and "END <name>" on its last, so the test reads the line ranges from this
-- file instead of hard-coding them.
-- usage: hotloops.lua READY_FILE STOP_FILE
-- Warms up until every loop has been compiled, writes READY_FILE, then
-- keeps running the same loops until STOP_FILE exists.
local ready, stop = arg[1], arg[2]
assert(ready and stop, "usage: hotloops.lua READY_FILE STOP_FILE")

local function modsum(n)
  local s = 0
  for i = 1, n do -- HOT modsum
    s = s + i % 7
    if i % 5 == 0 then s = s - 1 end
  end -- END modsum
  return s
end

local function horner(n)
  local acc = 0.0
  for i = 1, n do -- HOT horner
    local x = i * 1e-6
    acc = acc + ((((3.5 * x + 2.25) * x - 1.125) * x + 0.5) * x - 0.25)
  end -- END horner
  return acc
end

local sieve_flags = {}
local function sieve(n)
  local count = 0
  for i = 2, n do sieve_flags[i] = true end -- HOT sieve
  for i = 2, n do
    if sieve_flags[i] then
      count = count + 1
      for j = i + i, n, i do sieve_flags[j] = false end
    end
  end -- END sieve
  return count
end

local function collatz(n)
  local longest = 0
  for start = 1, n do -- HOT collatz
    local x, steps = start, 0
    while x ~= 1 do
      if x % 2 == 0 then x = x / 2 else x = 3 * x + 1 end
      steps = steps + 1
    end
    if steps > longest then longest = steps end
  end -- END collatz
  return longest
end

local function round()
  return modsum(300000) + horner(300000) + sieve(30000) + collatz(3000)
end

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

-- Long enough for the loops, their side exits and the round() caller to
-- have been compiled before READY_FILE says the traces are all there.
local sink = 0
for _ = 1, 200 do sink = sink + round() end
local f = assert(io.open(ready, "w"))
f:write(tostring(sink), "\n")
f:close()
while not exists(stop) do sink = sink + round() end
print(sink)
