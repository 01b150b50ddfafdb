-- Times training steps of one model of bench/suite/models.lua on synthetic
-- data held in memory, and prints one line for bench/suite/compare.py:
--
--   kiln run --threads 2 bench/suite/kiln_train.lua <model> [steps] [warm-up steps] [precision]
--
-- The precision is "f32" (the default) or "bf16"/"f16" (kiln.fit's autocast).
-- The rate counts the timed steps' units (samples, or tokens) over the sum of
-- their step_seconds; GFLOP/s is the steps' flops over the same time, and the
-- peak is the one the training report measures for the device.
local kiln = require("kiln")
local models = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/models.lua")

local name = arg[1]
local spec = models[name]
if not spec then error("unknown model '" .. tostring(name) .. "'; the models: " .. table.concat(models.order, ", ")) end
local steps, warmup, precision = tonumber(arg[2] or "20"), tonumber(arg[3] or "5"), arg[4] or "f32"

kiln.manual_seed(0)
math.randomseed(0)

-- Four batches (an epoch) of random examples: inputs N(0, 1) (token ids for an embedding)
-- and random class targets, passed in order by a loader without workers.
local examples = 4 * spec.batch
local function random_ids(shape, limit)
  local rows = {}
  for i = 1, examples do
    if #shape == 0 then
      rows[i] = math.random(0, limit - 1)
    else
      local row = {}
      for j = 1, shape[1] do row[j] = math.random(0, limit - 1) end
      rows[i] = row
    end
  end
  return kiln.tensor(rows, { dtype = "i64" })
end
local input_shape = { examples, table.unpack(spec.input) }
local input = spec.vocabulary and random_ids(spec.input, spec.vocabulary) or kiln.randn(input_shape)
local target = random_ids(spec.target or {}, spec.classes)
local train = kiln.data.loader(kiln.data.source("tensors", { input = input, target = target }),
  { batch_size = spec.batch, workers = 0 })

local model = spec.build(kiln.nn, kiln)
local values = 0
for _, p in ipairs(model:parameters()) do values = values + p:numel() end
local units_per_example = spec.unit == "tokens" and spec.input[1] or 1

local seconds, flops, units, timed = 0, 0, 0, 0
local _, report = kiln.fit {
  model = model, loss = "cross_entropy", optimizer = spec.optimizer(kiln, model), train = train,
  epochs = (warmup + steps + 3) // 4, max_steps = warmup + steps, progress = "quiet", precision = precision,
  on_step = function(m)
    if m.step <= warmup then return end
    seconds, flops, units = seconds + m.step_seconds, flops + m.flops, units + m.samples * units_per_example
    timed = timed + 1
  end,
}
assert(timed == steps, string.format("%d steps were timed, not %d", timed, steps))
local peak = tonumber(report:match("of the device's ([%d.]+) GFLOP/s %w+ peak") or "0")
print(string.format("kiln %s: %.2f %s/s, %.3f GFLOP/s, peak %.1f GFLOP/s, %d parameters, %d steps",
  name, units / seconds, spec.unit, flops / seconds / 1e9, peak, values, steps))
