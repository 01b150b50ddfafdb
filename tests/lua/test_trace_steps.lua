-- kiln.fit{trace = ..., trace_steps = {first, last}}: a Chrome trace of
-- those steps, each a span over its phases, and a clear error for a
-- malformed range.
local kiln = require("kiln")

local function expect_error(fn, text)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error containing '" .. text .. "'")
  assert(tostring(err):find(text, 1, true), "the error '" .. tostring(err) .. "' does not contain '" .. text .. "'")
end

local path = os.tmpname()
local src = kiln.data.source("synthetic", {length = 64, shape = {8}, num_classes = 2, seed = 1})
local model = kiln.nn.Linear(8, 2)
local opt = kiln.optim.SGD(model:parameters(), {lr = 0.1})
local fit = {model = model, optimizer = opt, train = kiln.data.loader(src, {batch_size = 16}), epochs = 2,
             progress = "quiet", trace = path, trace_steps = {5, 6}}
kiln.fit(fit)

local file = assert(io.open(path, "r"))
local json = file:read("a")
file:close()
os.remove(path)
local function has_span(name) return json:find('{"name":"' .. name .. '","cat":"span"', 1, true) ~= nil end
assert(has_span("step 5") and has_span("step 6"), "the traced steps are missing")
assert(not has_span("step 4") and not has_span("step 7"), "steps outside 5..6 were traced")
for _, phase in ipairs({"input wait", "forward", "backward", "optimizer"}) do
  assert(has_span(phase), "no '" .. phase .. "' span")
end

fit.trace_steps = {3}
expect_error(function() kiln.fit(fit) end, "trace_steps must be a table {first, last}")
fit.trace_steps = {4, 2}
expect_error(function() kiln.fit(fit) end, "expected 1 <= first <= last")
