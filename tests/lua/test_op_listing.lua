-- kiln.ops(): every op of the runtime with its inputs, attributes and
-- defaults, the same list kiln.F and tensor methods call into.
local kiln = require("kiln")
local expect = require("expect")

local ops = kiln.ops()
assert(#ops > 50, "the runtime lists " .. #ops .. " ops")
local by_name = {}
for i, op in ipairs(ops) do
  assert(i == 1 or ops[i - 1].name < op.name, "ops come in name order: " .. op.name)
  by_name[op.name] = op
  assert(type(op.inputs) == "table" and type(op.attrs) == "table", op.name .. ": inputs and attrs are lists")
  assert(op.plugin == nil, op.name .. ": the default runtime's ops are built in")
  -- Every op is reachable through kiln.F, and every op with a tensor first
  -- input as a tensor method.
  assert(type(kiln.F[op.name]) == "function", "kiln.F." .. op.name)
  if #op.inputs > 0 then assert(kiln.ones(1)[op.name] ~= nil, "t:" .. op.name .. "()") end
end

local split = kiln.ops("split")
assert(split.name == "split")
expect.values(#split.inputs, 1)
assert(split.inputs[1].name == "input" and not split.inputs[1].optional and not split.inputs[1].variadic)
local dim, sizes = split.attrs[1], split.attrs[2]
assert(dim.name == "dim" and dim.type == "int" and not dim.required and dim.default == 0 and dim.default_text == "0")
assert(sizes.name == "sizes" and sizes.type == "ints" and sizes.required and sizes.default == nil)
assert(split.backward and not split.writes_inputs and not split.view)

local linear = by_name.linear
assert(linear.inputs[3].name == "bias" and linear.inputs[3].optional)
assert(linear.attrs[1].default == "none" and linear.attrs[1].default_text == '"none"')
local cpu = {}
for _, d in ipairs(linear.kernels.cpu) do cpu[d] = true end
assert(cpu.f32 and cpu.f64 and not cpu.bool, "linear has f32 and f64 CPU kernels")

local dropout = by_name.dropout
assert(dropout.attrs[1].default == 0.5 and dropout.attrs[2].default == true)
assert(by_name.concat.inputs[1].variadic)
assert(by_name.sgd_update.writes_inputs and not by_name.sgd_update.backward)
assert(by_name.reshape.view)
local stride = by_name.conv2d.attrs[1]
assert(stride.name == "stride" and stride.type == "ints" and stride.default_text == "[1, 1]")
expect.values(stride.default, {1, 1})
assert(by_name.max_pool2d.attrs[1].required, "max_pool2d needs its kernel_size")

-- The listing and a call agree: split gives one output per size.
local a, b = kiln.F.split(kiln.arange(5), {sizes = {2, 3}})
expect.tensor(a, {0, 1})
expect.tensor(b, {2, 3, 4})

expect.error(function() kiln.ops("splitt") end, "unknown op 'splitt'", "did you mean", "split")
expect.error(function() kiln.ops({}) end, "string expected")
