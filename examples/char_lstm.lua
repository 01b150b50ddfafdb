-- A small character-level language model with a 2-layer LSTM, trained on
-- the same text, windows, batches, optimizer and schedule as
-- char_transformer.lua, so that the two losses can be compared step for
-- step. At the end the model continues a prompt, one character at a time.
--
--   kiln run examples/char_lstm.lua [epochs] [text file]
--
-- Compared with char_transformer.lua at its defaults (30 epochs, 540 steps;
-- both run with `kiln run --threads 1`, loss of the batch at each logged
-- step, one run each):
--
--   step          50    150   250   400   500
--   LSTM        2.65   1.65  1.22  0.92  0.86
--   transformer 2.16   1.71  1.41  0.76  0.64
--
-- The LSTM starts slower, is ahead in the middle of the run and ends behind
-- the transformer (0.86 against 0.64 near the end); its greedy sample
-- repeats a few words. Single noisy batches on a 2,350-character text: a
-- rough comparison, not a benchmark.
local kiln = require("kiln")

local folder = arg[0]:match("^(.*)/[^/]*$") or "."
local setup = dofile(folder .. "/char_text_setup.lua")
local epochs = tonumber(arg[1] or "30")
local path = arg[2] or (folder .. "/" .. setup.default_text)
local context = 48 -- characters the model sees at once
local embed_dim, hidden, layers = 64, 64, 2

kiln.manual_seed(1)

-- Windows of `context` characters every 8 (overlapping), 16 to a batch.
local data = setup.load(path, context, 8, 16)
local vocabulary = #data.chars

-- Embedding, the LSTM (batch first: [B, T, E] -> [B, T, H]) and the output
-- layer, whose [B, T, V] scores are turned to [B, V, T] as cross_entropy
-- takes them. The LSTM gives three outputs (output, h_n, c_n); a Graph
-- passes on output 0 alone ("lstm" is "lstm:0"), where a Sequential would
-- hand all three to the next layer.
local nn = kiln.nn
local model = nn.Graph {
  inputs = { "x" },
  nodes = {
    { "embed", nn.Embedding(vocabulary, embed_dim), { "x" } },
    { "lstm", nn.LSTM(embed_dim, hidden, layers, { batch_first = true }), { "embed" } },
    { "head", nn.Linear(hidden, vocabulary), { "lstm:0" } },
    { "scores", nn.op("permute", { dims = { 0, 2, 1 } }), { "head" } },
  },
}

local steps = epochs * #data.train
local optimizer = kiln.optim.AdamW(model:parameters(), { lr = 3e-3, weight_decay = 1e-2 })
local schedule = kiln.optim.schedule("warmup_cosine", { warmup_steps = math.min(50, steps // 4), total_steps = steps })
print(string.format("text: %d characters, vocabulary %d, %d windows of %d", #data.text, vocabulary, data.windows,
  context))
print(string.format("model: %d-layer LSTM, hidden %d, embedding %d; AdamW lr 3e-3, warmup_cosine over %d steps",
  layers, hidden, embed_dim, steps))

kiln.fit {
  model = model, loss = "cross_entropy", optimizer = optimizer, schedule = schedule,
  train = data.train, epochs = epochs, progress = "lines", log_every = 50,
}

-- Greedy continuation: the most likely next character, again and again.
print("sample: " .. setup.continue(model, data, "the potter ", 80, context))
