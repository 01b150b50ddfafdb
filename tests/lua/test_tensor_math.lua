-- Arithmetic with broadcasting and numbers on either side, ==, < and <=,
-- element-wise comparisons, reductions, argmax and matmul.
local kiln = require("kiln")
local expect = require("expect")

local a = kiln.tensor({{1, 2}, {3, 4}})
local row = kiln.tensor({10, 20})

expect.tensor(a + row, {{11, 22}, {13, 24}})
expect.tensor(a - row, {{-9, -18}, {-7, -16}})
expect.tensor(a * row, {{10, 40}, {30, 80}})
expect.tensor(a / row, {{0.1, 0.1}, {0.3, 0.2}})
expect.tensor(a + 1, {{2, 3}, {4, 5}})
expect.tensor(1 + a, {{2, 3}, {4, 5}})
expect.tensor(10 - a, {{9, 8}, {7, 6}})
expect.tensor(a * 2, {{2, 4}, {6, 8}})
expect.tensor(12 / a, {{12, 6}, {4, 3}})
expect.tensor(-a, {{-1, -2}, {-3, -4}})
expect.tensor(a ^ 2, {{1, 4}, {9, 16}})
expect.tensor(2 ^ a, {{2, 4}, {8, 16}}, 1e-5)
expect.tensor(a ^ kiln.tensor({1, 0.5}), {{1, math.sqrt(2)}, {3, 2}}, 1e-5)
expect.error(function() return a + kiln.ones(3) end, "add")
expect.error(function() return a + "x" end, "kiln.Tensor, number or table of numbers expected, got string")
-- Scalars take the tensor's dtype.
assert((kiln.tensor({1, 2}, {dtype = "f64"}) * 3):dtype() == "f64")

-- == is identity; < and <= compare one-element tensors.
local same = a
assert(a == same and not (a == kiln.tensor({{1, 2}, {3, 4}})))
assert(kiln.tensor(1) < kiln.tensor(2) and kiln.tensor(2) <= 2 and 1 < kiln.tensor({3}))
assert(not (kiln.tensor(3) < 2))
expect.error(function() return a < a end, "'<' compares one-element tensors, got one with 4 elements")

-- Element-wise comparisons give bool tensors, broadcasting.
local function flags(t)
  assert(t:dtype() == "bool")
  return t:long():totable()
end
expect.values(flags(a:eq(kiln.tensor({1, 4}))), {{1, 0}, {0, 1}}, 0)
expect.values(flags(a:ne(2)), {{1, 0}, {1, 1}}, 0)
expect.values(flags(a:lt(3)), {{1, 1}, {0, 0}}, 0)
expect.values(flags(a:le(3)), {{1, 1}, {1, 0}}, 0)
expect.values(flags(a:gt(kiln.tensor({{2}, {3}}))), {{0, 0}, {0, 1}}, 0)
expect.values(flags(a:ge(2)), {{0, 1}, {1, 1}}, 0)
expect.error(function() return a:eq(kiln.ones(3)) end, "op 'eq'", "cannot be broadcast")

-- Reductions over all elements or the given dims (from 0).
expect.tensor(a:sum(), 10)
expect.tensor(a:sum(0), {4, 6})
expect.tensor(a:sum(1, true), {{3}, {7}})
expect.tensor(a:sum({0, 1}), 10)
expect.tensor(a:mean(), 2.5)
expect.tensor(a:mean(1), {1.5, 3.5})
expect.tensor(a:max(), 4)
expect.tensor(a:max(0), {3, 4})
expect.tensor(a:var(), 5 / 3, 1e-6)
expect.tensor(a:var(1), {0.5, 0.5})

-- argmax: 0-based indices, like class targets; the first on ties.
local scores = kiln.tensor({{0.1, 0.7, 0.2}, {0.5, 0.5, 0.1}})
local best = scores:argmax(1)
assert(best:dtype() == "i64")
expect.values(best:totable(), {1, 0}, 0)
expect.values(scores:argmax(0):totable(), {1, 0, 0}, 0)
expect.values(scores:argmax(-1, true):totable(), {{1}, {0}}, 0)
assert(scores:argmax():item() == 1)

-- matmul.
expect.tensor(a:matmul(kiln.tensor({{1, 0}, {1, 1}})), {{3, 2}, {7, 4}})
expect.tensor(a:matmul(kiln.tensor({{1}, {1}})), {{3}, {7}})
expect.error(function() return a:matmul(kiln.ones(3, 1)) end, "matmul")
