-- kiln.save and kiln.load (weights and named tensors as safetensors files),
-- and kiln.fit's checkpoint and resume options: a run resumed from its
-- saved state takes the same steps, with the same losses, as one that
-- never stopped.
local kiln = require("kiln")
local expect = require("expect")

local function expect_error(fn, text)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error containing '" .. text .. "'")
  assert(tostring(err):find(text, 1, true), "the error '" .. tostring(err) .. "' does not contain '" .. text .. "'")
end

local function net()
  return kiln.nn.Sequential{kiln.nn.Linear(2, 8), kiln.nn.BatchNorm1d(8), kiln.nn.ReLU(), kiln.nn.Dropout(0.2),
                            kiln.nn.Linear(8, 2)}
end

local function same_state(a, b)
  local pa, pb = a:named_parameters(), b:named_parameters()
  for _, pair in ipairs(a:named_buffers()) do pa[#pa + 1] = pair end
  for _, pair in ipairs(b:named_buffers()) do pb[#pb + 1] = pair end
  assert(#pa == #pb)
  for i = 1, #pa do
    assert(pa[i][1] == pb[i][1])
    expect.values(pa[i][2]:totable(), pb[i][2]:totable(), 0, pa[i][1])
  end
end

local path = os.tmpname()

-- Weights: a model's parameters and buffers come back into another model.
kiln.manual_seed(1)
local a = net()
kiln.manual_seed(2)
local b = net()
kiln.save(path, a)
assert(kiln.load(path, b) == b)
same_state(a, b)

-- The file is a plain set of tensors under PyTorch's state_dict names.
local file = kiln.load(path)
for _, name in ipairs{"0.weight", "0.bias", "1.weight", "1.bias", "4.weight", "4.bias", "1.running_mean",
                      "1.running_var", "1.num_batches_tracked"} do
  assert(file[name], "the weights file lacks " .. name)
end
expect.values(file["0.weight"]:totable(), a:named_parameters()[1][2]:totable(), 0, "0.weight")

-- Any named tensors.
kiln.save(path, {mean = kiln.tensor{1.5, -2}, counts = kiln.tensor({3, 4}, {dtype = "i64"})})
local t = kiln.load(path)
expect.tensor(t.mean, {1.5, -2}, 0)
assert(t.counts:dtype() == "i64" and t.counts:totable()[2] == 4)

-- Names that do not match: strict refuses, strict = false skips them.
kiln.save(path, kiln.nn.Linear(2, 8))
expect_error(function() kiln.load(path, net()) end, "tensor(s) missing from the file: 0.weight")
kiln.load(path, kiln.nn.Sequential{kiln.nn.ReLU()}, {strict = false})
expect_error(function() kiln.load(path, net(), {strict = 1}) end, "strict")
expect_error(function() kiln.load(path, net(), {strcit = false}) end, "strcit")
expect_error(function() kiln.save(path, 42) end, "expected a module or a table of name -> tensor")
expect_error(function() kiln.load(path .. ".absent") end, ".absent")

-- kiln.fit: 12 steps straight, against 6 steps saved and 6 more resumed.
local function run(options)
  kiln.manual_seed(7)
  local model = net()
  local inputs, labels = {}, {}
  for i = 1, 48 do
    inputs[i] = {math.sin(i), math.cos(3 * i)}
    labels[i] = inputs[i][1] > inputs[i][2] and 1 or 0
  end
  local src = kiln.data.source("tensors", {input = kiln.tensor(inputs), target = kiln.tensor(labels, {dtype = "i64"})})
  local losses = {}
  options.model = model
  options.optimizer = kiln.optim.Adam(model:parameters(), {lr = 0.05})
  options.train = kiln.data.loader(src, {batch_size = 8, shuffle = true, seed = 3})
  options.epochs = 0
  options.progress = "quiet"
  options.on_step = function(m) losses[m.step] = m.loss end
  kiln.fit(options)
  return losses, model
end

local straight, straight_model = run{max_steps = 12}
local first = run{max_steps = 8, checkpoint = path, checkpoint_every = 3}
assert(#first == 8)
local resumed, resumed_model = run{max_steps = 12, resume = path}
assert(resumed[8] == nil and resumed[9] ~= nil, "the resumed run starts after the saved step 8")
for step = 9, 12 do
  assert(resumed[step] == straight[step],
         string.format("step %d: %.17g resumed, %.17g straight", step, resumed[step], straight[step]))
end
same_state(resumed_model, straight_model)

expect_error(function() run{max_steps = 2, resume = path .. ".absent"} end, "No such file")
expect_error(function() run{max_steps = 2, checkpoint_every = 2} end, "checkpoint_path is not set")
os.remove(path)
