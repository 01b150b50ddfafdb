-- kiln.fit{loss_scale = ...}: f16 trains with dynamic loss scaling on by
-- default; a table of settings (or true) turns it on in any precision and
-- false turns it off; steps report loss_scale and skipped; a batch of NaN
-- is skipped with the scale halved; NaN that never goes away ends the run
-- at the minimum scale; bad settings are refused naming them.
local kiln = require("kiln")
local expect = require("expect")

math.randomseed(5)
local inputs, labels = {}, {}
for _ = 1, 64 do
  local a, b = math.random() * 2 - 1, math.random() * 2 - 1
  inputs[#inputs + 1] = {a, b}
  labels[#labels + 1] = a > b and 1 or 0
end
local targets = kiln.tensor(labels, {dtype = "i64"})

-- A loader over the points in order, batches of 16, with the batches listed
-- in `nan_batches` made of NaN.
local function loader(nan_batches)
  local rows = {}
  for i, p in ipairs(inputs) do
    rows[i] = nan_batches[(i - 1) // 16 + 1] and {0 / 0, 0 / 0} or p
  end
  local src = kiln.data.source("tensors", {input = kiln.tensor(rows), target = targets})
  return kiln.data.loader(src, {batch_size = 16})
end

-- Runs kiln.fit with `options` added; the steps it reported.
local function fit(options)
  local net = kiln.nn.Linear(2, 2)
  local steps = {}
  local o = {model = net, optimizer = kiln.optim.SGD(net:parameters(), {lr = 0.5}), train = loader({}),
             epochs = 1, progress = "quiet", on_step = function(m) steps[#steps + 1] = m end}
  for k, v in pairs(options) do o[k] = v end
  kiln.fit(o)
  return steps, net
end

-- f16: on by default from 2^16 (a step whose f16 gradients overflow there
-- is skipped and the scale backs off), and the model learns with f32
-- parameters.
do
  local steps, net = fit{precision = "f16", epochs = 10}
  assert(#steps == 40 and steps[1].loss_scale == 65536)
  for _, m in ipairs(steps) do assert(m.loss_scale <= 65536 and type(m.skipped) == "boolean", m.loss_scale) end
  assert(steps[40].loss < steps[1].loss * 0.7, string.format("loss %g -> %g", steps[1].loss, steps[40].loss))
  for _, p in ipairs(net:parameters()) do assert(p:dtype() == "f32") end
end

-- Off when asked, and off by default in f32; on in f32 with a table, whose
-- scale grows after `interval` clean steps.
assert(fit{precision = "f16", loss_scale = false}[1].loss_scale == 1)
assert(fit{}[1].loss_scale == 1)
assert(fit{loss_scale = true}[1].loss_scale == 65536)
do
  local steps = fit{loss_scale = {init = 8, growth = 4, interval = 2}}
  expect.values({steps[1].loss_scale, steps[2].loss_scale, steps[3].loss_scale, steps[4].loss_scale}, {8, 8, 32, 32})
end

-- A batch of NaN: that step is skipped and the scale halved.
do
  local steps = fit{train = loader({[2] = true}), loss_scale = {init = 1024}}
  assert(#steps == 4)
  assert(not steps[1].skipped and steps[2].skipped and not steps[3].skipped)
  expect.values({steps[2].loss_scale, steps[3].loss_scale}, {1024, 512})
end

-- NaN in every batch: the run stops at the minimum scale, naming it.
expect.error(function()
  fit{train = loader({true, true, true, true}), loss_scale = {init = 4, min = 2}}
end, "step 2 hold inf or NaN at the minimum loss scale 2")

-- Bad settings.
expect.error(function() fit{loss_scale = {inti = 4}} end, "kiln.fit: loss_scale: unknown option 'inti'")
expect.error(function() fit{loss_scale = "yes"} end, "loss_scale must be a boolean or a table of settings, got a string")
expect.error(function() fit{loss_scale = {backoff = 2}} end, "options->loss_scale_backoff is 2")
expect.error(function() fit{loss_scale = {interval = 1.5}} end, "option 'interval' must be an integer")
print("loss scaling: ok")
