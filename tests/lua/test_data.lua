-- kiln.data: sources (synthetic, tensors, CSV written here), transforms and
-- loaders (each example once per epoch, batch shapes, determinism).
local kiln = require("kiln")

local function expect_error(fn, text)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error containing '" .. text .. "'")
  assert(tostring(err):find(text, 1, true), "the error '" .. tostring(err) .. "' does not contain '" .. text .. "'")
end

-- Synthetic: length, shapes, and the same example for the same index.
local syn = kiln.data.source("synthetic", {length = 10, shape = {3}, num_classes = 4, seed = 7})
assert(#syn == 10)
local ex = syn:get(1)
assert(ex.input:shape()[1] == 3 and ex.target:dtype() == "i64")
assert(ex.target:item() >= 0 and ex.target:item() < 4)
assert(syn:get(1).input:totable()[2] == ex.input:totable()[2])
expect_error(function() syn:get(11) end, "expected an index in 1 .. 10")
expect_error(function() syn:get(0) end, "expected an index in 1 .. 10")
expect_error(function() kiln.data.source("synthetic", {length = -1, shape = {3}}) end, "length")

-- Tensors: example i is row i.
local inputs, labels = {}, {}
for i = 0, 9 do
  inputs[#inputs + 1] = {i}
  labels[#labels + 1] = i % 2
end
local src = kiln.data.source("tensors", {input = kiln.tensor(inputs), target = kiln.tensor(labels, {dtype = "i64"})})
assert(#src == 10)
assert(src:get(4).input:totable()[1] == 3 and src:get(4).target:item() == 1)

-- CSV, written here.
local path = os.tmpname()
local file = assert(io.open(path, "w"))
file:write("a,b,label\n1,2,0\n3,4,1\n5,6,2\n")
file:close()
local csv = kiln.data.source("csv", {path = path})
assert(#csv == 3)
assert(csv:get(2).input:totable()[2] == 4 and csv:get(3).target:item() == 2)
os.remove(path)
expect_error(function() kiln.data.source("csv", {path = path}) end, path)

-- Transforms.
local normalize = kiln.data.transform("normalize", {mean = 0.5, std = {0.5}})
local out = normalize:apply({input = kiln.tensor({{1, 0}}), target = kiln.tensor(1, {dtype = "i64"})}, 0)
assert(out.input:totable()[1][1] == 1 and out.input:totable()[1][2] == -1 and out.target:item() == 1)
local one_hot = kiln.data.transform("one_hot", {num_classes = 3})
local hot = one_hot:apply({target = kiln.tensor(2, {dtype = "i64"})}).target:totable()
assert(hot[1] == 0 and hot[2] == 0 and hot[3] == 1)
expect_error(function() one_hot:apply({target = 3}) end, "expected a tensor")
expect_error(function() kiln.data.transform("no_such_transform", {}) end, "no_such_transform")

-- Loaders: every example exactly once per epoch, in batches of the asked size.
local function epoch_values(loader, epoch)
  local values, shapes = {}, {}
  for batch in loader:epoch(epoch) do
    shapes[#shapes + 1] = batch.input:shape()[1]
    assert(batch.target:shape()[1] == shapes[#shapes])
    for _, row in ipairs(batch.input:totable()) do values[#values + 1] = row[1] end
  end
  return values, shapes
end

local loader = kiln.data.loader(src, {batch_size = 4, shuffle = true, seed = 1})
assert(#loader == 3 and loader:examples() == 10)
local order, shapes = epoch_values(loader, 0)
assert(#shapes == 3 and shapes[1] == 4 and shapes[2] == 4 and shapes[3] == 2)
local seen = {}
for _, v in ipairs(order) do
  assert(not seen[v], "example " .. v .. " came twice in one epoch")
  seen[v] = true
end
assert(#order == 10)
assert(loader:stats().batches == 3)

-- The same seed and epoch give the same order, with or without workers.
local workers = kiln.data.loader(src, {batch_size = 4, shuffle = true, seed = 1, workers = 2, prefetch = 4})
local again = epoch_values(workers, 0)
assert(table.concat(again, ",") == table.concat(order, ","), "orders differ between 0 and 2 workers")
local other_epoch = epoch_values(loader, 1)
assert(table.concat(other_epoch, ",") ~= table.concat(order, ","), "epochs 0 and 1 have the same order")

-- drop_last, sharding and transforms in the loader.
assert(#kiln.data.loader(src, {batch_size = 4, drop_last = true}) == 2)
local shard = kiln.data.loader(src, {batch_size = 10, rank = 1, world_size = 2})
assert(shard:examples() == 5)
local hot_loader = kiln.data.loader(src, {batch_size = 10, transforms = {one_hot}})
for batch in hot_loader:epoch(0) do
  local shape = batch.target:shape()
  assert(shape[1] == 10 and shape[2] == 3)
end
expect_error(function() kiln.data.loader(src, {batch_sise = 4}) end, "unknown option 'batch_sise'")
expect_error(function() kiln.data.loader(src, {transforms = {5}}) end, "transforms[1] is a number")
expect_error(function() loader:epoch(-1) end, "epochs are numbered from 0")
