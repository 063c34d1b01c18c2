-- Chunks whose names lttng-etw refused as LuaJIT gives them (see
-- test_chunk_names.sh): a loadstring'd chunk over 4 KiB (its name is its
-- code), a chunk named with a tab and an invalid UTF-8 byte, and a file
-- whose name is Latin-1 (arg[1]). Each runs a hot loop: a trace each.
local pad = "-- pad " .. string.rep("x", 5000) .. "\n"
local big = loadstring(pad .. "local s = 0 for i = 1, 3e6 do s = s + i end return s")
print(big())
local odd = load("local s = 0 for i = 1, 3e6 do s = s + 2 * i end return s", "=my\tchunk\255name")
print(odd())
print(dofile(arg[1]))
