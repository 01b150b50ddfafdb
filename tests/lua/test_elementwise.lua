-- The element-wise math ops as tensor methods and through kiln.F: every op of
-- the runtime is a method of kiln.Tensor unless a hand-written method has its
-- name (t:abs(), t:maximum(u), t:eq(0), t:softplus{beta = 2}); unknown names
-- are nil.
local kiln = require("kiln")
local expect = require("expect")
local F = kiln.F

local inf, nan = math.huge, 0 / 0
local function is_nan(v) return v ~= v end

local x = kiln.tensor({-2.5, -0.5, 0, 0.5, 1.5, 2.5})

-- Unary functions, as methods and as kiln.F.
expect.tensor(x:abs(), {2.5, 0.5, 0, 0.5, 1.5, 2.5})
expect.tensor(F.abs(x), {2.5, 0.5, 0, 0.5, 1.5, 2.5})
expect.tensor(x:sign(), {-1, -1, 0, 1, 1, 1})
expect.tensor(x:floor(), {-3, -1, 0, 0, 1, 2})
expect.tensor(x:ceil(), {-2, 0, 0, 1, 2, 3})
expect.tensor(x:round(), {-2, 0, 0, 0, 2, 2})  -- half-way cases to the even neighbour
expect.tensor(x:trunc(), {-2, 0, 0, 0, 1, 2})
expect.tensor(x:sin(), {math.sin(-2.5), math.sin(-0.5), 0, math.sin(0.5), math.sin(1.5), math.sin(2.5)})
expect.tensor(x:cos(), {math.cos(-2.5), math.cos(-0.5), 1, math.cos(0.5), math.cos(1.5), math.cos(2.5)})
expect.tensor(kiln.tensor({4, 0.25}):rsqrt(), {0.5, 2})
expect.tensor(kiln.tensor({0, 1e-7}):log1p(), {0, 1e-7}, 1e-6)
expect.tensor(kiln.tensor({0, -inf}):expm1(), {0, -1})
expect.near(kiln.tensor(1):erf():item(), 0.8427007929, 1e-6, "erf(1)")

local function softplus(v, beta, threshold)
  if v * beta > threshold then return v end
  return math.log(1 + math.exp(v * beta)) / beta
end
local y = kiln.tensor({-3, 0, 1, 2, 30})
expect.tensor(y:softplus(), {softplus(-3, 1, 20), softplus(0, 1, 20), softplus(1, 1, 20), softplus(2, 1, 20), 30})
expect.tensor(y:softplus{beta = 2, threshold = 3}, {softplus(-3, 2, 3), softplus(0, 2, 3), softplus(1, 2, 3), 2, 30})
expect.tensor(F.softplus(y, {beta = 2}), {softplus(-3, 2, 20), softplus(0, 2, 20), softplus(1, 2, 20),
                                          softplus(2, 2, 20), 30})
expect.tensor(kiln.tensor({-4, -3, 0, 1, 3, 4}):hardswish(), {0, 0, 0, 1 * 4 / 6, 3, 4})
expect.tensor(kiln.tensor({0, 1}):mish(), {0, 0.8650983882673103})  -- tanh(log(1 + e))

-- sign of NaN is 0, as in PyTorch; integers keep their dtype.
local odd = kiln.tensor({nan, inf, -inf}):sign():totable()
assert(odd[1] == 0 and odd[2] == 1 and odd[3] == -1, "sign of NaN, inf, -inf")
local ints = kiln.tensor({-3, 0, 4}, {dtype = "i64"})
assert(ints:abs():dtype() == "i64")
expect.tensor(ints:abs(), {3, 0, 4}, 0)
expect.tensor(ints:sign(), {-1, 0, 1}, 0)

