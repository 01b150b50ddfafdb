-- Reductions, scans and orderings as tensor methods: the positional
-- reductions (t:min(dims, keepdim), t:argmin(dim, keepdim), ...) and the
-- runtime's ops reached by name with a table of attributes (t:cumsum{dim = 0},
-- t:topk{k = 2}, t:sort{...}); ops with two outputs return two tensors.
local kiln = require("kiln")
local expect = require("expect")

local x = kiln.tensor({{3, 1, 2}, {0, 5, 5}}, {dtype = "f64"})

-- Positional reductions: dims is nil (all), a dim or a list.
expect.tensor(x:min(), 0)
expect.tensor(x:min(1), {1, 0})
expect.tensor(x:prod(1), {6, 0})
expect.tensor(x:prod(0, true), {{0, 5, 10}})
expect.tensor(x:std(1), {1, math.sqrt(25 / 3)}, 1e-12)
expect.tensor(x:logsumexp(0), {math.log(math.exp(3) + 1), math.log(math.exp(1) + math.exp(5)),
                               math.log(math.exp(2) + math.exp(5))}, 1e-12)
assert(x:any(1):dtype() == "bool")
expect.values(x:all(1):long():totable(), {1, 0}, 0)
expect.values(x:any({0, 1}):long():item(), 1, 0)

-- argmax and argmin: the first index on ties; no dim counts through the
-- flattened tensor.
expect.values(x:argmax(1):totable(), {0, 1}, 0)
expect.values(x:argmin(1, true):totable(), {{1}, {0}}, 0)
assert(x:argmax():item() == 4 and x:argmin():item() == 3)
expect.error(function() return x:argmax(2) end, "op 'argmax'", "dimension 2 is out of range")

-- Ops by name with attributes.
expect.tensor(x:cumsum{dim = 1}, {{3, 4, 6}, {0, 5, 10}})
expect.tensor(x:cumsum{dim = 0}, {{3, 1, 2}, {3, 6, 7}})
expect.tensor(x:norm{p = 1, dims = {1}}, {6, 10})
expect.tensor(x:norm{p = math.huge}, 5)
local values, indices = x:max_dim{dim = 1}
expect.tensor(values, {3, 5})
expect.values(indices:totable(), {0, 1}, 0)
values, indices = x:min_dim{dim = 0, keepdim = true}
expect.tensor(values, {{0, 1, 2}})
expect.values(indices:totable(), {{1, 0, 0}}, 0)
values, indices = x:sort{dim = 1, descending = true}
expect.tensor(values, {{3, 2, 1}, {5, 5, 0}})
expect.values(indices:totable(), {{0, 2, 1}, {1, 2, 0}}, 0)
expect.values(x:argsort{dim = 0}:totable(), {{1, 0, 0}, {0, 1, 1}}, 0)
values, indices = x:topk{k = 2}
expect.tensor(values, {{3, 2}, {5, 5}})
assert(indices:dtype() == "i64")
expect.values(indices:totable(), {{0, 2}, {1, 2}}, 0)
expect.error(function() return x:topk{k = 4} end, "op 'topk'", "k = 4 is out of range")

-- Gradients flow through the values.
local leaf = kiln.tensor({4, 1, 3}, {dtype = "f64", requires_grad = true})
local top = leaf:topk{k = 2}
top:sum():backward()
expect.tensor(leaf.grad, {1, 0, 1})
