-- kiln.F (also kiln.nn.functional): ops by name, positional inputs then a
-- table of attributes, several outputs, and errors.
local kiln = require("kiln")
local expect = require("expect")
local F = kiln.F

assert(kiln.nn.functional == F, "kiln.nn.functional is kiln.F")
assert(F.relu == F.relu, "an op's function is made once")

expect.tensor(F.relu(kiln.tensor({-1, 0, 2})), {0, 0, 2})
expect.tensor(F.leaky_relu(kiln.tensor({-1, 2}), {negative_slope = 0.5}), {-0.5, 2})
expect.tensor(F.exp(kiln.tensor({0, 1})), {1, math.exp(1)})
expect.tensor(F.add(kiln.tensor({1, 2}), 3), {4, 5})
expect.tensor(F.add({1, 2}, kiln.tensor({3, 4})), {4, 6})
expect.tensor(F.sum(kiln.tensor({{1, 2}, {3, 4}}), {dims = {0}}), {4, 6})

-- softmax along the last dim: e^x / sum e^x.
local e1, e2 = math.exp(1), math.exp(2)
expect.tensor(F.softmax(kiln.tensor({{0, 1, 2}}), {dim = -1}), {{1 / (1 + e1 + e2), e1 / (1 + e1 + e2),
                                                                 e2 / (1 + e1 + e2)}})

-- cross_entropy with label smoothing, by hand: for logits z and target t
-- over C classes, loss = -(1 - s) log p_t - s/C sum_c log p_c.
local logits = kiln.tensor({{1, 2, 0}})
local target = kiln.tensor({1}, {dtype = "i64"})
local lse = math.log(e1 + e2 + 1)
local logp = {1 - lse, 2 - lse, 0 - lse}
local s = 0.1
local want = -(1 - s) * logp[2] - s / 3 * (logp[1] + logp[2] + logp[3])
expect.near(F.cross_entropy(logits, target, {label_smoothing = s}):item(), want, 1e-5, "cross_entropy")
expect.near(F.cross_entropy(logits, target):item(), -logp[2], 1e-5, "cross_entropy without smoothing")
expect.near(F.mse_loss(kiln.tensor({1, 2}), kiln.tensor({0, 4})):item(), 2.5, 1e-6, "mse_loss")

-- conv2d with an optional bias and list attributes: a 3x3 input of ones,
-- a 1x1x3x3 kernel of ones, padding 1: each output counts its window.
local x = kiln.ones(1, 1, 3, 3)
local w = kiln.ones(1, 1, 3, 3)
local b = kiln.tensor({0.5})
expect.tensor(F.conv2d(x, w, b, {padding = {1, 1}}), {{{{4.5, 6.5, 4.5}, {6.5, 9.5, 6.5}, {4.5, 6.5, 4.5}}}})
expect.tensor(F.conv2d(x, w, nil, {padding = {1, 1}}), {{{{4, 6, 4}, {6, 9, 6}, {4, 6, 4}}}})
expect.tensor(F.conv2d(x, w), {{{{9}}}})

-- Several outputs.
local first, second = F.split(kiln.tensor({1, 2, 3, 4, 5}), {sizes = {2, 3}})
expect.tensor(first, {1, 2})
expect.tensor(second, {3, 4, 5})

-- Attributes by type: dtype names, booleans, strings.
assert(F.cast(kiln.tensor({1.5}), {dtype = "i32"}):dtype() == "i32")
expect.tensor(F.gelu(kiln.tensor({0}), {approximate = "tanh"}), {0})

-- Errors name the op and what was wrong.
expect.error(function() return F.rleu end, "unknown op 'rleu'")
expect.error(function() return F.relu("x") end, "kiln.Tensor, number or table of numbers expected, got string")
expect.error(function() return F.relu(kiln.ones(2), {no_such = 1}) end, "no_such")
expect.error(function() return F.conv2d(x, w, nil, {padding = {1, "x"}}) end,
             "option 'padding': expected a list of numbers, got string")
expect.error(function() return F.relu(kiln.ones(2), {f = print}) end,
             "option 'f': expected a number, a boolean, a string, a list of numbers or a tensor, got function")
