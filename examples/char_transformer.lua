-- A small character-level transformer trained on a few paragraphs of text:
-- the loss falls from about ln(vocabulary) toward 1, and at the end the model
-- continues a prompt, one character at a time.
--
--   kiln run examples/char_transformer.lua [epochs] [text file] [precision]
--
-- The precision is f32 (the default), or bf16 or f16 (autocast).
local kiln = require("kiln")

local folder = arg[0]:match("^(.*)/[^/]*$") or "."
local setup = dofile(folder .. "/char_text_setup.lua")
local epochs = tonumber(arg[1] or "30")
local path = (arg[2] or "") ~= "" and arg[2] or (folder .. "/" .. setup.default_text)
local precision = (arg[3] or "") ~= "" and arg[3] or "f32"
local context = 48 -- characters the model sees at once
local embed_dim, heads, blocks = 64, 4, 2

kiln.manual_seed(1)

-- Windows of `context` characters every 8 (overlapping), 16 to a batch.
local data = setup.load(path, context, 8, 16)
local vocabulary = #data.chars

-- Embedding, causal transformer blocks, a final LayerNorm and the output
-- layer, whose [B, T, V] scores are turned to [B, V, T] as cross_entropy
-- takes them. There is no position embedding: with causal attention a
-- position already tells how many characters precede it, which is enough
-- for a model this small.
local nn = kiln.nn
local model = nn.Sequential { nn.Embedding(vocabulary, embed_dim) }
for _ = 1, blocks do model:add(nn.TransformerBlock(embed_dim, heads, { causal = true })) end
model:add(nn.LayerNorm({ embed_dim }))
model:add(nn.Linear(embed_dim, vocabulary))
model:add(nn.op("permute", { dims = { 0, 2, 1 } }))

local steps = epochs * #data.train
local optimizer = kiln.optim.AdamW(model:parameters(), { lr = 3e-3, weight_decay = 1e-2 })
local schedule = kiln.optim.schedule("warmup_cosine", { warmup_steps = math.min(50, steps // 4), total_steps = steps })
print(string.format("text: %d characters, vocabulary %d, %d windows of %d", #data.text, vocabulary, data.windows,
  context))
print(string.format("model: %d transformer blocks, %d heads, width %d; AdamW lr 3e-3, warmup_cosine over %d steps; %s",
  blocks, heads, embed_dim, steps, precision))

kiln.fit {
  model = model, loss = "cross_entropy", optimizer = optimizer, schedule = schedule,
  train = data.train, epochs = epochs, progress = "lines", log_every = 50, precision = precision,
}

-- Greedy continuation: the most likely next character, again and again.
print("sample: " .. setup.continue(model, data, "the potter ", 80, context))
