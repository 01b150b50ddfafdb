-- Run by test_script_api.c: an uncaught runtime error on line 5, two calls deep.
local kiln = require("kiln")
local function shapes_that_do_not_fit()
  local a, b = kiln.ones(2, 3), kiln.ones(4, 5)
  local product = a:matmul(b)
  return product
end
local function caller() local result = shapes_that_do_not_fit() return result end
caller()
