-- Gradients from scripts: backward, t.grad, requires_grad, detach,
-- zero_grad, clone, copy_, kiln.no_grad, and composite expressions checked
-- against finite differences in f64.
local kiln = require("kiln")
local expect = require("expect")

local x = kiln.tensor({1, 2, 3}, {requires_grad = true})
assert(x.grad == nil, "no gradient before backward")
local y = (x * x):sum()
y:backward()
expect.tensor(x.grad, {2, 4, 6})
-- Gradients add up until zero_grad.
;(x * 3):sum():backward()
expect.tensor(x.grad, {5, 7, 9})
assert(x:zero_grad() == x)
assert(x.grad == nil)

-- A seed gradient for a non-scalar output; retain_graph for a second pass.
local z = x * 2
z:backward(kiln.tensor({1, 0, -1}), true)
expect.tensor(x.grad, {2, 0, -2})
z:backward(kiln.tensor({1, 1, 1}))
expect.tensor(x.grad, {4, 2, 0})
expect.error(function() z:backward(kiln.tensor({1, 1, 1})) end, "backward")
x:zero_grad()

-- requires_grad: read, set (returns the tensor).
local w = kiln.ones(2)
assert(not w:requires_grad())
assert(w:requires_grad(true) == w and w:requires_grad())
expect.error(function() w:requires_grad("yes") end, "boolean expected, got string")

-- detach: same values, no history; clone: a copy gradients flow through.
local d = (x * 2):detach()
expect.tensor(d, {2, 4, 6})
assert(not d:requires_grad())
local c = x:clone()
expect.tensor(c, {1, 2, 3})
;(c * c):sum():backward()
expect.tensor(x.grad, {2, 4, 6})
x:zero_grad()

-- copy_: in place, converted, not recorded; returns the destination.
local dst = kiln.zeros(3, {dtype = "f64"})
assert(dst:copy_(kiln.tensor({1.5, 2.5, 3.5})) == dst)
expect.tensor(dst, {1.5, 2.5, 3.5})
dst:copy_({7, 8, 9})
expect.tensor(dst, {7, 8, 9})
expect.error(function() dst:copy_(kiln.ones(2)) end, "shape")

-- no_grad: nothing is recorded inside; its results are returned; the mode
-- comes back even when the function raises.
local inside = kiln.no_grad(function(a, b) return a * b, "second" end, x, 2)
assert(not inside:requires_grad(), "a result made under no_grad has no history")
local r1, r2 = kiln.no_grad(function() return 1, 2 end)
assert(r1 == 1 and r2 == 2)
local ok, err = pcall(kiln.no_grad, function() error("stop here") end)
assert(not ok and err:find("stop here"))
assert((x * 2):requires_grad(), "recording is back on after an error inside no_grad")

-- Composite expressions against central differences in f64.
local function f64(values) return kiln.tensor(values, {dtype = "f64", requires_grad = true}) end
local a = f64({{0.5, -1.2, 2.0}, {1.5, 0.3, -0.7}})
local b = f64({0.2, -0.4, 1.1})
local m = f64({{0.3, -0.5}, {1.2, 0.8}, {-0.6, 0.1}})
expect.gradients(function(p, q) return ((p * q - p / (q * q + 1)) ^ 2):sum() end, {a, b})
expect.gradients(function(p, q) return (kiln.F.tanh(p:matmul(q)) * 3 - p:sum(1, true):mean()):mean() end, {a, m})
expect.gradients(function(p) return kiln.F.cross_entropy(p, kiln.tensor({2, 0}, {dtype = "i64"}),
                                                         {label_smoothing = 0.1}) end, {a})
