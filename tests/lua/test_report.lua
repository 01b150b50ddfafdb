-- The step time split and the training report from Lua: every step's
-- phases add up to its time, kiln.fit returns the report of its steps
-- (the first left out), and report = must be a boolean.
local kiln = require("kiln")

local function expect_error(fn, text)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error containing '" .. text .. "'")
  assert(tostring(err):find(text, 1, true), "the error '" .. tostring(err) .. "' does not contain '" .. text .. "'")
end

kiln.manual_seed(4)
local src = kiln.data.source("synthetic", {length = 96, shape = {16}, num_classes = 4, seed = 2})
local train = kiln.data.loader(src, {batch_size = 16})
local model = kiln.nn.Sequential{kiln.nn.Linear(16, 32), kiln.nn.ReLU(), kiln.nn.Linear(32, 4)}
local opt = kiln.optim.SGD(model:parameters(), {lr = 0.1})

local steps = 0
local last, report = kiln.fit{
  model = model, optimizer = opt, train = train, epochs = 2, progress = "quiet",
  on_step = function(m)
    steps = steps + 1
    local parts = m.input_wait_seconds + m.forward_seconds + m.backward_seconds + m.communication_seconds +
                  m.optimizer_seconds + m.other_seconds
    assert(math.abs(parts - m.step_seconds) <= 1e-9 * m.step_seconds,
           "the parts add up to " .. parts .. " s, the step took " .. m.step_seconds .. " s")
    assert(m.forward_seconds > 0 and m.backward_seconds > 0 and m.optimizer_seconds > 0)
    assert(m.communication_seconds == 0, "one process communicates nothing")
  end,
}
assert(steps == 12 and last.step == 12)
assert(type(report) == "string", "kiln.fit's second value is the report")
assert(report:find("training report: 11 steps after the first, 176 samples, on cpu, f32", 1, true), report)
for _, row in ipairs({"input wait", "forward", "backward", "optimizer", "other", "samples/s", "memory", "advice"}) do
  assert(report:find(row, 1, true), "the report lacks '" .. row .. "':\n" .. report)
end

expect_error(function()
  kiln.fit{model = model, optimizer = opt, train = train, progress = "quiet", report = "yes"}
end, "report")
