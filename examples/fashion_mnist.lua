-- Fashion-MNIST with the classic two-convolution network: above 91% test
-- accuracy in 10 epochs on a CPU.
--
--   kiln run examples/fashion_mnist.lua [epochs] [data folder] [device]
--
-- The data is Debian's dataset-fashion-mnist (tools/install-deps installs it);
-- an empty data folder means that one. The device is cpu (the default) or
-- cuda:N.
local kiln = require("kiln")
local setup = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/fashion_mnist_setup.lua")

local epochs = tonumber(arg[1] or "10")
local batch_size = 64
local base_lr = 0.05
local device = arg[3] or "cpu"

kiln.manual_seed(1)
local train, test = setup.loaders(kiln, { folder = arg[2], batch_size = batch_size, augment = true,
  device = device })
local model = setup.classic_network(kiln):to(device)

local total_steps = epochs * #train
local warmup_steps = math.min(300, total_steps // 2)
local optimizer = kiln.optim.SGD(model:parameters(),
  { lr = base_lr, momentum = 0.9, nesterov = true, weight_decay = 5e-4 })
local schedule = kiln.optim.schedule("warmup_cosine", { warmup_steps = warmup_steps, total_steps = total_steps })

print(tostring(model))
print(string.format("optimizer: SGD, lr %g, momentum 0.9 (Nesterov), weight decay 5e-4, batch %d, on %s",
  base_lr, batch_size, device))
print(string.format("schedule: warmup_cosine, %d warm-up steps, %d steps in all (%d epochs)", warmup_steps,
  total_steps, epochs))
print("augmentation: random_crop 28 with padding 2, random_hflip; normalize mean 0.2860, std 0.3530")

local report, accuracies = setup.epoch_report()
kiln.fit {
  model = model, loss = "cross_entropy", optimizer = optimizer, schedule = schedule,
  train = train, validation = test, epochs = epochs,
  progress = "lines", log_every = 200,
  on_epoch = report.on_epoch, on_eval = report.on_eval,
}
print(string.format("final test accuracy: %.4f", accuracies[#accuracies]))
