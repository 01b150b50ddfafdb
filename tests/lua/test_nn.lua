-- kiln.nn: layers by name and by positional shortcuts, forward values,
-- containers, build errors, modes, device and dtype changes, and losses.
local kiln = require("kiln")

local function near(a, b, tol)
  return math.abs(a - b) <= (tol or 1e-5) * (1 + math.abs(b))
end

local function expect_error(fn, text)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error containing '" .. text .. "'")
  assert(tostring(err):find(text, 1, true), "the error '" .. tostring(err) .. "' does not contain '" .. text .. "'")
  return tostring(err)
end

local function same_shape(shape, expected)
  assert(#shape == #expected, "rank " .. #shape .. " where " .. #expected .. " was expected")
  for i = 1, #expected do
    assert(shape[i] == expected[i], "dim " .. i .. " is " .. shape[i] .. "; expected " .. expected[i])
  end
end

-- Layers by registered name, with a table of options or positional shortcuts.
local lin = kiln.nn.Linear{in_features = 3, out_features = 2}
assert(lin:type() == "Linear")
assert(kiln.nn.NoSuchLayer == nil, "an unregistered layer name is nil")
assert(#kiln.nn.Linear(3, 2, {bias = false}):parameters() == 1)
same_shape(kiln.nn.Conv2d(1, 4, 3, {padding = 1}):build{1, 1, 8, 8}, {1, 4, 8, 8})
same_shape(kiln.nn.Conv2d(1, 4, 5):build{1, 1, 8, 8}, {1, 4, 4, 4})
same_shape(kiln.nn.MaxPool2d(2):build{1, 4, 8, 8}, {1, 4, 4, 4})
assert(kiln.nn.Dropout(0.5):type() == "Dropout")
assert(kiln.nn.ReLU():type() == "ReLU")
expect_error(function() kiln.nn.ReLU(3) end, "takes a table of options")
expect_error(function() kiln.nn.Linear(1, 2, 3) end, "at most 2 positional arguments (in_features, out_features)")
expect_error(function() kiln.nn.Linear{in_features = 3} end, "out_features")

-- Forward of a Linear against y = x W^T + b computed by hand from its parameters.
local named = lin:named_parameters()
assert(#named == 2 and named[1][1] == "weight" and named[2][1] == "bias")
local W, b = named[1][2]:totable(), named[2][2]:totable()
assert(lin:parameters()[1]:numel() == 6)
local xs = {{1, 2, 3}, {-1, 0.5, 2}}
local x = kiln.tensor(xs)
local y, y2 = lin(x):totable(), lin:forward(x):totable()
for i = 1, 2 do
  for j = 1, 2 do
    local expected = b[j]
    for k = 1, 3 do expected = expected + xs[i][k] * W[j][k] end
    assert(near(y[i][j], expected), "y[" .. i .. "][" .. j .. "] = " .. y[i][j] .. ", expected " .. expected)
    assert(y2[i][j] == y[i][j])
  end
end
local text = tostring(lin)
assert(text:find("Linear", 1, true) and text:find("2 parameters, 8 values", 1, true), text)

-- Sequential: children in order, named or by index.
local seq = kiln.nn.Sequential{kiln.nn.Linear(3, 4), kiln.nn.ReLU()}
assert(seq:add("head", kiln.nn.Linear(4, 2)) == seq)
assert(seq:type() == "Sequential")
local names = {}
for _, p in ipairs(seq:named_parameters()) do names[#names + 1] = p[1] end
assert(table.concat(names, " ") == "0.weight 0.bias head.weight head.bias", table.concat(names, " "))
same_shape(seq(x):shape(), {2, 2})
same_shape(seq:build{5, 3}, {5, 2})
expect_error(function() kiln.nn.Sequential{kiln.nn.ReLU(), 3} end, "entry 2 is a number")

-- Graph: a skip connection, x + inner(x), against the inner module run alone.
local inner = kiln.nn.Linear(3, 3)
local g = kiln.nn.Graph{inputs = {"x"},
                        nodes = {{"lin", inner, {"x"}}, {"sum", kiln.nn.op("add"), {"x", "lin"}}},
                        outputs = {"sum"}}
local gy, iy = g(x):totable(), inner(x):totable()
for i = 1, 2 do
  for j = 1, 3 do assert(near(gy[i][j], iy[i][j] + xs[i][j])) end
end
-- Two outputs come back as two values.
local two = kiln.nn.Graph{inputs = {"x"}, nodes = {{"relu", kiln.nn.ReLU(), {"x"}}}, outputs = {"x", "relu"}}
local a, r = two(x)
assert(a:totable()[2][1] == -1 and r:totable()[2][1] == 0)
local s1, s2 = two:build{2, 3}
same_shape(s1, {2, 3})
same_shape(s2, {2, 3})
expect_error(function() kiln.nn.Graph{inputs = {"x"}, nodes = {{"n", 5, {"x"}}}} end, "node 'n' has a number")
expect_error(function() kiln.nn.Graph{inputs = {"x"}, nodes = {}, outputz = {}} end, "unknown option 'outputz'")

-- A layer that does not fit: the runtime's message names it, and the script's line comes first.
local bad = kiln.nn.Sequential{kiln.nn.Conv2d(1, 2, 5)}
local message = expect_error(function() bad:build{1, 1, 4, 4} end, "Conv2d")
assert(message:find("test_nn.lua:", 1, true), message)

-- Train and eval modes: Dropout is the identity in eval mode.
assert(seq:training() == true)
assert(seq:eval() == seq and seq:training() == false)
seq:train()
assert(seq:training() == true)
seq:train(false)
assert(seq:training() == false)
local drop = kiln.nn.Dropout(0.5):eval()
local dy = drop(x):totable()
for i = 1, 2 do
  for j = 1, 3 do assert(dy[i][j] == xs[i][j]) end
end

-- Devices and dtypes, in place.
assert(lin:double() == lin and lin:parameters()[1]:dtype() == "f64")
lin:float()
assert(lin:parameters()[1]:dtype() == "f32")
lin:cast("f64")
assert(lin:parameters()[2]:dtype() == "f64")
assert(lin:to("cpu") == lin)
assert(not pcall(function() lin:to("cuda:63") end), "no machine has device cuda:63")

-- Buffers: BatchNorm's running statistics.
local bn = kiln.nn.BatchNorm2d(4)
assert(#bn:buffers() >= 2 and #bn:named_buffers() == #bn:buffers())

-- Losses against values computed by hand.
local logits = kiln.tensor({{1, 2, 3}})
local target = kiln.tensor({2}, {dtype = "i64"})
local lse = math.log(math.exp(1) + math.exp(2) + math.exp(3))
assert(near(kiln.nn.CrossEntropyLoss()(logits, target):item(), lse - 3))
local smooth = 0.1
local mean_nll = ((lse - 1) + (lse - 2) + (lse - 3)) / 3
assert(near(kiln.nn.CrossEntropyLoss{label_smoothing = smooth}(logits, target):item(),
            (1 - smooth) * (lse - 3) + smooth * mean_nll))
local logp = kiln.tensor({{-1.5, -0.5, -2.0}})
assert(near(kiln.nn.NLLLoss()(logp, kiln.tensor({1}, {dtype = "i64"})):item(), 0.5))
assert(near(kiln.nn.MSELoss()(kiln.tensor({1, 2}), kiln.tensor({0, 0})):item(), 2.5))
assert(near(kiln.nn.MSELoss{reduction = "sum"}(kiln.tensor({1, 2}), kiln.tensor({0, 0})):item(), 5))
assert(near(kiln.nn.BCEWithLogitsLoss()(kiln.tensor({0}), kiln.tensor({1})):item(), math.log(2)))
assert(tostring(kiln.nn.MSELoss()):find("mse_loss", 1, true))
