-- Fashion-MNIST with a 784-256-10 multi-layer perceptron: about 88% test
-- accuracy in 5 epochs, in seconds per epoch on a CPU.
--
--   kiln run examples/mlp.lua [epochs] [data folder]
local kiln = require("kiln")
local setup = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/fashion_mnist_setup.lua")

local epochs = tonumber(arg[1] or "5")

kiln.manual_seed(1)
local train, test = setup.loaders(kiln, { folder = arg[2], batch_size = 64 })
local nn = kiln.nn
local model = nn.Sequential { nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10) }
local optimizer = kiln.optim.AdamW(model:parameters(), { lr = 1e-3, weight_decay = 1e-2 })

print(tostring(model))
print(string.format("optimizer: AdamW, lr 1e-3, weight decay 1e-2, batch 64; %d epochs, no augmentation", epochs))

local report, accuracies = setup.epoch_report()
kiln.fit {
  model = model, loss = "cross_entropy", optimizer = optimizer,
  train = train, validation = test, epochs = epochs,
  progress = "lines", log_every = 300,
  on_epoch = report.on_epoch, on_eval = report.on_eval,
}
print(string.format("final test accuracy: %.4f", accuracies[#accuracies]))
