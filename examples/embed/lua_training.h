/* The Lua training snippet both hosts run from a C string: a small MLP
 * fitted with kiln.fit on points of a grid, checking that its loss falls.
 * It needs nothing a sandboxed script lacks. */
#ifndef KILN_EXAMPLE_LUA_TRAINING_H
#define KILN_EXAMPLE_LUA_TRAINING_H

static const char* const kLuaTraining =
    "local kiln = require('kiln')\n"
    "local inputs, labels = {}, {}\n"
    "for i = 0, 63 do\n"
    "  local x, y = (i % 8) / 3.5 - 1, (i // 8) / 3.5 - 1\n"
    "  inputs[#inputs + 1] = {x, y}\n"
    "  labels[#labels + 1] = (x + y > 0) and 1 or 0\n"
    "end\n"
    "local source = kiln.data.source('tensors', {input = kiln.tensor(inputs),\n"
    "                                            target = kiln.tensor(labels, {dtype = 'i64'})})\n"
    "local model = kiln.nn.Sequential {kiln.nn.Linear(2, 8), kiln.nn.ReLU(), kiln.nn.Linear(8, 2)}\n"
    "local losses = {}\n"
    "kiln.fit {model = model, optimizer = kiln.optim.Adam(model:parameters(), {lr = 0.05}),\n"
    "          train = kiln.data.loader(source, {batch_size = 16, shuffle = true, seed = 1}),\n"
    "          epochs = 30, progress = 'quiet',\n"
    "          on_step = function(m) losses[#losses + 1] = m.loss end}\n"
    "assert(losses[#losses] < 0.5 * losses[1], 'the loss did not fall: ' .. losses[1] .. ' -> ' .. losses[#losses])\n"
    "print(string.format('Lua: %d steps, loss %.4f -> %.4f', #losses, losses[1], losses[#losses]))\n";

#endif /* KILN_EXAMPLE_LUA_TRAINING_H */
