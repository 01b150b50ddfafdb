-- The classic Fashion-MNIST network trained on the first 6,000 training
-- images must reach 80% accuracy on the 10,000 test images. Exits with 77
-- (skipped) when the dataset is not installed.
--
--   kiln run fashion_mnist_subset.lua <examples folder> [epochs]
local kiln = require("kiln")
local setup = dofile(arg[1] .. "/fashion_mnist_setup.lua")
local epochs = tonumber(arg[2] or "3")
local required_accuracy = 0.80

local missing = setup.missing_file(setup.default_folder)
if missing then
  print("skipped: " .. missing .. " is missing (tools/install-deps installs dataset-fashion-mnist)")
  os.exit(77)
end

kiln.manual_seed(1)
local train, test = setup.loaders(kiln, { batch_size = 64, limit = 6000 })
local model = setup.classic_network(kiln)
local total_steps = epochs * #train
local optimizer = kiln.optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9, nesterov = true })
local schedule = kiln.optim.schedule("warmup_cosine", { warmup_steps = total_steps // 10, total_steps = total_steps })

-- One evaluation, after the last step: the 10,000 test images take as long
-- as an epoch of training here.
local report = setup.epoch_report()
local result = kiln.fit {
  model = model, loss = "cross_entropy", optimizer = optimizer, schedule = schedule,
  train = train, validation = test, eval_every = total_steps, epochs = epochs,
  progress = "lines", log_every = 50, on_epoch = report.on_epoch,
}
print(string.format("test accuracy after %d epochs on 6,000 images: %.4f (%d test examples)", epochs,
  result.accuracy, result.samples))
assert(result.samples == 10000, "evaluated " .. result.samples .. " test examples; expected 10000")
assert(result.accuracy >= required_accuracy, string.format("test accuracy %.4f is below %.2f", result.accuracy,
  required_accuracy))
