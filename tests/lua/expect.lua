-- Checks shared by the tensor, functional and core test scripts:
-- local expect = require("expect")
local kiln = require("kiln")

local expect = {}

-- Raises unless a and b agree within an absolute plus relative tolerance.
function expect.near(a, b, tol, what)
  tol = tol or 1e-5
  if math.abs(a - b) > tol * (1 + math.abs(b)) then
    error(string.format("%s: got %.10g, expected %.10g", what or "value", a, b), 2)
  end
end

-- Raises unless the nested tables (or numbers) agree element by element.
function expect.values(got, want, tol, what)
  what = what or "values"
  if type(want) ~= "table" then
    expect.near(got, want, tol, what)
    return
  end
  assert(type(got) == "table", what .. ": got a " .. type(got) .. ", expected a table")
  assert(#got == #want, string.format("%s: %d entries, expected %d", what, #got, #want))
  for i = 1, #want do expect.values(got[i], want[i], tol, what .. "[" .. i .. "]") end
end

-- Raises unless the tensor's values are `want` (a nested table or number).
function expect.tensor(t, want, tol, what)
  expect.values(t:totable(), want, tol, what or tostring(t))
end

function expect.shape(t, want)
  expect.values(t:shape(), want, 0, "shape")
end

-- Calls fn and returns the error message, raising unless it fails with
-- every text in `texts` (plain substrings).
function expect.error(fn, ...)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error")
  err = tostring(err)
  for _, text in ipairs({...}) do
    assert(err:find(text, 1, true), "the error '" .. err .. "' lacks '" .. text .. "'")
  end
  return err
end

-- Every element's gradient of the scalar fn(inputs...) against central
-- differences, in f64 (inputs are f64 tensors with requires_grad).
function expect.gradients(fn, inputs)
  local eps, atol, rtol = 1e-6, 1e-5, 1e-3
  for _, x in ipairs(inputs) do x:zero_grad() end
  fn(table.unpack(inputs)):backward()
  for k, x in ipairs(inputs) do
    local shape = x:shape()
    local flat = x:detach():reshape(-1):totable()
    local analytic = x.grad:reshape(-1):totable()
    for i = 1, #flat do
      local function at(value)
        local moved = {table.unpack(flat)}
        moved[i] = value
        x:copy_(kiln.tensor(moved, {dtype = "f64"}):reshape(shape))
        return kiln.no_grad(fn, table.unpack(inputs)):item()
      end
      local numeric = (at(flat[i] + eps) - at(flat[i] - eps)) / (2 * eps)
      x:copy_(kiln.tensor(flat, {dtype = "f64"}):reshape(shape))
      if math.abs(analytic[i] - numeric) > atol + rtol * math.abs(numeric) then
        error(string.format("input %d element %d: gradient %.8g, finite differences %.8g", k, i, analytic[i],
                            numeric), 2)
      end
    end
  end
end

return expect
