-- The module itself: version, seeds, devices, closing handles, and error
-- messages that carry the script's file and line.
local kiln = require("kiln")
local expect = require("expect")

assert(type(kiln.version) == "string" and kiln.version:match("^%d+%.%d+%.%d+$"))
assert(require("kiln") == kiln, "require gives the same module table")

kiln.manual_seed(123)
local first = kiln.randn(8):totable()
kiln.manual_seed(123)
expect.values(kiln.randn(8):totable(), first, 0, "same seed, same numbers")
expect.error(function() kiln.manual_seed("x") end, "number expected")

local devices = kiln.devices()
assert(devices.cpu == true and math.type(devices.cuda) == "integer" and devices.cuda >= 0)
assert(devices.cuda > 0 or type(devices.cuda_unavailable) == "string", "no GPU: the reason is given")

-- A closed handle is refused, not used after release.
do
  local t <close> = kiln.ones(2)
  assert(t:numel() == 2)
  kept = t
end
expect.error(function() return kept:numel() end, "this kiln.Tensor was closed already and cannot be used")
assert(tostring(kept) == "kiln.Tensor (closed)")
assert(getmetatable(kiln.ones(1)) == "kiln.Tensor", "the metatable is protected")
expect.error(function() return kiln.ones(1):sum(kiln.ones(1)) end, "dim or list of dims expected, got kiln.Tensor")

-- Errors raised in bound functions start with this file and line.
local err = expect.error(function() return kiln.ones(2, 3):matmul(kiln.ones(2, 3)) end, "matmul")
assert(err:find("^[^:]*test_core%.lua:31: "), err)
err = expect.error(function() return kiln.tensor({1}, {bad = 1}) end)
assert(err:find("test_core%.lua:33: unknown tensor option 'bad'"), err)
err = expect.error(function() return kiln.F.relu() end)
assert(err:find("test_core%.lua:35: ") and err:find("relu"), err)
