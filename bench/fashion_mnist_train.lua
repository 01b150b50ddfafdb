-- Training throughput of the Fashion-MNIST network of examples/fashion_mnist.lua,
-- measured the way bench/torch_fashion_mnist.py measures PyTorch: batch 64 (by default),
-- SGD (momentum 0.9, Nesterov, weight decay 5e-4), the median samples/s of
-- several windows of steps after a warm-up. The input comes through kiln's
-- loader (2 workers, normalised, no augmentation), as in training; the mean
-- wait per measured step for it is printed too: the host's for the loader,
-- and on a GPU the compute stream's for the input copies. The
-- batch size, the device (cpu or cuda:N), the data folder (an empty folder
-- means the default one) and the precision ("f32", or "bf16" / "f16": the
-- forward and loss under autocast) can be given after the windows. Started
-- by kiln launch it trains with ddp, each rank on its shard at the batch
-- given (per rank), and rank 0 prints the job's samples/s and the step time.
--
--   kiln run --threads 2 bench/fashion_mnist_train.lua [steps per window] [windows] [batch] [device] [folder] [precision]
--   kiln launch --nproc-per-node 2 --threads 1 bench/fashion_mnist_train.lua [steps per window] [windows] [batch]
local kiln = require("kiln")
local setup = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../examples/fashion_mnist_setup.lua")

local steps, windows, warmup = tonumber(arg[1] or "60"), tonumber(arg[2] or "5"), 5
local batch_size, device = tonumber(arg[3] or "64"), arg[4] or "cpu"
local precision = arg[6] or "f32"
local ranks = kiln.dist.world_size()
kiln.manual_seed(0)
local train = setup.loaders(kiln, { folder = arg[5], batch_size = batch_size, augment = false, device = device,
  shard = ranks > 1 })
local model = setup.classic_network(kiln):to(device)
local optimizer = kiln.optim.SGD(model:parameters(),
  { lr = 0.05, momentum = 0.9, nesterov = true, weight_decay = 5e-4 })

local rates, step_times, window_seconds, window_samples = {}, {}, 0, 0
local host_wait, device_wait = 0, 0
kiln.fit {
  model = model, loss = "cross_entropy", optimizer = optimizer, train = train,
  max_steps = warmup + steps * windows, progress = "quiet", precision = precision,
  strategy = ranks > 1 and "ddp" or nil,
  on_step = function(m)
    if m.step <= warmup then return end
    -- every rank takes a step of m.samples at once
    window_seconds, window_samples = window_seconds + m.step_seconds, window_samples + m.samples * ranks
    host_wait, device_wait = host_wait + m.input_wait_seconds, device_wait + m.device_input_wait_seconds
    if (m.step - warmup) % steps == 0 then
      rates[#rates + 1] = window_samples / window_seconds
      step_times[#step_times + 1] = 1000 * window_seconds / steps
      window_seconds, window_samples = 0, 0
    end
  end,
}
table.sort(rates)
table.sort(step_times)
if kiln.dist.rank() == 0 then
  print(string.format(
    "kiln %s on %s, %s, %d rank%s: train %.1f samples/s (median of %d windows of %d steps, batch %d per rank; " ..
    "min %.1f, max %.1f); step %.2f ms; input wait per step: host %.3f ms, device %.3f ms",
    kiln.version, device, precision, ranks, ranks == 1 and "" or "s", rates[(#rates + 1) // 2], #rates, steps,
    batch_size, rates[1], rates[#rates], step_times[(#step_times + 1) // 2], 1000 * host_wait / (steps * windows),
    1000 * device_wait / (steps * windows)))
end
