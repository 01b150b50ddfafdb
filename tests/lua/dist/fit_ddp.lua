-- kiln.fit with strategy = "ddp" in a job of 2 ranks: each rank trains on
-- its shard (shard = true), the ranks start from different weights (other
-- seeds) and end with the same ones, and the loss falls.
local kiln = require("kiln")
local dist = kiln.dist
local rank = dist.rank()
kiln.manual_seed(100 + rank) -- different initial weights: ddp must broadcast rank 0's

-- Points in [-1, 1]^2, class 1 when x > y; the same on both ranks.
math.randomseed(7)
local inputs, labels = {}, {}
for _ = 1, 256 do
  local x, y = math.random() * 2 - 1, math.random() * 2 - 1
  inputs[#inputs + 1] = {x, y}
  labels[#labels + 1] = x > y and 1 or 0
end
local src = kiln.data.source("tensors", {input = kiln.tensor(inputs), target = kiln.tensor(labels, {dtype = "i64"})})
local train = kiln.data.loader(src, {batch_size = 16, shuffle = true, seed = 3, shard = true})
assert(train:examples() == 128, "each rank's shard holds half of the 256 examples")

local model = kiln.nn.Sequential{kiln.nn.Linear(2, 16), kiln.nn.ReLU(), kiln.nn.Linear(16, 2)}
local opt = kiln.optim.AdamW(model:parameters(), {lr = 0.02})
local losses = {}
kiln.fit{model = model, optimizer = opt, train = train, epochs = 5, progress = "quiet", strategy = "ddp",
         strategy_options = {bucket_mb = 0.0001}, -- a bucket per parameter: several all-reduces overlap backward
         on_step = function(m) losses[#losses + 1] = m.loss end}
assert(#losses == 40, "8 steps per epoch for 5 epochs, got " .. #losses)
assert(losses[#losses] < 0.5 * losses[1], string.format("the loss fell from %g to %g", losses[1], losses[#losses]))

-- The ranks hold the same parameters: gather them and compare.
for name, p in pairs(model:parameters()) do
  local n = p:numel()
  local both = kiln.zeros({2 * n})
  dist.all_gather(p:reshape({n}), both)
  local values = both:totable()
  for i = 1, n do
    assert(values[i] == values[n + i], string.format("%s[%d] is %g on rank 0 and %g on rank 1", tostring(name), i,
      values[i], values[n + i]))
  end
end
print(string.format("rank %d: ddp trained the same model on both ranks (loss %.3f -> %.3f)", rank, losses[1],
  losses[#losses]))
