-- The shape, indexing and padding ops as tensor methods and through kiln.F:
-- inputs positional, attributes in a table, several outputs returned.
local kiln = require("kiln")
local expect = require("expect")
local F = kiln.F

local x = kiln.tensor({{1, 2, 3}, {4, 5, 6}})
local mask = kiln.tensor({true, false, true})

-- Element moves and masks.
expect.tensor(x:masked_fill(mask, {value = 0}), {{0, 2, 0}, {0, 5, 0}})
expect.tensor(x:flip{dims = {0}}, {{4, 5, 6}, {1, 2, 3}})
expect.tensor(x:roll{shifts = {1}, dims = {1}}, {{3, 1, 2}, {6, 4, 5}})
expect.tensor(x:roll{shifts = {1}}, {{6, 1, 2}, {3, 4, 5}})
-- repeat is a Lua keyword: call it by its name in brackets.
expect.tensor(F["repeat"](x, {repeats = {1, 2}}), {{1, 2, 3, 1, 2, 3}, {4, 5, 6, 4, 5, 6}})
expect.tensor(x:tril(), {{1, 0, 0}, {4, 5, 0}})
expect.tensor(x:triu{diagonal = 1}, {{0, 2, 3}, {0, 0, 6}})
expect.tensor(x:pad{pad = {1, 1}, mode = "reflect"}, {{2, 1, 2, 3, 2}, {5, 4, 5, 6, 5}})
expect.tensor(x:pad{pad = {0, 0, 1, 0}, value = -1}, {{-1, -1, -1}, {1, 2, 3}, {4, 5, 6}})

-- Views.
expect.shape(x:unsqueeze{dim = 0}, {1, 2, 3})
expect.shape(x:unsqueeze{dim = -1}:squeeze(), {2, 3})
expect.shape(x:flatten(), {6})
expect.tensor(x:narrow{dim = 1, start = 1, length = 2}, {{2, 3}, {5, 6}})

-- Indexing: indices are 0-based values, as t:argmax gives them.
local rows = kiln.tensor({1, 0, 1}, {dtype = "i64"})
expect.tensor(x:index_select(rows, {dim = 0}), {{4, 5, 6}, {1, 2, 3}, {4, 5, 6}})
expect.tensor(kiln.zeros(2, 3):index_add(rows, kiln.ones(3, 3), {dim = 0, alpha = 2}), {{2, 2, 2}, {4, 4, 4}})
local index = kiln.tensor({{2, 0}}, {dtype = "i64"})
expect.tensor(kiln.zeros(1, 3):scatter(index, kiln.tensor({{7, 8}}), {dim = 1}), {{8, 0, 7}})
expect.tensor(kiln.ones(1, 3):scatter_add(index, kiln.tensor({{7, 8}}), {dim = 1}), {{9, 1, 8}})

-- stack takes any number of tensors; chunk returns every piece.
local stacked = F.stack(x, x, {dim = -1})
expect.shape(stacked, {2, 3, 2})
expect.tensor(stacked[1], {{1, 1}, {2, 2}, {3, 3}})
local first, second = x:chunk{chunks = 2, dim = 1}
expect.tensor(first, {{1, 2}, {4, 5}})
expect.tensor(second, {{3}, {6}})

-- Gradients flow through them.
local w = kiln.tensor({{0.5, -1, 2}, {1.5, 0.25, -0.75}}, {dtype = "f64", requires_grad = true})
expect.gradients(function(t)
  local padded = t:pad{pad = {2, 1}, mode = "replicate"}
  return (padded:flip{dims = {1}}:masked_fill(kiln.tensor({true, false, false, true, false, false}),
                                              {value = 0}) * padded):sum()
end, {w})

-- Errors name the op and what was wrong.
expect.error(function() return x:pad{pad = {3, 0}, mode = "reflect"} end,
             "reflect padding (3, 0) of dimension 1 must be less than its size 3")
expect.error(function() return x:index_select(kiln.tensor({5}, {dtype = "i64"}), {dim = 0}) end,
             "index 5 is out of range for dimension 0 of size 2")
expect.error(function() return x:flip{dims = {2}} end, "op 'flip': dimension 2 is out of range")

-- one_hot: i64 class indices in, i64 out.
local hot = kiln.tensor({2, 0}, {dtype = "i64"}):one_hot()
expect.tensor(hot, {{0, 0, 1}, {1, 0, 0}})
assert(hot:dtype() == "i64", "one_hot gives i64")
expect.shape(kiln.tensor({1}, {dtype = "i64"}):one_hot{num_classes = 5}, {1, 5})

-- prelu: one slope per channel (dim 1).
expect.tensor(kiln.tensor({{-2, 2}, {-4, 4}}):prelu(kiln.tensor({0.5, 0.25})), {{-1, 2}, {-2, 4}})
