-- Fashion-MNIST with the classic two-convolution network: above 91% test
-- accuracy in 10 epochs on a CPU.
--
--   kiln run [--report] examples/fashion_mnist.lua [epochs] [data folder] [device] [strategy] [workers] [precision]
--   kiln launch --nproc-per-node 2 examples/fashion_mnist.lua [epochs]
--
-- The data is Debian's dataset-fashion-mnist (tools/install-deps installs it);
-- an empty data folder means that one. The device is cpu (the default) or
-- cuda:N. The strategy is "single" (one process) or "ddp" (data parallel);
-- started by kiln launch (or with RANK and WORLD_SIZE set), the default is
-- ddp. Each of the ranks takes 64 / ranks images per step, so the job
-- trains with the same batch of 64 as one process. The training batches
-- are made by 2 loader workers unless `workers` says otherwise (0: on the
-- training thread); --report prints where the time went and what to change.
-- The precision is f32 (the default), or bf16 or f16: the forward and the
-- loss under autocast, parameters and the optimizer in f32.
local kiln = require("kiln")
local setup = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/fashion_mnist_setup.lua")

local epochs = tonumber(arg[1] or "10")
local batch_size = 64
local base_lr = 0.05
local device = (arg[3] or "") ~= "" and arg[3] or "cpu"
local strategy = arg[4] or (kiln.dist.in_job() and "ddp" or "single")
local ranks = strategy == "ddp" and kiln.dist.world_size() or 1
local workers = tonumber(arg[5] or "") or 2
local precision = (arg[6] or "") ~= "" and arg[6] or "f32"
-- Only rank 0 prints; the others train quietly.
local print = kiln.dist.rank() == 0 and print or function() end

kiln.manual_seed(1)
local train, test = setup.loaders(kiln, { folder = arg[2], batch_size = batch_size // ranks, augment = true,
  device = device, shard = strategy == "ddp", workers = workers })
local model = setup.classic_network(kiln):to(device)

local total_steps = epochs * #train
local warmup_steps = math.min(300, total_steps // 2)
local optimizer = kiln.optim.SGD(model:parameters(),
  { lr = base_lr, momentum = 0.9, nesterov = true, weight_decay = 5e-4 })
local schedule = kiln.optim.schedule("warmup_cosine", { warmup_steps = warmup_steps, total_steps = total_steps })

print(tostring(model))
print(string.format("optimizer: SGD, lr %g, momentum 0.9 (Nesterov), weight decay 5e-4, batch %d, on %s in %s",
  base_lr, batch_size, device, precision))
print(string.format("strategy: %s over %d process%s (batch %d per process)", strategy, ranks,
  ranks == 1 and "" or "es", batch_size // ranks))
print(string.format("schedule: warmup_cosine, %d warm-up steps, %d steps in all (%d epochs)", warmup_steps,
  total_steps, epochs))
print("augmentation: random_crop 28 with padding 2, random_hflip; normalize mean 0.2860, std 0.3530")
print(string.format("loader: %d worker%s", workers, workers == 1 and "" or "s"))

local report, accuracies = setup.epoch_report(print)
kiln.fit {
  model = model, loss = "cross_entropy", optimizer = optimizer, schedule = schedule,
  train = train, validation = test, epochs = epochs,
  progress = "lines", log_every = 200,
  on_epoch = report.on_epoch, on_eval = report.on_eval, strategy = strategy, precision = precision,
}
print(string.format("final test accuracy: %.4f", accuracies[#accuracies]))
