-- conv1d, conv_transpose2d and scaled_dot_product_attention through kiln.F,
-- and the Conv1d and ConvTranspose2d layers through kiln.nn.
local kiln = require("kiln")
local expect = require("expect")
local F = kiln.F

-- conv1d of ones with a kernel of ones counts each window; padding 1 cuts
-- the edge windows short.
local x = kiln.ones(1, 1, 4)
local w = kiln.ones(1, 1, 3)
expect.tensor(F.conv1d(x, w, kiln.tensor({0.5}), {padding = {1}}), {{{2.5, 3.5, 3.5, 2.5}}})
expect.tensor(F.conv1d(x, w, nil, {stride = {2}}), {{{3}}})
expect.error(function() return F.conv1d(x, w, nil, {stride = {1, 1}}) end, "stride must have 1 value")

-- conv_transpose2d with stride 2 and a 2x2 kernel of ones spreads each input
-- value over its own 2x2 block.
local up = F.conv_transpose2d(kiln.tensor({{{{1, 2}, {3, 4}}}}), kiln.ones(1, 1, 2, 2), nil, {stride = {2, 2}})
expect.tensor(up, {{{{1, 1, 2, 2}, {1, 1, 2, 2}, {3, 3, 4, 4}, {3, 3, 4, 4}}}})

-- Attention with equal scores averages the values; causal keeps the prefix.
local q = kiln.zeros(1, 3, 2)
local v = kiln.tensor({{{1, 10}, {2, 20}, {6, 60}}})
expect.tensor(F.scaled_dot_product_attention(q, q, v), {{{3, 30}, {3, 30}, {3, 30}}})
expect.tensor(F.scaled_dot_product_attention(q, q, v, nil, {is_causal = true}), {{{1, 10}, {1.5, 15}, {3, 30}}})
-- scale left out is 1/sqrt(E); an explicit 0 is used as it is, which makes
-- every score 0 and so averages the values whatever the queries.
local qs = kiln.tensor({{{1, 0}, {0, 2}, {3, 1}}})
expect.tensor(F.scaled_dot_product_attention(qs, qs, v, nil, {scale = 0}), {{{3, 30}, {3, 30}, {3, 30}}})
local keep = kiln.tensor({{true, false, true}, {true, true, false}, {false, false, true}})
expect.tensor(F.scaled_dot_product_attention(q, q, v, keep), {{{3.5, 35}, {1.5, 15}, {6, 60}}})
expect.error(function() return F.scaled_dot_product_attention(q, q, v, nil, {dropout_p = 1}) end,
             "dropout_p must be in [0, 1), got 1")
-- Dropout on the weights (1/3 each): with the identity for value, each
-- output element is 0 (dropped) or 2/3 (kept, scaled by 1 / (1 - 0.5));
-- one seed draws one mask.
local eye = kiln.tensor({{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}})
kiln.manual_seed(4)
local dropped = F.scaled_dot_product_attention(q, q, eye, nil, {dropout_p = 0.5}):totable()
for _, row in ipairs(dropped[1]) do
  for _, x in ipairs(row) do assert(x == 0 or math.abs(x - 2 / 3) < 1e-6, "a dropped attention weight: " .. x) end
end
kiln.manual_seed(4)
expect.tensor(F.scaled_dot_product_attention(q, q, eye, nil, {dropout_p = 0.5}), dropped)

-- Gradients through the fused kernel, in f64.
local qa = kiln.tensor({{0.1, -0.3}, {0.5, 0.2}}, {dtype = "f64", requires_grad = true})
local ka = kiln.tensor({{0.4, 0.1}, {-0.2, 0.3}, {0.6, -0.5}}, {dtype = "f64", requires_grad = true})
local va = kiln.tensor({{1, 2}, {-1, 0.5}, {0.3, 0.7}}, {dtype = "f64", requires_grad = true})
expect.gradients(function(a, b, c)
  local y = F.scaled_dot_product_attention(a, b, c)
  return (y * y):sum()
end, {qa, ka, va})
-- A floating mask is differentiable too; this one is broadcast over the queries.
local ma = kiln.tensor({{0.2, -0.4, 0.1}}, {dtype = "f64", requires_grad = true})
expect.gradients(function(a, b, c, m)
  local y = F.scaled_dot_product_attention(a, b, c, m)
  return (y * y):sum()
end, {qa, ka, va, ma})

-- The layers, with PyTorch's positional arguments and parameter shapes.
local conv1 = kiln.nn.Conv1d(2, 4, 3, {padding = 1})
expect.values(conv1:build{1, 2, 8}, {1, 4, 8})
local params = conv1:named_parameters()
assert(params[1][1] == "weight" and params[2][1] == "bias")
expect.shape(params[1][2], {4, 2, 3})
expect.shape(conv1(kiln.ones(2, 2, 8)), {2, 4, 8})

local deconv = kiln.nn.ConvTranspose2d(4, 2, 3, {stride = 2, padding = 1, output_padding = 1})
expect.values(deconv:build{1, 4, 5, 5}, {1, 2, 10, 10})
expect.shape(deconv:named_parameters()[1][2], {4, 2, 3, 3})
expect.error(function() return kiln.nn.Conv1d{in_channels = 2, out_channels = 4, kernel_size = {3, 3}} end, "Conv1d",
             "kernel_size takes 1 value")
expect.error(function() return kiln.nn.ConvTranspose2d(2, 4, 3, {output_padding = 1}) end,
             "output_padding [1, 1] must be smaller than stride [1, 1] or dilation [1, 1]")
-- Below the dilation is enough: stride 1, dilation 2 takes output_padding 1,
-- one more row and column than without: (5 - 1) + 2 * (3 - 1) + 1 + 1.
expect.values(kiln.nn.ConvTranspose2d(4, 2, 3, {dilation = 2, output_padding = 1}):build{1, 4, 5, 5}, {1, 2, 10, 10})
