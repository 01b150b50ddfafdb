-- A small character-level transformer trained on a few paragraphs of text:
-- the loss falls from about ln(vocabulary) toward 1, and at the end the model
-- continues a prompt, one character at a time.
--
--   kiln run examples/char_transformer.lua [epochs] [text file]
local kiln = require("kiln")

local epochs = tonumber(arg[1] or "30")
local path = arg[2] or ((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/data/kiln_notes.txt")
local context = 48 -- characters the model sees at once
local embed_dim, heads, blocks = 64, 4, 2

kiln.manual_seed(1)

local file = assert(io.open(path, "r"))
local text = file:read("a")
file:close()

-- The vocabulary: every character of the text, in a fixed order.
local chars, index_of = {}, {}
for c in text:gmatch(".") do
  if not index_of[c] then
    chars[#chars + 1] = c
    index_of[c] = true
  end
end
table.sort(chars)
for i, c in ipairs(chars) do index_of[c] = i - 1 end
local vocabulary = #chars

-- Windows of `context` characters every `stride` (overlapping); the target
-- of each position is the character after it.
local stride = 8
local inputs, targets = {}, {}
for start = 1, #text - context, stride do
  local x, y = {}, {}
  for t = 0, context - 1 do
    x[t + 1] = index_of[text:sub(start + t, start + t)]
    y[t + 1] = index_of[text:sub(start + t + 1, start + t + 1)]
  end
  inputs[#inputs + 1], targets[#targets + 1] = x, y
end
local source = kiln.data.source("tensors", {
  input = kiln.tensor(inputs, { dtype = "i64" }), target = kiln.tensor(targets, { dtype = "i64" }),
})
local train = kiln.data.loader(source, { batch_size = 16, shuffle = true, seed = 1 })

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

local steps = epochs * #train
local optimizer = kiln.optim.AdamW(model:parameters(), { lr = 3e-3, weight_decay = 1e-2 })
local schedule = kiln.optim.schedule("warmup_cosine", { warmup_steps = math.min(50, steps // 4), total_steps = steps })
print(string.format("text: %d characters, vocabulary %d, %d windows of %d", #text, vocabulary, #inputs, context))
print(string.format("model: %d transformer blocks, %d heads, width %d; AdamW lr 3e-3, warmup_cosine over %d steps",
  blocks, heads, embed_dim, steps))

kiln.fit {
  model = model, loss = "cross_entropy", optimizer = optimizer, schedule = schedule,
  train = train, epochs = epochs, progress = "lines", log_every = 50,
}

-- Greedy continuation: the most likely next character, again and again.
model:eval()
local prompt = "the potter "
local generated = prompt
kiln.no_grad(function()
  for _ = 1, 80 do
    local window = {}
    local tail = generated:sub(-context)
    for c in tail:gmatch(".") do window[#window + 1] = index_of[c] end
    local scores = model(kiln.tensor({ window }, { dtype = "i64" })) -- [1, V, T]
    local next_index = scores:argmax(1):totable()[1][#window]
    generated = generated .. chars[next_index + 1]
  end
end)
print("sample: " .. generated)
