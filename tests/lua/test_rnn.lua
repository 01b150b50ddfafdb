-- kiln.nn.LSTM and kiln.nn.GRU from scripts: options and positional
-- arguments, PyTorch's parameter names, the three (two) outputs and their
-- shapes, values against the cell equations computed here from the
-- parameters, gradients reaching every parameter, and errors.
local kiln = require("kiln")
local expect = require("expect")

local function sigmoid(v) return 1 / (1 + math.exp(-v)) end

-- Row r of W times the vector v, plus b[r].
local function affine(W, v, b, r)
  local sum = b[r]
  for k = 1, #v do sum = sum + W[r][k] * v[k] end
  return sum
end

-- Options table: 2 layers, bidirectional, batch first.
local lstm = kiln.nn.LSTM{input_size = 3, hidden_size = 4, num_layers = 2, bidirectional = true, batch_first = true}
assert(lstm:type() == "LSTM")
local names = {}
for _, p in ipairs(lstm:named_parameters()) do names[#names + 1] = p[1] end
expect.values(#names, 16, 0, "parameter count")
assert(names[1] == "weight_ih_l0" and names[2] == "weight_hh_l0" and names[3] == "bias_ih_l0"
       and names[4] == "bias_hh_l0" and names[5] == "weight_ih_l0_reverse" and names[9] == "weight_ih_l1"
       and names[16] == "bias_hh_l1_reverse", table.concat(names, ", "))
expect.shape(lstm:named_parameters()[9][2], {16, 8}) -- layer 1 reads both directions: 2 H inputs

local x = kiln.randn(2, 5, 3)
local output, h_n, c_n = lstm(x)
expect.shape(output, {2, 5, 8})
expect.shape(h_n, {4, 2, 4})
expect.shape(c_n, {4, 2, 4})
local built = {lstm:build{2, 5, 3}}
assert(#built == 3, "build gives the shapes of the 3 outputs")
expect.values(built[1], {2, 5, 8}, 0, "built output")
-- The last layer's forward h_n is its output at the last step; its reverse
-- h_n the reverse half at the first step.
local out, h = output:totable(), h_n:totable()
for n = 1, 2 do
  for j = 1, 4 do
    expect.near(out[n][5][j], h[3][n][j], 1e-6, "forward h_n")
    expect.near(out[n][1][4 + j], h[4][n][j], 1e-6, "reverse h_n")
  end
end

-- Positional arguments (input_size, hidden_size, num_layers); given h0.
local gru = kiln.nn.GRU(2, 3, 1)
assert(gru:type() == "GRU" and #gru:parameters() == 4)
local xs = {{{0.5, -1.0}}, {{0.25, 2.0}}} -- [T = 2, N = 1, 2]
local h0s = {{{0.1, -0.2, 0.3}}}
local y, hn = gru(kiln.tensor(xs), kiln.tensor(h0s))
expect.shape(y, {2, 1, 3})
expect.shape(hn, {1, 1, 3})

-- GRU's equations step by step from its parameters (gates r, z, n).
local p = {}
for _, pair in ipairs(gru:named_parameters()) do p[pair[1]] = pair[2]:totable() end
local state = h0s[1][1]
local want = {}
for t = 1, 2 do
  local v, new = xs[t][1], {}
  for j = 1, 3 do
    local r = sigmoid(affine(p.weight_ih_l0, v, p.bias_ih_l0, j) + affine(p.weight_hh_l0, state, p.bias_hh_l0, j))
    local z = sigmoid(affine(p.weight_ih_l0, v, p.bias_ih_l0, 3 + j)
                      + affine(p.weight_hh_l0, state, p.bias_hh_l0, 3 + j))
    local n = math.tanh(affine(p.weight_ih_l0, v, p.bias_ih_l0, 6 + j)
                        + r * affine(p.weight_hh_l0, state, p.bias_hh_l0, 6 + j))
    new[j] = (1 - z) * n + z * state[j]
  end
  state = new
  want[t] = {new}
end
expect.tensor(y, want, 1e-5, "GRU output")
expect.tensor(hn, {{state}}, 1e-5, "GRU h_n")

-- LSTM's equations for one step from zero states (gates i, f, g, o).
local cell = kiln.nn.LSTM(2, 3)
local q = {}
for _, pair in ipairs(cell:named_parameters()) do q[pair[1]] = pair[2]:totable() end
local v = xs[1][1]
local hs, cs = {}, {}
for j = 1, 3 do
  local function gate(k) return affine(q.weight_ih_l0, v, q.bias_ih_l0, k * 3 + j) + q.bias_hh_l0[k * 3 + j] end
  cs[j] = sigmoid(gate(0)) * math.tanh(gate(2))
  hs[j] = sigmoid(gate(3)) * math.tanh(cs[j])
end
local o1, h1, c1 = cell(kiln.tensor({xs[1]}))
expect.tensor(o1, {{hs}}, 1e-5, "LSTM output")
expect.tensor(h1, {{hs}}, 1e-5, "LSTM h_n")
expect.tensor(c1, {{cs}}, 1e-5, "LSTM c_n")

-- Unbatched input [T, features]: states [layers * directions, H].
local u, uh, uc = cell(kiln.randn(4, 2))
expect.shape(u, {4, 3})
expect.shape(uh, {1, 3})
expect.shape(uc, {1, 3})

-- Backward from the output and the final states reaches every parameter.
local loss = output:sum() + h_n:sum() + c_n:sum()
loss:backward()
for _, pair in ipairs(lstm:named_parameters()) do
  assert(pair[2].grad ~= nil, pair[1] .. " has no gradient")
  expect.shape(pair[2].grad, pair[2]:shape())
end

-- proj_size: h (each output feature, h0, h_n) is projected to 2 wide, c
-- stays hidden_size; weight_hr_l0 [2, 4] follows the biases.
local projected = kiln.nn.LSTM{input_size = 3, hidden_size = 4, proj_size = 2, bidirectional = true}
local py, ph, pc = projected(kiln.randn(5, 2, 3), kiln.randn(2, 2, 2), kiln.randn(2, 2, 4))
expect.shape(py, {5, 2, 4})
expect.shape(ph, {2, 2, 2})
expect.shape(pc, {2, 2, 4})
local pnames = projected:named_parameters()
assert(pnames[5][1] == "weight_hr_l0", pnames[5][1])
expect.shape(pnames[5][2], {2, 4})
expect.shape(pnames[2][2], {16, 2})

-- Errors name the layer and what was expected.
expect.error(function() kiln.nn.LSTM{input_size = 3} end, "hidden_size")
expect.error(function() kiln.nn.GRU(3, 4, {dropout = 1.5}) end, "dropout must be in [0, 1)")
expect.error(function() kiln.nn.LSTM(3, 4, {proj_size = 4}) end, "proj_size must be smaller than hidden_size = 4")
expect.error(function() lstm(kiln.randn(2, 5, 7)) end, "input_size = 3")
expect.error(function() gru(kiln.randn(2, 1, 2), kiln.randn(2, 1, 3)) end, "h0 must be")
expect.error(function() cell(kiln.randn(2, 1, 2), kiln.randn(1, 1, 3)) end,
             "LSTM takes 1 input (input) or 3 (input, h0, c0), got 2")
