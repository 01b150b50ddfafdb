-- kiln.memory and kiln.find_batch_size: statistics, the peak reset and the
-- CPU cache, an estimate whose parts are exact where they can be
-- (parameters, gradients, Adam's two tensors per parameter), trials that
-- leave nothing behind, the search under a limit and under a hard CPU cap,
-- and the errors.
local kiln = require("kiln")
local expect = require("expect")

local model = kiln.nn.Sequential{kiln.nn.Linear(16, 64), kiln.nn.ReLU(), kiln.nn.Dropout(0.5), kiln.nn.Linear(64, 4)}
local param_bytes = (16 * 64 + 64 + 64 * 4 + 4) * 4
local adam = kiln.optim.Adam(model:parameters(), {lr = 0.01})

local before = kiln.memory.stats("cpu")
assert(math.type(before.current_bytes) == "integer" and before.peak_bytes >= before.current_bytes)
kiln.memory.reset_peak()
assert(kiln.memory.stats().peak_bytes == kiln.memory.stats().current_bytes)

-- A freed block of 32 KiB or more is kept for the next request of its size;
-- empty_cache gives it back.
kiln.memory.empty_cache("cpu")
local block = kiln.zeros({1 << 16})
block = nil
collectgarbage()
assert(block == nil and kiln.memory.stats().cached_free_bytes == 1 << 18, kiln.memory.stats().cached_free_bytes)
kiln.zeros({1 << 16})
assert(kiln.memory.stats().cached_free_bytes == 0, "the cached block served the request")
collectgarbage()
kiln.memory.empty_cache()
assert(kiln.memory.stats().cached_free_bytes == 0 and kiln.memory.stats().current_bytes == before.current_bytes)

-- The collector is paced by the tensors' memory, not their small handles:
-- 300 results of 1 MiB each, dropped at once, are not all held until the end.
local x = kiln.randn({512, 512})
local highest = 0
for _ = 1, 300 do
  local _ = x + x
  highest = math.max(highest, kiln.memory.stats().current_bytes - before.current_bytes)
end
assert(highest < 64 << 20, "tensors dropped in a loop piled up to " .. highest .. " bytes")
x = nil
collectgarbage()

local e = kiln.memory.estimate(model, {16}, {batch_size = 32, optimizer = adam})
assert(e.parameters == param_bytes and e.buffers == 0 and e.gradients == param_bytes, e.parameters)
assert(e.optimizer == 2 * param_bytes, "Adam keeps two tensors per parameter: " .. e.optimizer)
assert(e.activations >= 32 * (16 + 64) * 4, "activations " .. e.activations)
assert(e.total == e.parameters + e.buffers + e.gradients + e.optimizer + e.activations)
assert(kiln.memory.estimate(model, {16}).optimizer == 0)
assert(kiln.memory.estimate(model, {16}, {batch_size = 64}).activations > e.activations)
assert(kiln.memory.stats().current_bytes == before.current_bytes, "a trial leaves no memory behind")
assert(model:parameters()[1].grad == nil, "nor gradients")

-- Under a limit: the batch found has its peak within it.
local limit = before.current_bytes + 3 * param_bytes + 200 * (16 + 64 + 4) * 8
local n, info = kiln.find_batch_size{model = model, input_shape = {16}, optimizer = adam, limit_bytes = limit}
assert(n > 1 and info.peak_bytes <= limit and info.tries > 2, "batch " .. n)
assert(kiln.find_batch_size{model = model, input_shape = {16}, max_batch_size = 5} == 5)

-- Under a hard cap: out of memory during the tries is caught and cleaned
-- up; the batch found fits and the next does not.
kiln.memory.set_limit(before.current_bytes + 4 * param_bytes + 100 * 1024)
assert(kiln.memory.stats().limit_bytes > 0)
local capped = kiln.find_batch_size{model = model, input_shape = {16}, optimizer = adam}
assert(capped > 1 and kiln.memory.stats().current_bytes == before.current_bytes)
kiln.memory.estimate(model, {16}, {batch_size = capped, optimizer = adam})
expect.error(function() kiln.memory.estimate(model, {16}, {batch_size = capped + 1, optimizer = adam}) end,
             "out of memory", "over the cap of")
kiln.memory.set_limit(0)

expect.error(function() kiln.find_batch_size{model = model} end, "kiln.find_batch_size: input_shape")
expect.error(function() kiln.find_batch_size{model = model, input_shape = {16}, batch = 3} end, "batch")
expect.error(function() kiln.memory.estimate(model, {16}, {loss = "no_such_loss"}) end, "no_such_loss")
expect.error(function() kiln.memory.estimate(model, {"a"}) end, "entry 1 is not an integer")
expect.error(function() kiln.memory.set_limit(-5) end, "limit_bytes is -5")
