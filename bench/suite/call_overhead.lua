-- The fixed cost of one op call from Lua: `a + b` of two 1-element f32
-- tensors with grad recording off, in ns of the process's CPU time per call
-- (os.clock), the median of five runs after warm-up calls; as
-- bench/call_overhead.c measures it from C.
--
--   kiln run --threads 1 bench/suite/call_overhead.lua [calls per run]
local kiln = require("kiln")

local calls = tonumber(arg[1] or "200000")
local a, b = kiln.tensor({ 1 }), kiln.tensor({ 1 })

local function time_calls(n)
  local start = os.clock()
  for _ = 1, n do local _ = a + b end
  return os.clock() - start
end

local ns = kiln.no_grad(function()
  time_calls(calls // 10 + 1)
  local runs = {}
  for r = 1, 5 do runs[r] = 1e9 * time_calls(calls) / calls end
  table.sort(runs)
  return runs[3]
end)
print(string.format("Lua: %.1f ns per call (median of 5 runs of %d calls)", ns, calls))
