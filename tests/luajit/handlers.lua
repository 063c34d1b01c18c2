-- SPDX-License-Identifier: MIT
-- Attaches a "trace" and a "record" handler of its own that fail, then
-- compiles a trace: LuaJIT says "VM handler failed: MESSAGE" on stderr
-- for each failing call and goes on; so must letw-luajit, whose own
-- handlers run the script's behind them.
jit.attach(function(what)
  if what == 'stop' then error("trace handler failed on purpose", 0) end
end, 'trace')
local once = false
jit.attach(function()
  if not once then once = true; error("record handler failed on purpose", 0) end
end, 'record')
local s = 0
for i = 1, 2e5 do s = s + i % 7 end
io.stdout:write(("sum %d\n"):format(s))
