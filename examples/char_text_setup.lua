-- What the character-level scripts (char_transformer.lua, char_lstm.lua)
-- share: the text as windows of character indices, and greedy continuation
-- of a prompt. Loaded with
--   local setup = dofile(<folder of this file> .. "/char_text_setup.lua")
local kiln = require("kiln")

local setup = {}

setup.default_text = "data/kiln_notes.txt" -- beside this file

-- Reads the text at `path` and cuts it into windows of `context`
-- characters every `stride` (overlapping); the target of each position is
-- the character after it. Returns a table: text, chars (the vocabulary,
-- every character of the text in a fixed order), index_of (character ->
-- index from 0), windows (their count) and train (a shuffled loader of
-- `batch_size` windows: input and target, i64 [batch, context]).
function setup.load(path, context, stride, batch_size)
  local file = assert(io.open(path, "r"))
  local text = file:read("a")
  file:close()

  local chars, index_of = {}, {}
  for c in text:gmatch(".") do
    if not index_of[c] then
      chars[#chars + 1] = c
      index_of[c] = true
    end
  end
  table.sort(chars)
  for i, c in ipairs(chars) do index_of[c] = i - 1 end

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
  return {
    text = text, chars = chars, index_of = index_of, windows = #inputs,
    train = kiln.data.loader(source, { batch_size = batch_size, shuffle = true, seed = 1 }),
  }
end

-- `prompt` followed by `count` characters, each the one `model` scores
-- highest after the last `context` characters. model: i64 [1, T] -> scores
-- [1, V, T].
function setup.continue(model, data, prompt, count, context)
  local generated = prompt
  model:eval()
  kiln.no_grad(function()
    for _ = 1, count do
      local window = {}
      for c in generated:sub(-context):gmatch(".") do window[#window + 1] = data.index_of[c] end
      local scores = model(kiln.tensor({ window }, { dtype = "i64" }))
      local next_index = scores:argmax(1):totable()[1][#window]
      generated = generated .. data.chars[next_index + 1]
    end
  end)
  return generated
end

return setup
