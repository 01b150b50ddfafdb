-- One SGD step of a small MLP (4 -> 8 -> 3): forward, loss, backward and
-- update, for the profiling options of kiln run.
local kiln = require("kiln")
kiln.manual_seed(1)
local model = kiln.nn.Sequential{kiln.nn.Linear(4, 8), kiln.nn.ReLU(), kiln.nn.Linear(8, 3)}
local opt = kiln.optim.SGD(model:parameters(), {lr = 0.1})
local loss = kiln.nn.CrossEntropyLoss()(model(kiln.randn({5, 4})), kiln.tensor({0, 1, 2, 0, 1}, {dtype = "i64"}))
loss:backward()
opt:step()
print("step done")
