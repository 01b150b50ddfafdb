-- Reading what a tensor is and holds: shape, size, dim, numel, #, dtype,
-- device, item, totable, tostring.
local kiln = require("kiln")
local expect = require("expect")

local t = kiln.tensor({{1, 2, 3}, {4, 5, 6}})
expect.values(t:shape(), {2, 3}, 0)
expect.values(t:size(), {2, 3}, 0)
assert(t:size(0) == 2 and t:size(1) == 3 and t:size(-1) == 3, "dims count from 0; -1 is the last")
assert(t:dim() == 2 and t:numel() == 6 and #t == 2)
assert(kiln.tensor(3):dim() == 0 and kiln.tensor(3):numel() == 1)
expect.error(function() return t:size(2) end, "dim 2 is out of range for a tensor of rank 2")
expect.error(function() return #kiln.tensor(3) end, "a 0-d tensor has no length")

assert(t:dtype() == "f32" and t:double():dtype() == "f64" and t:long():dtype() == "i64")
assert(t:device() == "cpu")

assert(kiln.tensor({{4.5}}):item() == 4.5)
assert(math.type(kiln.tensor({7}, {dtype = "i64"}):item()) == "integer")
assert(kiln.tensor({true}):item() == true)
expect.error(function() return t:item() end, "the tensor has 6 elements, item() needs exactly one")

expect.values(t:totable(), {{1, 2, 3}, {4, 5, 6}}, 0)
local b = kiln.tensor({{true, false}}):totable()
assert(b[1][1] == true and b[1][2] == false)
assert(kiln.tensor(2):totable() == 2)

assert(tostring(t) == "f32[2, 3] on cpu\n{{1, 2, 3}, {4, 5, 6}}", tostring(t))
assert(tostring(kiln.tensor(0.5, {dtype = "f64"})) == "f64[] on cpu\n0.5")
assert(tostring(kiln.zeros(100)) == "f32[100] on cpu", "large tensors print no values")
