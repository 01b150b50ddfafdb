-- kiln.fit{tensorboard = folder}: the folder gets one event file whose
-- events are read back here from TensorBoard's record format and the
-- protobuf encoding: the file version first, then each step's scalars with
-- the values on_step saw, and each evaluation's loss and accuracy.
local kiln = require("kiln")
local expect = require("expect")

-- A varint at `pos` of `s`: its value and the position after it.
local function varint(s, pos)
  local value, shift = 0, 0
  repeat
    local byte = s:byte(pos)
    value = value | ((byte & 0x7F) << shift)
    shift, pos = shift + 7, pos + 1
  until byte < 0x80
  return value, pos
end

-- The fields of a protobuf message: {number = {values...}}; length-delimited
-- fields as strings, fixed64 as doubles, fixed32 as floats, varints as integers.
local function fields(s)
  local out, pos = {}, 1
  while pos <= #s do
    local key
    key, pos = varint(s, pos)
    local number, wire, value = key >> 3, key & 7, nil
    if wire == 0 then
      value, pos = varint(s, pos)
    elseif wire == 1 then
      value, pos = string.unpack("<d", s, pos)
    elseif wire == 2 then
      local n
      n, pos = varint(s, pos)
      value, pos = s:sub(pos, pos + n - 1), pos + n
    elseif wire == 5 then
      value, pos = string.unpack("<f", s, pos)
    else
      error("unexpected wire type " .. wire)
    end
    out[number] = out[number] or {}
    table.insert(out[number], value)
  end
  return out
end

-- Every event of the file: {step =, version =, scalars = {tag = value}}.
local function read_events(path)
  local f = assert(io.open(path, "rb"))
  local bytes = f:read("a")
  f:close()
  local events, pos = {}, 1
  while pos <= #bytes do
    local length
    length, pos = string.unpack("<I8", bytes, pos)
    pos = pos + 4  -- the length's checksum
    local event = fields(bytes:sub(pos, pos + length - 1))
    pos = pos + length + 4  -- the payload's checksum
    local e = {step = event[2] and event[2][1], version = event[3] and event[3][1], scalars = {}}
    for _, value in ipairs(event[5] and fields(event[5][1])[1] or {}) do
      local v = fields(value)
      e.scalars[v[1][1]] = v[2][1]
    end
    events[#events + 1] = e
  end
  assert(pos == #bytes + 1, "the last record runs past the file")
  return events
end

math.randomseed(7)
local inputs, labels = {}, {}
for _ = 1, 32 do
  local x, y = math.random() * 2 - 1, math.random() * 2 - 1
  inputs[#inputs + 1] = {x, y}
  labels[#labels + 1] = x > y and 1 or 0
end
local src = kiln.data.source("tensors", {input = kiln.tensor(inputs), target = kiln.tensor(labels, {dtype = "i64"})})
local model = kiln.nn.Linear(2, 2)

local folder = os.tmpname()
os.remove(folder)
local run = folder .. "/exp1"
local seen, evals = {}, {}
kiln.fit{
  model = model, optimizer = kiln.optim.SGD(model:parameters(), {lr = 0.25}),
  train = kiln.data.loader(src, {batch_size = 8}), validation = kiln.data.loader(src, {batch_size = 32}),
  epochs = 2, progress = "quiet", tensorboard = run,
  on_step = function(m) seen[#seen + 1] = {step = m.step, loss = m.loss, lr = m.lr} end,
  on_eval = function(m) evals[#evals + 1] = {step = m.step, loss = m.loss, accuracy = m.accuracy} end,
}

local listing = assert(io.popen("ls '" .. run .. "'"))
local names = {}
for name in listing:lines() do names[#names + 1] = name end
listing:close()
assert(#names == 1 and names[1]:find("^events%.out%.tfevents%.%d+%."), "the folder holds " .. table.concat(names, ", "))
local path = run .. "/" .. names[1]

local events = read_events(path)
assert(#events == 1 + #seen + #evals, "events: " .. #events)
assert(events[1].version == "brain.Event:2")
for i, m in ipairs(seen) do
  local e = events[1 + i + (i > 4 and 1 or 0)]  -- the first epoch's evaluation follows step 4
  assert(e.step == m.step, "event step " .. tostring(e.step) .. ", expected " .. m.step)
  expect.near(e.scalars["train/loss"], m.loss, 1e-6, "train/loss")
  expect.near(e.scalars["train/lr"], m.lr, 1e-7, "train/lr")
  for _, tag in ipairs{"train/grad_norm", "train/samples_per_second", "train/step_seconds",
                       "train/input_wait_seconds", "memory/peak_cpu_bytes"} do
    assert(e.scalars[tag], tag .. " is missing at step " .. m.step)
  end
  assert(e.scalars["train/loss_scale"] == nil and e.scalars["memory/peak_gpu_bytes"] == nil)
end
local first_eval = events[6]
assert(first_eval.step == evals[1].step and first_eval.step == 4)
expect.near(first_eval.scalars["eval/loss"], evals[1].loss, 1e-6, "eval/loss")
expect.near(first_eval.scalars["eval/accuracy"], evals[1].accuracy, 1e-6, "eval/accuracy")
expect.near(events[#events].scalars["eval/accuracy"], evals[2].accuracy, 1e-6, "eval/accuracy")

os.remove(path)
os.remove(run)
os.remove(folder)
