-- kiln.fit{precision_fallback = true}, run with oneDNN capped at AVX2 (CTest
-- sets DNNL_MAX_CPU_ISA), where the CPU computes no bf16: without the
-- fallback, precision = "bf16" fails before the first step saying why and
-- how to fall back; with it, training runs in f32 and reaches exactly the
-- parameters of an f32 run (the warning on the log is checked from C).
local kiln = require("kiln")
local expect = require("expect")

math.randomseed(5)
local inputs, labels = {}, {}
for _ = 1, 32 do
  local a, b = math.random() * 2 - 1, math.random() * 2 - 1
  inputs[#inputs + 1] = {a, b}
  labels[#labels + 1] = a > b and 1 or 0
end
local src = kiln.data.source("tensors", {input = kiln.tensor(inputs), target = kiln.tensor(labels, {dtype = "i64"})})

-- Two epochs from the same start; the trained parameters as nested tables.
local function train(options)
  kiln.manual_seed(9)
  local net = kiln.nn.Linear(2, 2)
  local fit = {model = net, optimizer = kiln.optim.SGD(net:parameters(), {lr = 0.5}),
               train = kiln.data.loader(src, {batch_size = 8}), epochs = 2, progress = "quiet"}
  for k, v in pairs(options) do fit[k] = v end
  kiln.fit(fit)
  local params = {}
  for i, p in ipairs(net:parameters()) do
    assert(p:dtype() == "f32")
    params[i] = p:totable()
  end
  return params
end

expect.error(function() train{precision = "bf16"} end, 'options->precision is "bf16"',
             "this CPU has no bf16 support", "precision_fallback")
expect.error(function() train{precision = "bf16", precision_fallback = "yes"} end, "precision_fallback")

local f32 = train{}
local fallen = train{precision = "bf16", precision_fallback = true}
for i = 1, #f32 do
  for j = 1, #f32[i] do
    local want, got = f32[i][j], fallen[i][j]
    if type(want) == "table" then
      for k = 1, #want do assert(got[k] == want[k], string.format("parameter %d [%d][%d]", i, j, k)) end
    else
      assert(got == want, string.format("parameter %d [%d]", i, j))
    end
  end
end
