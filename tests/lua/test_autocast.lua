-- Autocast from scripts: kiln.autocast(dtype, fn, ...) runs fn with the
-- products in bf16 and returns what fn returns, its scope closes even when
-- fn raises, and kiln.fit{precision = "bf16"} trains under it. On a CPU
-- without bf16 support the refusal must say so, and the rest is skipped.
local kiln = require("kiln")
local expect = require("expect")

kiln.manual_seed(7)
local model = kiln.nn.Linear(8, 4)
local x = kiln.randn({5, 8})
local full = model(x)
assert(full:dtype() == "f32")

-- Bad dtypes and arguments are refused with what was expected.
expect.error(function() kiln.autocast("f32", function() end) end, "KILN_BF16 or KILN_F16")
expect.error(function() kiln.autocast("f8", function() end) end, "unknown dtype 'f8'")
expect.error(function() kiln.autocast("bf16") end, "function expected")

local ok, err = pcall(kiln.autocast, "bf16", function() return model(x) end)
if not ok then
  assert(tostring(err):find("bf16", 1, true), tostring(err))
  print("skipped: this CPU runs no bf16: " .. tostring(err))
  return
end

-- Products in bf16, extra arguments and every result passed through.
local low, extra = kiln.autocast("bf16", function(a, b) return model(a), b end, x, "extra")
assert(low:dtype() == "bf16", low:dtype())
assert(extra == "extra")
local got, want = low:float():totable(), full:totable()
for i = 1, #want do
  for j = 1, #want[i] do expect.near(got[i][j], want[i][j], 2e-2, "autocast linear") end
end
-- Losses run in f32; outside the scope nothing changes.
local target = kiln.tensor({0, 1, 2, 3, 0}, {dtype = "i64"})
local loss = kiln.autocast("bf16", function() return kiln.F.cross_entropy(model(x), target) end)
assert(loss:dtype() == "f32")
assert(model(x):dtype() == "f32")

-- Parameters stay f32 and so do their gradients.
loss:backward()
for _, p in ipairs(model:parameters()) do
  assert(p:dtype() == "f32" and p.grad:dtype() == "f32")
end

-- The scope closes when fn raises.
expect.error(function() kiln.autocast("bf16", function() error("inside") end) end, "inside")
assert(model(x):dtype() == "f32", "the scope was left open by an error")

-- kiln.fit under bf16: the loss falls as it does in f32.
math.randomseed(3)
local inputs, labels = {}, {}
for _ = 1, 64 do
  local a, b = math.random() * 2 - 1, math.random() * 2 - 1
  inputs[#inputs + 1] = {a, b}
  labels[#labels + 1] = a > b and 1 or 0
end
local src = kiln.data.source("tensors", {input = kiln.tensor(inputs), target = kiln.tensor(labels, {dtype = "i64"})})
local train = kiln.data.loader(src, {batch_size = 16, shuffle = true, seed = 3})
local validation = kiln.data.loader(src, {batch_size = 64})
local net = kiln.nn.Linear(2, 2)
local losses = {}
local last = kiln.fit{
  model = net, optimizer = kiln.optim.SGD(net:parameters(), {lr = 0.5}), train = train, validation = validation,
  epochs = 10, progress = "quiet", precision = "bf16",
  on_step = function(m) losses[#losses + 1] = m.loss end,
}
assert(losses[#losses] < losses[1] * 0.7, string.format("loss %g -> %g", losses[1], losses[#losses]))
assert(last.accuracy > 0.8, "accuracy " .. last.accuracy)
for _, p in ipairs(net:parameters()) do assert(p:dtype() == "f32") end
expect.error(function()
  kiln.fit{model = net, optimizer = kiln.optim.SGD(net:parameters(), {lr = 0.5}), train = train, epochs = 1,
           progress = "quiet", precision = "f8"}
end, "options->precision is 'f8'")
