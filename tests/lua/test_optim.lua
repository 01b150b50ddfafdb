-- kiln.optim: every optimizer type, an SGD trajectory by hand, parameter
-- groups, hyper-parameters, state round trips and schedules.
local kiln = require("kiln")

local function near(a, b, tol)
  return math.abs(a - b) <= (tol or 1e-5) * (1 + math.abs(b))
end

local function expect_error(fn, text)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error containing '" .. text .. "'")
  assert(tostring(err):find(text, 1, true), "the error '" .. tostring(err) .. "' does not contain '" .. text .. "'")
end

-- loss = mean(p^2) over 2 values: the gradient of p is p itself.
local mse = kiln.nn.MSELoss()
local function backward_on(p)
  mse(p, kiln.zeros(p:shape())):backward()
end

-- Every optimizer type: made by name, one step moves the parameter.
for _, name in ipairs{"SGD", "Adam", "AdamW", "RMSprop", "Adagrad"} do
  local p = kiln.tensor({1, 2}, {requires_grad = true})
  local opt = kiln.optim[name]({p}, {lr = 0.1})
  assert(near(opt:lr(), 0.1) and opt:steps() == 0)
  backward_on(p)
  opt:step()
  assert(opt:steps() == 1, name)
  assert(p:totable()[1] < 1 and p:totable()[2] < 2, name .. " did not move the parameter downhill")
end
assert(kiln.optim.NoSuchOptimizer == nil)

-- SGD with momentum against torch.optim.SGD's rule worked by hand:
-- step 1: buf = g = p0, p1 = 0.9 p0; step 2: g = 0.9 p0, buf = 0.9 p0 + 0.9 p0, p2 = p1 - 0.1 buf = 0.72 p0.
local p = kiln.tensor({1, -2}, {requires_grad = true})
local sgd = kiln.optim.SGD({p}, {lr = 0.1, momentum = 0.9})
for _ = 1, 2 do
  sgd:zero_grad()
  backward_on(p)
  sgd:step()
end
assert(near(p:totable()[1], 0.72) and near(p:totable()[2], -1.44), "SGD trajectory " .. p:totable()[1])
assert(near(sgd:get("momentum"), 0.9))

-- Groups: a group's own values, else the shared options.
local p1 = kiln.tensor({1, 1}, {requires_grad = true})
local p2 = kiln.tensor({1, 1}, {requires_grad = true})
local grouped = kiln.optim.SGD({{params = {p1}, lr = 0.1}, {params = {p2}}}, {lr = 0.01})
assert(grouped:groups() == 2)
assert(near(grouped:get("lr", 1), 0.1) and near(grouped:get("lr", 2), 0.01))
grouped:set("lr", 0.5, 2)
assert(near(grouped:get("lr", 2), 0.5) and near(grouped:lr(), 0.1))
backward_on(p1)
backward_on(p2)
grouped:step()
assert(near(p1:totable()[1], 0.9) and near(p2:totable()[1], 0.5))
expect_error(function() grouped:get("lr", 3) end, "group 3 does not exist: the optimizer has 2 group(s), numbered from 1")
expect_error(function() grouped:get("lr", 0) end, "group 0 does not exist")
expect_error(function() grouped:get("no_such_hyper") end, "no_such_hyper")
expect_error(function() kiln.optim.SGD({p1, 5}, {lr = 0.1}) end, "entry 2 is a number")
expect_error(function() kiln.optim.SGD({p1}, {lr = -1}) end, "lr")

-- State round trip: Adam's moments go into a fresh optimizer and come back equal.
local q = kiln.tensor({0.5, -1.5}, {requires_grad = true})
local adam = kiln.optim.Adam({q}, {lr = 0.01})
backward_on(q)
adam:step()
local state = adam:state()
assert(state.step:item() == 1 and state["0.exp_avg"] ~= nil, "Adam's state has step and 0.exp_avg")
local q2 = kiln.tensor({0.5, -1.5}, {requires_grad = true})
local adam2 = kiln.optim.Adam({q2}, {lr = 0.01})
adam2:load_state(state)
assert(adam2:state().step:item() == 1)
local m1, m2 = state["0.exp_avg"]:totable(), adam2:state()["0.exp_avg"]:totable()
assert(m1[1] == m2[1] and m1[2] == m2[2])
expect_error(function() adam2:load_state({step = state.step, ["0.exp_avg"] = kiln.zeros(3)}) end, "is missing")
expect_error(function() adam2:load_state({[1] = state.step}) end, "keys must be state names")

-- Schedules: by type and under lr_scheduler, against their formulas.
local step = kiln.optim.schedule("step", {step_size = 2, gamma = 0.5})
assert(near(step:lr(0, 1), 1) and near(step:lr(2, 1), 0.5) and near(step:lr(5, 2), 0.5))
local cosine = kiln.optim.lr_scheduler.cosine{t_max = 10}
assert(near(cosine:lr(0, 1), 1) and near(cosine:lr(5, 1), 0.5) and near(cosine:lr(10, 1), 0, 1e-9))
assert(near(kiln.optim.schedule("exponential", {gamma = 0.9}):lr(2, 1), 0.81))
assert(kiln.optim.lr_scheduler.no_such_schedule == nil)
expect_error(function() kiln.optim.schedule("no_such_schedule", {}) end, "no_such_schedule")
