-- kiln.dist in a job of 2 ranks (run by `kiln launch --nproc-per-node 2`):
-- every collective on the default group and on a group of its own,
-- blocking and asynchronous, against what the ranks' values make.
local kiln = require("kiln")
local dir = arg[0]:match("^(.*)/dist/[^/]*$")
package.path = dir .. "/?.lua;" .. package.path
local expect = require("expect")
local dist = kiln.dist

assert(dist.in_job(), "RANK and WORLD_SIZE are set by kiln launch")
local rank, world = dist.rank(), dist.world_size()
assert(world == 2, "2 ranks, got " .. world)
assert(rank == tonumber(os.getenv("RANK")))
local other = 1 - rank

-- The default group: sum of (rank + 1) * {1, 2, 3} over ranks 0 and 1.
local t = kiln.tensor({1, 2, 3}) * (rank + 1)
dist.all_reduce(t)
expect.tensor(t, {3, 6, 9}, 0, "all_reduce sum")
local m = kiln.tensor({rank, 10 - rank})
dist.all_reduce(m, "max")
expect.tensor(m, {1, 10}, 0, "all_reduce max")
local mean = kiln.tensor({rank * 2.0})
dist.all_reduce(mean, "mean")
expect.tensor(mean, {1}, 0, "all_reduce mean")

-- A group of its own, with a short timeout.
local g = dist.group{timeout = 30, name = "lua-test"}
assert(g:rank() == rank and g:world_size() == 2 and g:backend() == "gloo")
local b = kiln.tensor({rank, rank, rank}, {dtype = "i64"})
g:broadcast(b, 1)
expect.tensor(b, {1, 1, 1}, 0, "broadcast from rank 1")
local gathered = kiln.zeros({4})
g:all_gather(kiln.tensor({rank, rank + 10}), gathered)
expect.tensor(gathered, {0, 10, 1, 11}, 0, "all_gather")
local part = kiln.zeros({2})
g:reduce_scatter(kiln.tensor({1, 2, 3, 4}) * (rank + 1), part, "sum")
expect.tensor(part, rank == 0 and {3, 6} or {9, 12}, 0, "reduce_scatter")

-- Point to point both ways, started before either is waited for.
local incoming = kiln.zeros({2})
local r = g:recv(incoming, other, 5, {async = true})
local s = g:send(kiln.tensor({rank, rank}) + 100, other, 5, {async = true})
s:wait()
r:wait()
assert(r:done())
expect.tensor(incoming, {100 + other, 100 + other}, 0, "send/recv")

-- Asynchronous collectives overlap; each is waited for on its own.
local x, y = kiln.tensor({rank + 1.0}), kiln.tensor({rank + 1.0})
local wx = g:all_reduce(x, "sum", {async = true})
local wy = g:all_reduce(y, "min", {async = true})
wy:wait()
wx:wait()
expect.tensor(x, {3}, 0, "async sum")
expect.tensor(y, {1}, 0, "async min")
g:barrier()

-- Mistakes are errors that name what was wrong.
expect.error(function() dist.all_reduce(kiln.tensor({1}, {dtype = "i32"}), "mean") end, "only floating dtypes average")
expect.error(function() g:send(kiln.tensor({1}), rank, 0) end, "is not another rank of the group")
expect.error(function() dist.all_reduce(kiln.tensor({1}), "product") end, "invalid option 'product'")
print(string.format("rank %d: kiln.dist collectives passed", rank))
