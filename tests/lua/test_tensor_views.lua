-- Views and conversions: t[i] (positions from 1), slice (1-based,
-- inclusive, like string.sub), reshape/view, permute, transpose,
-- contiguous, to, type and the cast shortcuts.
local kiln = require("kiln")
local expect = require("expect")

local t = kiln.tensor({{1, 2, 3}, {4, 5, 6}})

-- t[i]: row i of the first dim; a number for a 1-D tensor.
expect.tensor(t[1], {1, 2, 3})
expect.tensor(t[2], {4, 5, 6})
expect.tensor(t[-1], {4, 5, 6})
assert(t[2][3] == 6 and t[1][1] == 1)
expect.error(function() return t[3] end, "t[3]: index out of range for dim 0 of size 2 (positions count from 1)")
expect.error(function() return t[0] end, "index out of range")
expect.error(function() return t[1.5] end, "the index must be an integer")
expect.error(function() return kiln.tensor(1)[1] end, "a 0-d tensor has no rows")
assert(t.no_such_method == nil)

-- slice(dim, start, stop): both ends included, negative from the end, clamped.
expect.tensor(t:slice(1, 2, 3), {{2, 3}, {5, 6}})
expect.tensor(t:slice(1, 2), {{2, 3}, {5, 6}})
expect.tensor(t:slice(0, -1, -1), {{4, 5, 6}})
expect.tensor(t:slice(1, -2), {{2, 3}, {5, 6}})
expect.tensor(t:slice(1, 0, 10), {{1, 2, 3}, {4, 5, 6}})
expect.shape(t:slice(1, 3, 2), {2, 0})
expect.error(function() return t:slice(2, 1, 1) end, "dim 2 is out of range")

-- reshape and view, with -1 for the rest.
expect.tensor(t:reshape(3, 2), {{1, 2}, {3, 4}, {5, 6}})
expect.tensor(t:view({6}), {1, 2, 3, 4, 5, 6})
expect.shape(t:reshape(-1, 2), {3, 2})
expect.error(function() return t:reshape(4, 2) end, "reshape")

-- permute and transpose (dims from 0), then contiguous.
local p = t:permute(1, 0)
expect.tensor(p, {{1, 4}, {2, 5}, {3, 6}})
expect.tensor(t:permute({1, 0}), {{1, 4}, {2, 5}, {3, 6}})
local tt = t:transpose(0, 1)
expect.tensor(tt, {{1, 4}, {2, 5}, {3, 6}})
expect.tensor(tt:contiguous():reshape(6), {1, 4, 2, 5, 3, 6})
expect.tensor(kiln.arange(24):reshape(2, 3, 4):transpose(0, -1):slice(0, 2, 2):reshape(-1),
              {1, 13, 5, 17, 9, 21})

-- Devices and dtypes.
expect.tensor(t:to("cpu"), {{1, 2, 3}, {4, 5, 6}})
expect.error(function() return t:to("gpu") end, "unknown device 'gpu'")
local casts = {float = "f32", double = "f64", half = "f16", long = "i64", int = "i32", bool = "bool"}
for method, dtype in pairs(casts) do assert(t[method](t):dtype() == dtype, method) end
assert(t:type("f64"):dtype() == "f64")
expect.tensor(kiln.tensor({1.7, -1.7}):long(), {1, -1})
expect.error(function() return t:type("f128") end, "unknown dtype 'f128'")
