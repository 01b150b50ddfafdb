-- The normalisation, resampling and batched-product ops through kiln.F,
-- and their layers through kiln.nn: values worked out by hand, shapes,
-- parameters and errors.
local kiln = require("kiln")
local expect = require("expect")
local F = kiln.F

local function expect_error(fn, text)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error containing '" .. text .. "'")
  assert(tostring(err):find(text, 1, true), "the error '" .. tostring(err) .. "' does not contain '" .. text .. "'")
end

-- group_norm: one group of {1, 3} per sample has mean 2 and variance 1,
-- so it normalises to {-1, 1} (eps aside); weight 2 and bias 1 give {-1, 3}.
local x = kiln.tensor({{{1}, {3}}})  -- [1, 2, 1]
expect.tensor(F.group_norm(x, {num_groups = 1}), {{{-1}, {1}}}, 1e-4)
expect.tensor(F.group_norm(x, kiln.tensor({2, 2}), kiln.tensor({1, 1}), {num_groups = 1}), {{{-1}, {3}}}, 1e-4)
-- instance_norm: each channel of {0, 2} and {5, 9} to {-1, 1}.
expect.tensor(F.instance_norm(kiln.tensor({{{0, 2}, {5, 9}}})), {{{-1, 1}, {-1, 1}}}, 1e-4)
expect_error(function() F.group_norm(kiln.ones(2, 3, 2), {num_groups = 2}) end, "divisible by num_groups")

-- upsample: nearest repeats each pixel, bilinear with aligned corners blends.
local img = kiln.tensor({{{{1, 2}, {3, 4}}}})
expect.tensor(F.upsample_nearest2d(img, {scale_factor = {2}}),
              {{{{1, 1, 2, 2}, {1, 1, 2, 2}, {3, 3, 4, 4}, {3, 3, 4, 4}}}})
expect.tensor(F.upsample_bilinear2d(img, {size = {3, 3}, align_corners = true}),
              {{{{1, 1.5, 2}, {2, 2.5, 3}, {3, 3.5, 4}}}})
expect_error(function() F.upsample_nearest2d(img) end, "either size or scale_factor")

-- 1-d pools over [1, 1, 4].
local seq = kiln.tensor({{{1, 5, 2, 4}}})
expect.tensor(F.max_pool1d(seq, {kernel_size = {2}}), {{{5, 4}}})
expect.tensor(F.avg_pool1d(seq, {kernel_size = {2}}), {{{3, 3}}})

-- bmm and baddbmm: [[1, 2]] @ [[3], [4]] = 11; 0.5 * 2 + 2 * 11 = 23.
local a, b = kiln.tensor({{{1, 2}}}), kiln.tensor({{{3}, {4}}})
expect.tensor(F.bmm(a, b), {{{11}}})
expect.tensor(F.baddbmm(kiln.tensor({2}), a, b, {beta = 0.5, alpha = 2}), {{{23}}})
expect_error(function() F.bmm(kiln.ones(2, 2), b) end, "batch1 must be a 3D tensor")

-- The layers, by positional shortcuts and options.
local gn = kiln.nn.GroupNorm(2, 4)
assert(gn:type() == "GroupNorm")
assert(#gn:parameters() == 2, "GroupNorm is affine by default")
expect.tensor(gn(kiln.tensor({{{1, 3}, {1, 3}, {0, 4}, {0, 4}}})), {{{-1, 1}, {-1, 1}, {-1, 1}, {-1, 1}}}, 1e-4)
assert(#kiln.nn.GroupNorm(2, 4, {affine = false}):parameters() == 0)
expect_error(function() kiln.nn.GroupNorm(3, 4) end, "divisible")
local inorm = kiln.nn.InstanceNorm2d(3)
assert(#inorm:parameters() == 0, "InstanceNorm2d is not affine by default")
local same = inorm:build{2, 3, 4, 4}
assert(#same == 4 and same[1] == 2 and same[2] == 3 and same[3] == 4 and same[4] == 4)
assert(#kiln.nn.InstanceNorm2d(3, {affine = true}):parameters() == 2)

local up = kiln.nn.Upsample{scale_factor = 2, mode = "bilinear"}
local built = up:build{1, 3, 5, 6}
assert(built[3] == 10 and built[4] == 12, "Upsample doubles H and W")
expect.tensor(kiln.nn.Upsample{size = {1, 4}}(kiln.tensor({{{{7, 8}}}})), {{{{7, 7, 8, 8}}}})
expect_error(function() kiln.nn.Upsample{} end, "exactly one of size and scale_factor")

expect.tensor(kiln.nn.MaxPool1d(2)(seq), {{{5, 4}}})
expect.tensor(kiln.nn.AvgPool1d(2, {stride = 1})(seq), {{{3, 3.5, 3}}})
expect.tensor(kiln.nn.Identity()(seq), {{{1, 5, 2, 4}}})

local prelu = kiln.nn.PReLU()
expect.tensor(prelu(kiln.tensor({-4, 2})), {-1, 2})
assert(#kiln.nn.PReLU(3):parameters()[1]:shape() == 1 and kiln.nn.PReLU(3):parameters()[1]:shape()[1] == 3)