-- Binary functions: tensors or numbers as the second operand, broadcasting.
local a = kiln.tensor({{1, 5}, {-3, 2}})
local row = kiln.tensor({2, 2})
expect.tensor(a:maximum(row), {{2, 5}, {2, 2}})
expect.tensor(a:minimum(0), {{0, 0}, {-3, 0}})
expect.tensor(F.maximum(a, kiln.tensor({{0}, {10}})), {{1, 5}, {10, 10}})
local m = kiln.tensor({nan, 1}):maximum(kiln.tensor({1, nan})):totable()
assert(is_nan(m[1]) and is_nan(m[2]), "maximum propagates NaN")
expect.tensor(kiln.tensor({-7, 7, -7, 7.5}):remainder(kiln.tensor({3, -3, -3, 2})), {2, -2, -1, 1.5})
expect.tensor(kiln.tensor({-7, 7}, {dtype = "i32"}):remainder(3), {2, 1}, 0)
expect.error(function() return kiln.tensor({1}, {dtype = "i32"}):remainder(0) end, "division by zero")

-- Comparisons and logical ops give bool tensors.
local function flags(t)
  assert(t:dtype() == "bool", "a bool tensor, got " .. t:dtype())
  return t:long():totable()
end
expect.values(flags(a:eq(kiln.tensor({1, 2}))), {{1, 0}, {0, 1}}, 0)
expect.values(flags(a:ne(2)), {{1, 1}, {1, 0}}, 0)
expect.values(flags(a:lt(2)), {{1, 0}, {1, 0}}, 0)
expect.values(flags(a:le(2)), {{1, 0}, {1, 1}}, 0)
expect.values(flags(a:gt(kiln.tensor({{0}, {2}}))), {{1, 1}, {0, 0}}, 0)
expect.values(flags(a:ge(kiln.tensor({{5}, {-3}}))), {{0, 1}, {1, 1}}, 0)
expect.values(flags(kiln.tensor({nan, 1}):eq(kiln.tensor({nan, 1}))), {0, 1}, 0)
expect.values(flags(kiln.tensor({nan, 1}):ne(kiln.tensor({nan, 1}))), {1, 0}, 0)
local p, q = kiln.tensor({0, 0, 2, nan}), kiln.tensor({0, 1, 0, 3})
expect.values(flags(p:logical_and(q)), {0, 0, 0, 1}, 0)
expect.values(flags(p:logical_or(q)), {0, 1, 1, 1}, 0)
expect.values(flags(p:logical_not()), {1, 1, 0, 0}, 0)
expect.values(flags(F.logical_not(a:gt(1))), {{1, 0}, {1, 0}}, 0)
expect.error(function() return a:eq(kiln.ones(3)) end, "eq", "[2, 2] and [3] cannot be broadcast")

-- Gradients in f64: piecewise functions give zeros, ties share halves.
local function leaf(values) return kiln.tensor(values, {dtype = "f64", requires_grad = true}) end
local g = leaf({-1.3, 0.4, 2.2})
expect.gradients(function(t) return (t:softplus{beta = 2} + t:mish() + t:hardswish() + t:sin() * t:erf()):sum() end, {g})
expect.gradients(function(t) return (t:abs() + t:expm1() + t:cos() + (t + 2):log1p() + (t + 2):rsqrt()):sum() end, {g})
expect.gradients(function(t, u) return (t:remainder(u) + t:maximum(u) * 2 + t:minimum(u)):sum() end, {g, leaf({0.7})})
g:zero_grad()
g:floor():sum():backward()
expect.tensor(g.grad, {0, 0, 0})
local t1, t2 = leaf({1, 2}), leaf({1, 0})
t1:maximum(t2):sum():backward()
expect.tensor(t1.grad, {0.5, 1})
expect.tensor(t2.grad, {0.5, 0})
assert(not t1:eq(t2):requires_grad(), "comparisons carry no gradient")

-- Hand-written methods keep their names; ops fill in the rest; others are nil.
expect.tensor(a:sum(0), {-2, 7})
expect.tensor(a:matmul(kiln.tensor({{1}, {1}})), {{6}, {-1}})
assert(x.no_such_op == nil, "an unknown name is nil")
assert(x.relu == x.relu, "an op's method is made once")
expect.tensor(x:relu(), {0, 0, 0, 0.5, 1.5, 2.5})
