-- kiln.fit and kiln.evaluate on a tiny separable problem: the loss falls,
-- callbacks are called, a callback stops training, a callback's error
-- reaches the script, and evaluation measures the model.
local kiln = require("kiln")

local function expect_error(fn, text)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error containing '" .. text .. "'")
  assert(tostring(err):find(text, 1, true), "the error '" .. tostring(err) .. "' does not contain '" .. text .. "'")
end

-- Points in [-1, 1]^2, class 1 when x > y.
math.randomseed(42)
local inputs, labels = {}, {}
for _ = 1, 64 do
  local x, y = math.random() * 2 - 1, math.random() * 2 - 1
  inputs[#inputs + 1] = {x, y}
  labels[#labels + 1] = x > y and 1 or 0
end
local src = kiln.data.source("tensors", {input = kiln.tensor(inputs), target = kiln.tensor(labels, {dtype = "i64"})})
local train = kiln.data.loader(src, {batch_size = 16, shuffle = true, seed = 3})
local validation = kiln.data.loader(src, {batch_size = 64})

local model = kiln.nn.Linear(2, 2)
local opt = kiln.optim.SGD(model:parameters(), {lr = 0.5})

local losses, epochs, evals = {}, {}, 0
local last = kiln.fit{
  model = model, loss = "cross_entropy", optimizer = opt, train = train, validation = validation,
  epochs = 20, progress = "quiet",
  on_step = function(m)
    losses[#losses + 1] = m.loss
    -- a CPU loader: the host waits, no device does
    assert(m.input_wait_seconds >= 0 and m.device_input_wait_seconds == 0)
    -- the step held at least the parameters and a batch of 16 on the CPU, and used no GPU
    assert(math.type(m.peak_cpu_bytes) == "integer" and m.peak_cpu_bytes >= (2 * 2 + 2 + 16 * 2) * 4,
           "peak_cpu_bytes " .. tostring(m.peak_cpu_bytes))
    assert(m.peak_gpu_bytes == 0)
  end,
  on_epoch = function(epoch, m) epochs[#epochs + 1] = epoch; assert(m.epoch == epoch) end,
  on_eval = function(m) evals = evals + 1; assert(m.samples == 64) end,
}
assert(#losses == 80, "4 steps per epoch for 20 epochs, got " .. #losses)
assert(#epochs == 20 and epochs[1] == 0 and epochs[20] == 19)
assert(evals == 20, "one evaluation per epoch, got " .. evals)
local function mean(from, to)
  local sum = 0
  for i = from, to do sum = sum + losses[i] end
  return sum / (to - from + 1)
end
assert(mean(77, 80) < 0.5 * mean(1, 4), "the loss did not fall: " .. mean(1, 4) .. " -> " .. mean(77, 80))
assert(last.accuracy > 0.85 and last.samples == 64, "the last evaluation's accuracy is " .. last.accuracy)
assert(opt:steps() == 80)
local stats = train:stats()
assert(stats.batches == 80 and stats.device_wait_seconds == 0, "a CPU loader's device wait is " .. stats.device_wait_seconds)

-- evaluate: a pass over a loader.
local measured = kiln.evaluate(model, validation, {loss = kiln.nn.CrossEntropyLoss()})
assert(measured.samples == 64 and measured.accuracy > 0.85 and measured.loss > 0)
assert(math.abs(measured.loss - last.loss) < 1e-6, "evaluate and fit's last evaluation disagree")

-- A callback returning true stops training after that step; max_steps also stops it.
local steps = 0
kiln.fit{model = model, optimizer = opt, train = train, epochs = 5, progress = "quiet",
         on_step = function() steps = steps + 1; return steps == 3 end}
assert(steps == 3 and opt:steps() == 83, "stopped after " .. steps .. " steps")
local result = kiln.fit{model = model, optimizer = opt, train = train, max_steps = 2, epochs = 0, progress = "quiet"}
assert(opt:steps() == 85 and result.loss ~= nil and result.accuracy == nil, "the last step's metrics come back without a validation loader")

-- An error raised in a callback stops training and reaches the script with its message.
local calls = 0
expect_error(function()
  kiln.fit{model = model, optimizer = opt, train = train, epochs = 3, progress = "quiet",
           on_step = function() calls = calls + 1; error("boom in on_step") end}
end, "boom in on_step")
assert(calls == 1)

-- Metrics written as JSON lines.
local path = os.tmpname()
kiln.fit{model = model, optimizer = opt, train = train, max_steps = 2, epochs = 0, progress = "quiet", metrics = path}
local lines = 0
for _ in io.lines(path) do lines = lines + 1 end
os.remove(path)
assert(lines >= 2, "expected a line per step in the metrics file, got " .. lines)

-- Options checked.
expect_error(function() kiln.fit{model = model, train = train} end, "'optimizer'")
expect_error(function() kiln.fit{model = model, optimizer = opt, train = train, epoch = 2} end, "unknown option 'epoch'")
expect_error(function() kiln.fit{model = model, optimizer = opt, train = train, progress = "loud"} end, "progress")
expect_error(function() kiln.fit{model = model, optimizer = opt, train = train, on_step = 5} end, "must be a function")
expect_error(function()
  kiln.fit{model = model, optimizer = opt, train = train, loss = kiln.nn.CrossEntropyLoss{label_smoothing = 0.1}}
end, "by op name only")
