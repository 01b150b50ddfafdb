-- kiln.fit with strategy = "zero1" in a job of 2 ranks: the ranks start
-- from different weights and end with the same ones, the loss falls, each
-- rank keeps the optimizer state of about half the parameters, and the
-- checkpoint rank 0 writes holds the state of all of them.
local kiln = require("kiln")
local dist = kiln.dist
local rank = dist.rank()
kiln.manual_seed(100 + rank) -- different initial weights: zero1 must broadcast rank 0's

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

-- Two layers of 16 x 16 weights: one for each rank.
local model = kiln.nn.Sequential{kiln.nn.Linear(2, 16), kiln.nn.ReLU(), kiln.nn.Linear(16, 16), kiln.nn.ReLU(),
                                 kiln.nn.Linear(16, 16), kiln.nn.ReLU(), kiln.nn.Linear(16, 2)}
local opt = kiln.optim.AdamW(model:parameters(), {lr = 0.02})
-- The job's port tells this job's checkpoint from another's.
local checkpoint = string.format("/tmp/kiln-fit-zero1-%s.safetensors", os.getenv("MASTER_PORT"))
local losses = {}
kiln.fit{model = model, optimizer = opt, train = train, epochs = 5, progress = "quiet", strategy = "zero1",
         strategy_options = {bucket_mb = 0.0001}, checkpoint = checkpoint,
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

-- Each rank keeps Adam's two moments of its share of the parameters only.
local function moment_elements(entries)
  local n = 0
  for name, t in pairs(entries) do
    if not name:match("step$") then n = n + t:numel() end
  end
  return n
end
local total = 0
for _, p in pairs(model:parameters()) do total = total + 2 * p:numel() end
local mine = moment_elements(opt:state())
local both = kiln.tensor({mine, 0}, {dtype = "i64"})
dist.all_reduce(both, "sum")
assert(both:totable()[1] == total, string.format("the ranks keep %d moment elements together, the model needs %d",
  both:totable()[1], total))
assert(mine < 0.6 * total, string.format("rank %d keeps %d of %d moment elements", rank, mine, total))

-- The checkpoint holds the whole state, as one process would write it.
dist.barrier()
local saved = 0
for name, t in pairs(kiln.load(checkpoint)) do
  if name:match("^optimizer%.") and not name:match("step$") then saved = saved + t:numel() end
end
assert(saved == total, string.format("the checkpoint holds %d moment elements, the model needs %d", saved, total))
dist.barrier()
if rank == 0 then os.remove(checkpoint) end
print(string.format("rank %d: zero1 trained the same model on both ranks (loss %.3f -> %.3f), keeping %d of %d "
  .. "moment elements", rank, losses[1], losses[#losses], mine, total))
