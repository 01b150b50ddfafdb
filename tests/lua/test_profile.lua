-- The profiler from scripts: kiln.profile(fn, ...) runs fn with profiling on
-- and returns the table and then what fn returns; profiling ends even when
-- fn raises; kiln.write_trace writes the last profile as Chrome trace JSON.
local kiln = require("kiln")
local expect = require("expect")

kiln.manual_seed(3)
local model = kiln.nn.Sequential{kiln.nn.Linear(4, 8), kiln.nn.ReLU(), kiln.nn.Linear(8, 3)}
local opt = kiln.optim.SGD(model:parameters(), {lr = 0.1})
local x, target = kiln.randn({6, 4}), kiln.tensor({0, 1, 2, 0, 1, 2}, {dtype = "i64"})
local loss_fn = kiln.nn.CrossEntropyLoss()

-- Before any profile there is nothing to write.
expect.error(function() kiln.write_trace(os.tmpname()) end, "no profile has been recorded")

local function step(scale)
  opt:zero_grad()
  local loss = loss_fn(model(x), target)
  loss:backward()
  opt:step()
  return loss:item(), scale
end

-- The table, then fn's results, its arguments passed on.
local report, loss, passed = kiln.profile(step, "extra")
assert(type(report) == "string", type(report))
assert(type(loss) == "number" and passed == "extra")
assert(report:find("op%s+phase%s+calls%s+total ms%s+self ms%s+mean µs%s+%% total\n"), report)
-- Forward rows first, then backward rows, with the backward functions named "<op> backward".
local linear_forward = report:find("\nlinear%s+forward%s+2%s")
local linear_backward = report:find("\nlinear backward%s+backward%s+2%s")
local relu_backward = report:find("\nrelu backward%s+backward%s+1%s")
assert(linear_forward and linear_backward and relu_backward, report)
assert(linear_forward < linear_backward, "backward rows come after the forward rows:\n" .. report)
assert(report:find("\nforward [%d.]+ ms, backward [%d.]+ ms %(self time of %d+ profiled calls%)\n$"), report)

-- The trace of that profile: one complete event per call, both phases.
local path = os.tmpname()
kiln.write_trace(path)
local file = assert(io.open(path, "r"))
local json = file:read("a")
file:close()
os.remove(path)
assert(json:find('^{"displayTimeUnit":"ms","traceEvents":%['), json:sub(1, 80))
assert(json:find('{"name":"linear","cat":"forward","ph":"X"', 1, true))
assert(json:find('{"name":"linear backward","cat":"backward","ph":"X"', 1, true))
assert(json:find('"input_shapes":[[6,4],[8,4],[8]]', 1, true), "linear's input shapes are missing")

-- Profiles do not nest, and a profile ends when fn raises.
expect.error(function() kiln.profile(function() kiln.profile(step) end) end, "profiling is already on")
expect.error(function() kiln.profile(function() error("inside") end) end, "inside")
local again = kiln.profile(function() return model(x) end)
assert(again:find("\nlinear%s+forward%s+2%s") and not again:find("backward%s+backward"), again)

-- Bad arguments.
expect.error(function() kiln.profile() end, "function expected")
expect.error(function() kiln.write_trace("/no-such-directory/trace.json") end, "cannot save", "no-such-directory")
