-- nn.Linear's activation option: Linear{activation = ...} gives the outputs
-- and gradients of Linear followed by the activation's own layer with the
-- same parameters, in train and eval mode (GELU is fused in eval mode only),
-- adds no parameter, and rejects an unknown name.
local kiln = require("kiln")
local expect = require("expect")

kiln.manual_seed(7)
local x = kiln.randn(8, 5, {requires_grad = true})
local g = kiln.randn(8, 3)

local cases = {
  {activation = "relu", layer = kiln.nn.ReLU()},
  {activation = "gelu_tanh", layer = kiln.nn.GELU{approximate = "tanh"}},
}
local function check(case, training)
  local what = "Linear{activation = " .. case.activation .. "} in " .. (training and "train" or "eval") .. " mode"
  local fused = kiln.nn.Linear(5, 3, {activation = case.activation}):train(training)
  local linear = kiln.nn.Linear(5, 3)
  local named = fused:named_parameters()
  assert(#named == 2 and named[1][1] == "weight" and named[2][1] == "bias", what .. ": parameters renamed")
  for i, p in ipairs(linear:parameters()) do p:copy_(fused:parameters()[i]) end
  local two_layers = kiln.nn.Sequential{linear, case.layer}

  local y_fused, y_two = fused(x), two_layers(x)
  expect.values(y_fused:totable(), y_two:totable(), 1e-5, what .. " output")
  if case.activation == "relu" then
    local zeros = 0
    for _, v in ipairs(y_fused:reshape(-1):totable()) do zeros = zeros + (v == 0 and 1 or 0) end
    assert(zeros > 0, what .. ": no output was clipped, so the check above proves nothing")
  end

  x:zero_grad()
  ;(y_fused * g):sum():backward()
  local x_grad = x.grad:totable()
  x:zero_grad()
  ;(y_two * g):sum():backward()
  expect.values(x_grad, x.grad:totable(), 1e-5, what .. " input gradient")
  for i, p in ipairs(fused:parameters()) do
    local name = what .. " " .. named[i][1] .. " gradient"
    expect.values(p.grad:totable(), linear:parameters()[i].grad:totable(), 1e-5, name)
  end
end

for _, case in ipairs(cases) do
  check(case, true)
  check(case, false)
end

expect.error(function() kiln.nn.Linear(5, 3, {activation = "gelu"}) end, "Linear", "activation", '"gelu"',
             '"none", "relu", "gelu_tanh"')
