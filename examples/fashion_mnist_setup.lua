-- What the Fashion-MNIST scripts share: the data with its transforms, the
-- classic convolutional network, and the per-epoch report. Loaded with
--   local setup = dofile(<folder of this file> .. "/fashion_mnist_setup.lua")
local setup = {}

setup.default_folder = "/usr/share/datasets/fashion-mnist"
setup.files = { "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz" }

-- The first of `setup.files` missing from `folder`, or nil when all are there.
function setup.missing_file(folder)
  for _, name in ipairs(setup.files) do
    local f = io.open(folder .. "/" .. name, "rb")
    if not f then return folder .. "/" .. name end
    f:close()
  end
  return nil
end

-- Training and test loaders. options: folder (nil or empty: the default
-- one), batch_size, limit (first training images only; nil: all 60,000),
-- augment (random shifts of up to two pixels and mirroring; worth about a
-- point of test accuracy late in training), device (where the batches go;
-- nil: cpu), shard (each process of a data-parallel job trains on its own
-- part of the training images).
function setup.loaders(kiln, options)
  local folder = (options.folder or "") ~= "" and options.folder or setup.default_folder
  local function source(name, limit)
    return kiln.data.source("idx", {
      images = folder .. "/" .. name .. "-images-idx3-ubyte.gz",
      labels = folder .. "/" .. name .. "-labels-idx1-ubyte.gz",
      limit = limit or 0,
    })
  end
  -- Pixels to [0, 1], then zero mean and unit variance (the training set's statistics).
  local to_float = kiln.data.transform("to_float", { scale = 1 / 255 })
  local normalize = kiln.data.transform("normalize", { mean = { 0.2860 }, std = { 0.3530 } })
  local train_transforms = { to_float, normalize }
  if options.augment then
    train_transforms[#train_transforms + 1] = kiln.data.transform("random_crop", { size = { 28 }, padding = 2 })
    train_transforms[#train_transforms + 1] = kiln.data.transform("random_hflip", {})
  end
  local train = kiln.data.loader(source("train", options.limit), {
    batch_size = options.batch_size, shuffle = true, seed = 1, workers = options.workers or 2, transforms = train_transforms,
    device = options.device, shard = options.shard,
  })
  local test = kiln.data.loader(source("t10k"), {
    batch_size = 1000, workers = 2, transforms = { to_float, normalize }, device = options.device,
  })
  return train, test
end

-- Two 5x5 convolutions with max pooling, then two fully connected layers.
-- The images come as [N, 28, 28]; the first op gives them their one channel.
-- Each pooling comes before its ReLU, as in PyTorch's MNIST example: the
-- same function and gradients as the other order (the largest of a window
-- is positive exactly when the largest of its ReLUs is), with the ReLU and
-- its backward on a quarter of the values.
function setup.classic_network(kiln)
  local nn = kiln.nn
  return nn.Sequential {
    nn.op("reshape", { shape = { -1, 1, 28, 28 } }),
    nn.Conv2d(1, 32, 5, { padding = 2 }), nn.MaxPool2d(2), nn.ReLU(),
    nn.Conv2d(32, 64, 5, { padding = 2 }), nn.MaxPool2d(2), nn.ReLU(),
    nn.Flatten(),
    nn.Linear(3136, 1024), nn.ReLU(),
    nn.Linear(1024, 10),
  }
end

-- kiln.fit callbacks that print, after each epoch, the test accuracy (the
-- trainer evaluates before it calls on_epoch), then the epoch's wall-clock
-- seconds, evaluation included (os.time counts whole seconds: enough for
-- epochs of several seconds), and the training samples/s. accuracies[i] is
-- epoch i's (the trainer numbers epochs from 0; people from 1). `say`
-- prints a line (default: print).
function setup.epoch_report(say)
  say = say or print
  local accuracies = {}
  local started = os.time()
  local callbacks = {
    on_eval = function(m)
      accuracies[#accuracies + 1] = m.accuracy
      say(string.format("epoch %d: test accuracy %.4f, test loss %.4f (evaluated in %.1f s)", #accuracies,
        m.accuracy, m.loss, m.seconds))
    end,
    on_epoch = function(epoch, m)
      say(string.format("epoch %d: %d s with its evaluation, %.0f samples/s in training", epoch + 1,
        os.time() - started, m.samples_per_second))
      started = os.time()
    end,
  }
  return callbacks, accuracies
end

return setup
