-- The models of the CPU comparison suite, kiln's side (bench/suite/models.py is
-- PyTorch's): each entry builds the network and its optimizer, and says the
-- batch, the shape of one synthetic example and of its target, and how many
-- units (samples, or tokens for the transformer) one example counts for.
-- build(kiln.nn, kiln) returns the network.
-- Loaded by bench/suite/kiln_train.lua with dofile.
local models = {}
local setup = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../../examples/fashion_mnist_setup.lua")

local function sgd(kiln, model) return kiln.optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 }) end
local function adam(kiln, model) return kiln.optim.Adam(model:parameters(), { lr = 1e-3 }) end
local function adamw(kiln, model) return kiln.optim.AdamW(model:parameters(), { lr = 1e-3, weight_decay = 1e-2 }) end

local function image_classifier(batch, shape, optimizer, build)
  return { batch = batch, input = shape, classes = 10, optimizer = optimizer, build = build, unit = "samples" }
end

-- The network of examples/fashion_mnist.lua (bench/fashion_mnist_train.lua's).
models.fashion_cnn = image_classifier(64, { 1, 28, 28 }, sgd, function(_, kiln)
  return setup.classic_network(kiln)
end)

models.small_cnn = image_classifier(64, { 1, 28, 28 }, sgd, function(nn)
  return nn.Sequential {
    nn.Conv2d(1, 10, 5), nn.MaxPool2d(2), nn.ReLU(),
    nn.Conv2d(10, 20, 5), nn.MaxPool2d(2), nn.ReLU(),
    nn.Flatten(), nn.Linear(320, 50), nn.ReLU(), nn.Linear(50, 10),
  }
end)

models.mlp = image_classifier(128, { 784 }, adam, function(nn)
  return nn.Sequential { nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10) }
end)

models.separable_cnn = image_classifier(128, { 1, 28, 28 }, adamw, function(nn)
  return nn.Sequential {
    nn.Conv2d(1, 16, 3, { padding = 1 }), nn.BatchNorm2d(16), nn.ReLU(),
    nn.DepthwiseSeparableConv2d(16, 32, 3, { padding = 1 }), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.DepthwiseSeparableConv2d(32, 64, 3, { padding = 1 }), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, 10),
  }
end)

-- Character transformer: 64 tokens of a 65-character vocabulary per example;
-- the scores [B, T, V] turn to [B, V, T], as cross_entropy takes them.
models.char_transformer = {
  batch = 32, input = { 64 }, vocabulary = 65, classes = 65, target = { 64 }, optimizer = adamw, unit = "tokens",
  build = function(nn)
    local model = nn.Sequential { nn.Embedding(65, 128) }
    for _ = 1, 2 do model:add(nn.TransformerBlock(128, 4, { causal = true })) end
    model:add(nn.LayerNorm({ 128 }))
    model:add(nn.Linear(128, 65))
    model:add(nn.op("permute", { dims = { 0, 2, 1 } }))
    return model
  end,
}

-- examples/char_lstm.lua's network on the transformer's data: embedding,
-- a 2-layer LSTM of width 64, the output layer, scores as [B, V, T].
models.char_lstm = {
  batch = 32, input = { 64 }, vocabulary = 65, classes = 65, target = { 64 }, optimizer = adamw, unit = "tokens",
  build = function(nn)
    return nn.Graph {
      inputs = { "x" },
      nodes = {
        { "embed", nn.Embedding(65, 64), { "x" } },
        { "lstm", nn.LSTM(64, 64, 2, { batch_first = true }), { "embed" } },
        { "head", nn.Linear(64, 65), { "lstm:0" } },
        { "scores", nn.op("permute", { dims = { 0, 2, 1 } }), { "head" } },
      },
    }
  end,
}

-- ResNet-18's basic block: two 3x3 convolutions with batch norm, and the
-- input added back (through a strided 1x1 convolution when the shape changes).
local function basic_block(nn, from, to, stride)
  local nodes = {
    { "conv1", nn.Conv2d(from, to, 3, { stride = stride, padding = 1, bias = false }), { "x" } },
    { "bn1", nn.BatchNorm2d(to), { "conv1" } },
    { "relu1", nn.ReLU(), { "bn1" } },
    { "conv2", nn.Conv2d(to, to, 3, { padding = 1, bias = false }), { "relu1" } },
    { "bn2", nn.BatchNorm2d(to), { "conv2" } },
  }
  local shortcut = "x"
  if stride ~= 1 or from ~= to then
    nodes[#nodes + 1] = { "shortcut_conv", nn.Conv2d(from, to, 1, { stride = stride, bias = false }), { "x" } }
    nodes[#nodes + 1] = { "shortcut_bn", nn.BatchNorm2d(to), { "shortcut_conv" } }
    shortcut = "shortcut_bn"
  end
  nodes[#nodes + 1] = { "sum", nn.op("add"), { "bn2", shortcut } }
  nodes[#nodes + 1] = { "out", nn.ReLU(), { "sum" } }
  return nn.Graph { inputs = { "x" }, nodes = nodes, outputs = { "out" } }
end

-- ResNet-18 for 32x32 images: a 3x3 stem without max-pooling.
models.resnet18 = image_classifier(32, { 3, 32, 32 }, sgd, function(nn)
  local model = nn.Sequential {
    nn.Conv2d(3, 64, 3, { padding = 1, bias = false }), nn.BatchNorm2d(64), nn.ReLU(),
  }
  local channels = 64
  for _, width in ipairs { 64, 128, 256, 512 } do
    model:add(basic_block(nn, channels, width, width == channels and 1 or 2))
    model:add(basic_block(nn, width, width, 1))
    channels = width
  end
  model:add(nn.AdaptiveAvgPool2d(1))
  model:add(nn.Flatten())
  model:add(nn.Linear(512, 10))
  return model
end)

models.order = { "fashion_cnn", "small_cnn", "mlp", "char_transformer", "char_lstm", "separable_cnn", "resnet18" }
return models
