-- Two epochs of kiln.fit on a small synthetic problem, quietly: for kiln
-- run --report.
local kiln = require("kiln")
kiln.manual_seed(1)
local src = kiln.data.source("synthetic", {length = 64, shape = {8}, num_classes = 3, seed = 5})
local model = kiln.nn.Sequential{kiln.nn.Linear(8, 16), kiln.nn.ReLU(), kiln.nn.Linear(16, 3)}
kiln.fit{
  model = model, optimizer = kiln.optim.SGD(model:parameters(), {lr = 0.1}),
  train = kiln.data.loader(src, {batch_size = 16}), epochs = 2, progress = "quiet",
}
print("fit done")
