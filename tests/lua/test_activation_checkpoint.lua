-- kiln.nn.Checkpoint: gradients bit-identical to the unwrapped model's with
-- dropout inside (attention's too), parameters under the names they have unwrapped (a weights
-- file moves between the two), gradients against finite differences in
-- f64, the plain forward under kiln.no_grad, and what it refuses.
local kiln = require("kiln")
local expect = require("expect")

local function block(n_in, n_out)
  return kiln.nn.Sequential{kiln.nn.Linear(n_in, n_out), kiln.nn.ReLU(), kiln.nn.Dropout(0.5)}
end

kiln.manual_seed(3)
local b1, b2, head = block(6, 12), block(12, 12), kiln.nn.Linear(12, 4)
local plain = kiln.nn.Sequential{b1, b2, head}
local wrapped = kiln.nn.Sequential{kiln.nn.Checkpoint(b1), kiln.nn.Checkpoint(b2), head}
local whole = kiln.nn.Checkpoint(plain)
assert(whole:type() == "Checkpoint")

local x = kiln.randn(5, 6):requires_grad(true)
local w = kiln.randn(5, 4)

-- The input's and every parameter's gradient after one backward of
-- loss(model(input)), the random stream seeded with `seed` first.
local function gradients(model, input, seed, loss)
  kiln.manual_seed(seed)
  loss(model(input)):backward()
  local values = {input.grad:totable()}
  input:zero_grad()
  for _, p in ipairs(model:parameters()) do
    values[#values + 1] = p.grad:totable()
    p:zero_grad()
  end
  return values
end

-- x's and every parameter's gradient, then the output of one more forward
-- (which shows where the random stream was left).
local function step_values(model)
  local values = gradients(model, x, 1234, function(y) return (y * w):sum() end)
  values[#values + 1] = model(x):totable()
  return values
end

local want = step_values(plain)
expect.values(step_values(wrapped), want, 0, "checkpointed per block")
expect.values(step_values(whole), want, 0, "checkpointed whole")

-- Attention with dropout on its weights, and a causal mask: the recomputed
-- forward draws the same dropout mask from the random stream.
local attention = kiln.nn.MultiHeadAttention(8, 2, {dropout = 0.25, causal = true})
local tokens = kiln.randn(3, 5, 8):requires_grad(true)
local function attention_values(model)
  return gradients(model, tokens, 77, function(out) return (out * out):sum() end)
end
local want_attention = attention_values(attention)
-- The dropout is live: another seed drops other weights.
kiln.manual_seed(78)
local other = attention(tokens):totable()
kiln.manual_seed(77)
assert(not pcall(expect.values, other, attention(tokens):totable(), 0, ""), "attention dropout drew nothing")
expect.values(attention_values(kiln.nn.Checkpoint(attention)), want_attention, 0, "checkpointed attention")

-- Names: those of the unwrapped model, so weights files are interchangeable.
local names, wrapped_names = plain:named_parameters(), wrapped:named_parameters()
assert(#names == #wrapped_names and wrapped_names[1][1] == "0.0.weight")
for i = 1, #names do assert(names[i][1] == wrapped_names[i][1], wrapped_names[i][1]) end
local path = os.tmpname()
kiln.save(path, wrapped)
kiln.manual_seed(9)
local fresh = kiln.nn.Sequential{block(6, 12), block(12, 12), kiln.nn.Linear(12, 4)}
kiln.load(path, fresh)
expect.values(fresh:parameters()[1]:totable(), plain:parameters()[1]:totable(), 0, "0.0.weight loaded")
os.remove(path)

-- Finite differences in f64, through a checkpointed Linear, Tanh, Linear.
local small = kiln.nn.Checkpoint(kiln.nn.Sequential{kiln.nn.Linear(3, 5), kiln.nn.Tanh(), kiln.nn.Linear(5, 2)})
small:double()
local weights = kiln.randn(4, 2, {dtype = "f64"})
expect.gradients(function(input) return (small(input) * weights):sum() end,
                 {kiln.randn(4, 3, {dtype = "f64"}):requires_grad(true)})

-- Without recording: the module's own forward, nothing to back-propagate.
local y = kiln.no_grad(function() return whole(x) end)
assert(not y:requires_grad())

expect.error(function() kiln.nn.Checkpoint(42) end, "kiln.nn.Checkpoint: argument 1 is a number; expected a module")
expect.error(function() kiln.nn.Checkpoint() end, "kiln.nn.Checkpoint: argument 1 is a no value; expected a module")
